// `folio grammar`: print the GBNF grammar a constraint compiles to (the text
// the server would compile for the same response_format / guided_* field).
//
//   folio grammar --json-schema FILE | --json-object | --regex RE
//                 | --choice S [--choice S ...] | --gbnf FILE   [--print-gbnf]
//   folio grammar CONSTRAINT -m MODEL --masks < walks
//   folio grammar -m MODEL --vocab
//
// --masks runs the matcher over the model's vocabulary: stdin holds walks,
// one line of token ids each; for every step of a walk it prints one JSON
// line {"walk", "step", "allowed": [ids], "can_end"} (the mask before the
// step's token), then accepts the token (a token the mask does not allow
// ends the walk with {"walk", "step", "refused": id}); after the last token
// the final mask is printed. --vocab prints {"id", "hex", "text"} per token:
// the bytes the grammar matches (tests/python/test_grammar_xgrammar.py
// builds xgrammar's vocabulary from them, so both engines see the same).
//
// Errors (a schema or regex that cannot be expressed) print the message, with
// the offending JSON pointer or regex offset, and exit with status 2.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/model_file.h"
#include "cli/text_file.h"
#include "grammar/compiled_grammar.h"
#include "grammar/constraint.h"
#include "grammar/gbnf_parser.h"
#include "grammar/matcher.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace folio::cli {

namespace {

struct GrammarArgs {
  std::string json_schema_file;
  bool json_object = false;
  std::string regex;
  std::vector<std::string> choices;
  std::string gbnf_file;
  bool print_gbnf = true;
  std::string model;  // --masks / --vocab
  bool masks = false;
  bool vocab = false;
};

std::string hex_of(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

void print_vocab(const grammar::TokenVocab& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    const nlohmann::json j = {{"id", id}, {"hex", hex_of(v.bytes(id))}, {"text", v.is_text(id)}};
    std::printf("%s\n", j.dump().c_str());
  }
}

void print_mask(grammar::GrammarMatcher& m, std::size_t walk, std::size_t step) {
  std::vector<std::uint64_t> bits(m.mask_words());
  m.fill_mask(bits);
  nlohmann::json allowed = nlohmann::json::array();
  for (std::size_t w = 0; w < bits.size(); ++w) {
    for (std::uint64_t x = bits[w]; x != 0; x &= x - 1) {
      allowed.push_back(w * 64 + static_cast<std::size_t>(__builtin_ctzll(x)));
    }
  }
  const nlohmann::json j = {
      {"walk", walk}, {"step", step}, {"allowed", allowed}, {"can_end", m.can_end()}};
  std::printf("%s\n", j.dump().c_str());
}

// One walk per stdin line of token ids; the mask before every step.
void run_masks(const std::shared_ptr<const grammar::CompiledGrammar>& cg,
               const std::vector<TokenId>& stops) {
  std::string line;
  for (std::size_t walk = 0; std::getline(std::cin, line); ++walk) {
    std::istringstream in(line);
    std::vector<TokenId> ids;
    for (long long id = 0; in >> id;) {
      if (id < 0 || static_cast<std::size_t>(id) >= cg->vocab().size()) {
        throw Error("--masks: token id " + std::to_string(id) + " is outside the vocabulary");
      }
      ids.push_back(static_cast<TokenId>(id));
    }
    grammar::GrammarMatcher m(cg, stops);
    std::size_t step = 0;
    for (; step < ids.size(); ++step) {
      print_mask(m, walk, step);
      if (!m.accept_token(ids[step])) {
        std::printf("%s\n", nlohmann::json({{"walk", walk}, {"step", step}, {"refused", ids[step]}})
                                .dump()
                                .c_str());
        break;
      }
    }
    if (step == ids.size()) print_mask(m, walk, step);
    std::fflush(stdout);
  }
}

grammar::ConstraintSpec spec_from(const GrammarArgs& a, const CLI::App& sub) {
  grammar::ConstraintSpec spec;
  if (sub.count("--json-schema") > 0) {
    spec.kind = grammar::ConstraintKind::kJsonSchema;
    spec.text = read_text_file(a.json_schema_file);
  } else if (sub.count("--regex") > 0) {
    spec.kind = grammar::ConstraintKind::kRegex;
    spec.text = a.regex;
  } else if (sub.count("--choice") > 0) {
    spec.kind = grammar::ConstraintKind::kChoice;
    spec.choices = a.choices;
  } else if (sub.count("--gbnf") > 0) {
    spec.kind = grammar::ConstraintKind::kGbnf;
    spec.text = read_text_file(a.gbnf_file);
  } else {
    spec.kind = grammar::ConstraintKind::kJsonObject;
  }
  return spec;
}

int run_grammar(const GrammarArgs& a, const CLI::App& sub) {
  try {
    if (a.masks || a.vocab) {
      const auto file = open_model_file(resolve_model_path(a.model));
      const auto tok = tokenizer::Tokenizer::from_gguf(file);
      const auto vocab = grammar::TokenVocab::from_tokenizer(tok);
      if (a.vocab) {
        print_vocab(*vocab);
        return 0;
      }
      std::vector<TokenId> stops;
      if (const auto eos = tok.vocab().special().eos) stops.push_back(*eos);
      const auto cg = std::make_shared<const grammar::CompiledGrammar>(
          grammar::parse_gbnf(grammar::to_gbnf(spec_from(a, sub))), vocab);
      run_masks(cg, stops);
      return 0;
    }
    const std::string gbnf = grammar::to_gbnf(spec_from(a, sub));
    if (a.print_gbnf) std::fwrite(gbnf.data(), 1, gbnf.size(), stdout);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "folio grammar: error: %s\n", e.what());
    return 2;
  }
}

}  // namespace

Command register_grammar(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "grammar", "Print the GBNF grammar of a constraint (JSON Schema, regex, choice, ...)");
  auto a = std::make_shared<GrammarArgs>();
  auto* g = sub->add_option_group("constraint", "what the output must match (one of)");
  g->add_option("--json-schema", a->json_schema_file, "JSON Schema file")->check(CLI::ExistingFile);
  g->add_flag("--json-object", a->json_object, "Any JSON object (the default)");
  g->add_option("--regex", a->regex, "Regular expression the whole output matches");
  g->add_option("--choice", a->choices, "The output is exactly one of these (repeatable)");
  g->add_option("--gbnf", a->gbnf_file, "GBNF grammar file (root rule `root`), passed through")
      ->check(CLI::ExistingFile);
  g->require_option(0, 1);
  sub->add_flag("--print-gbnf", a->print_gbnf, "Print the GBNF text (default)");
  sub->add_option("-m,--model", a->model,
                  "GGUF file or HF checkpoint directory for --masks / --vocab (default: the "
                  "default model)");
  sub->add_flag("--masks", a->masks,
                "Read walks (lines of token ids) from stdin; print the allowed tokens per step");
  sub->add_flag("--vocab", a->vocab, "Print the bytes of every token as the grammar sees them");
  return {sub, [a, sub]() { return run_grammar(*a, *sub); }};
}

}  // namespace folio::cli
