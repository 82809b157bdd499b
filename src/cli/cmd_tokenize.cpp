// `folio tokenize` / `folio detokenize`: text <-> token ids through a model's
// vocabulary (works on vocab-only GGUF files; no weights are touched).
//
//   folio tokenize -m MODEL [--add-special] [--parse-special] < text   -> "id id id\n"
//   folio detokenize -m MODEL [--skip-special] < "id id id"            -> text bytes
//
// tokenize reads ALL of stdin as raw bytes (nothing stripped, any bytes).
// --per-line encodes each '\n'-terminated line on its own (newline dropped) and
// prints one line of ids per input line; --timing reports load and encode time
// on stderr (used by bench/tokenizer_bench.py).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/model_file.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace folio::cli {

namespace {

std::string read_all_stdin() {
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, stdin);
    data.append(buf, n);
    if (n < sizeof buf) {
      if (std::ferror(stdin)) throw Error("cannot read standard input");
      return data;
    }
  }
}

void write_all(std::string_view s) {
  if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size()) throw Error("cannot write output");
}

struct TokenizeArgs {
  std::string model;
  bool add_special = false;
  bool parse_special = false;
  bool per_line = false;
  bool timing = false;
};

void append_ids(const std::vector<TokenId>& ids, std::string& out) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out.push_back(' ');
    out += std::to_string(ids[i]);
  }
  out.push_back('\n');
}

int run_tokenize(const TokenizeArgs& a) {
  Stopwatch load_clock;
  const auto file = open_model_file(resolve_model_path(a.model));
  const auto tok = tokenizer::Tokenizer::from_gguf(file);
  const double load_s = load_clock.seconds();
  const std::string text = read_all_stdin();

  Stopwatch encode_clock;
  tokenizer::Tokenizer::Session session(tok);
  const tokenizer::EncodeOptions opt{a.add_special, a.parse_special};
  std::string out;
  std::size_t n_tokens = 0;
  std::vector<TokenId> ids;
  if (a.per_line) {
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size();
      ids.clear();
      session.encode(std::string_view(text).substr(pos, nl - pos), opt, ids);
      n_tokens += ids.size();
      append_ids(ids, out);
      pos = nl + 1;
    }
  } else {
    session.encode(text, opt, ids);
    n_tokens = ids.size();
    append_ids(ids, out);
  }
  const double encode_s = encode_clock.seconds();
  write_all(out);
  if (a.timing) {
    std::fprintf(stderr,
                 "timing: load_s=%.6f encode_s=%.6f bytes=%zu tokens=%zu tokens_per_s=%.0f "
                 "mb_per_s=%.3f\n",
                 load_s, encode_s, text.size(), n_tokens, n_tokens / encode_s,
                 text.size() / 1e6 / encode_s);
  }
  return 0;
}

int run_detokenize(const std::string& model, bool skip_special) {
  const auto file = open_model_file(resolve_model_path(model));
  const auto tok = tokenizer::Tokenizer::from_gguf(file);
  const std::string input = read_all_stdin();
  std::vector<TokenId> ids;
  std::size_t pos = 0;
  while (pos < input.size()) {
    const std::size_t start = input.find_first_not_of(" \t\r\n\v\f", pos);
    if (start == std::string::npos) break;
    std::size_t end = input.find_first_of(" \t\r\n\v\f", start);
    if (end == std::string::npos) end = input.size();
    const std::string word = input.substr(start, end - start);
    errno = 0;
    char* stop = nullptr;
    const long long v = std::strtoll(word.c_str(), &stop, 10);
    if (stop != word.c_str() + word.size() || errno != 0 || v < 0 ||
        v >= static_cast<long long>(tok.vocab().size())) {
      throw Error("invalid token id '" + word + "' (input token " + std::to_string(ids.size() + 1) +
                  "): ids must be integers in 0.." + std::to_string(tok.vocab().size() - 1));
    }
    ids.push_back(static_cast<TokenId>(v));
    pos = end;
  }
  tokenizer::DecodeOptions opt;
  opt.render_special = !skip_special;
  write_all(tok.decode(ids, opt));
  return 0;
}

void add_model_option(CLI::App* sub, std::string& model) {
  sub->add_option("-m,--model", model,
                  "GGUF file (a vocab-only file is enough; default: the "
                  "default model)");
}

}  // namespace

Command register_tokenize(CLI::App& app) {
  auto* sub = app.add_subcommand("tokenize", "Print the token ids of standard input");
  auto a = std::make_shared<TokenizeArgs>();
  add_model_option(sub, a->model);
  sub->add_flag("--add-special", a->add_special, "Add BOS/EOS as the model's metadata asks");
  sub->add_flag("--parse-special", a->parse_special,
                "Treat control-token text (e.g. <|im_start|>) in the input as those tokens");
  sub->add_flag("--per-line", a->per_line,
                "Encode each line on its own (newline dropped); one line of ids per line");
  sub->add_flag("--timing", a->timing, "Report load and encode time on stderr");
  return {sub, [a]() { return run_tokenize(*a); }};
}

Command register_detokenize(CLI::App& app) {
  auto* sub = app.add_subcommand("detokenize", "Write the text of token ids read from stdin");
  auto model = std::make_shared<std::string>();
  auto skip = std::make_shared<bool>(false);
  add_model_option(sub, *model);
  sub->add_flag("--skip-special", *skip, "Leave out control tokens (BOS, EOS, ...)");
  return {sub, [model, skip]() { return run_detokenize(*model, *skip); }};
}

}  // namespace folio::cli
