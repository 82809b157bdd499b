// fuzz/grammar_fuzz.cpp: libFuzzer target for the output constraints
// (src/grammar/): GBNF text, JSON Schema text, regular expressions and
// choice lists, each compiled and, when it compiles, matched for a few
// steps against a small vocabulary (single bytes plus multi-byte tokens):
// masks, token acceptance and rollback. Any input must compile or fail
// with folio::Error; ASan and UBSan turn memory errors into findings, and
// the size limits must keep every input fast.
//
// The first byte picks the kind (GBNF, schema, regex, choice list split at
// newlines); the rest is the text.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "grammar/compiled_grammar.h"
#include "grammar/constraint.h"
#include "grammar/gbnf_parser.h"
#include "grammar/matcher.h"

namespace {

std::shared_ptr<const folio::grammar::TokenVocab> vocab() {
  static const auto v = [] {
    std::vector<std::string> bytes = {""};  // id 0: the stop token
    std::vector<bool> text = {false};
    for (int b = 0; b < 256; ++b) {
      bytes.emplace_back(1, static_cast<char>(b));
      text.push_back(true);
    }
    for (const char* s : {"{\"", "\":", "\",", "\"}", "}]", "[{", "  ", "true", "null", "12",
                          "\xC3\xA9", "\xE2\x82", "\xAC\"", "ab", "a\"", "\\n", "\\u00", ", "}) {
      bytes.emplace_back(s);
      text.push_back(true);
    }
    return std::make_shared<const folio::grammar::TokenVocab>(std::move(bytes), std::move(text));
  }();
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  using folio::grammar::ConstraintKind;
  folio::grammar::ConstraintSpec spec;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      spec = {ConstraintKind::kGbnf, text, {}};
      break;
    case 1:
      spec = {ConstraintKind::kJsonSchema, text, {}};
      break;
    case 2:
      spec = {ConstraintKind::kRegex, text, {}};
      break;
    default: {
      spec.kind = ConstraintKind::kChoice;
      std::size_t start = 0;
      for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == '\n') {
          spec.choices.push_back(text.substr(start, i - start));
          start = i + 1;
        }
      }
    }
  }
  try {
    auto g = std::make_shared<const folio::grammar::CompiledGrammar>(
        folio::grammar::parse_gbnf(folio::grammar::to_gbnf(spec)), vocab());
    folio::grammar::GrammarMatcher m(g, {0});
    std::vector<std::uint64_t> mask(m.mask_words());
    std::size_t pick = size;
    for (int step = 0; step < 12 && !m.terminated(); ++step) {
      m.fill_mask(mask);
      std::vector<folio::TokenId> allowed;
      for (std::size_t id = 0; id < g->vocab().size(); ++id) {
        if ((mask[id / 64] >> (id % 64)) & 1) allowed.push_back(static_cast<folio::TokenId>(id));
      }
      if (allowed.empty()) break;
      pick = pick * 31 + data[static_cast<std::size_t>(step) % size];
      if (!m.accept_token(allowed[pick % allowed.size()])) __builtin_trap();  // mask lied
    }
    if (m.num_tokens() > 0) m.rollback(m.num_tokens() / 2);
  } catch (const folio::Error&) {
  }
  return 0;
}
