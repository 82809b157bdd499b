// server/model_context.cpp: building the served model's description.
#include "server/model_context.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace folio::server {

bool ModelContext::serves(std::string_view model) const {
  for (const auto& n : names) {
    if (n == model) return true;
  }
  return false;
}

std::optional<std::string> chat_template_source(const std::string& flag,
                                                std::optional<std::string_view> from_model) {
  if (flag.empty()) {
    if (!from_model) return std::nullopt;
    return std::string(*from_model);
  }
  std::error_code ec;
  if (flag.find('\n') == std::string::npos && flag.size() < 4096 &&
      std::filesystem::is_regular_file(flag, ec)) {
    std::ifstream in(flag, std::ios::binary);
    if (!in) throw Error("cannot read --chat-template file " + flag);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  return flag;
}

ModelContext make_model_context(const tokenizer::Tokenizer& tok, std::vector<std::string> served,
                                const std::string& model_path, std::int32_t max_model_len,
                                std::optional<std::string> template_src) {
  ModelContext ctx;
  ctx.tokenizer = &tok;
  std::erase_if(served, [](const std::string& s) { return s.empty(); });
  if (served.empty()) {
    served.push_back(std::filesystem::path(model_path).filename().string());
    if (served.back().empty()) served.back() = "folio";
  }
  ctx.names = std::move(served);
  ctx.root = model_path;
  ctx.max_model_len = max_model_len;
  ctx.vocab_size = static_cast<std::int32_t>(tok.vocab().size());
  const auto& sp = tok.vocab().special();
  if (sp.bos) ctx.bos_token = tok.vocab().text(*sp.bos);
  if (sp.eos) ctx.eos_token = tok.vocab().text(*sp.eos);
  if (template_src) ctx.chat_template.emplace(std::move(*template_src));
  ctx.grammars = std::make_shared<grammar::GrammarCache>(grammar::TokenVocab::from_tokenizer(tok));
  return ctx;
}

}  // namespace folio::server
