// python/src/model_session.cpp: loading, tokenizing, chat rendering and
// request admission for the Python API.
#include "model_session.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/timer.h"
#include "cli/model_template.h"
#include "grammar/constraint.h"
#include "server/api_error.h"
#include "server/chat_messages.h"

namespace folio::python {

namespace {

// ApiError (the server's 400s) as the folio::Error the bindings translate.
template <class F>
auto as_folio_error(F&& f) {
  try {
    return f();
  } catch (const server::ApiError& e) {
    throw Error(e.param() ? *e.param() + ": " + e.what() : std::string(e.what()));
  }
}

grammar::ConstraintSpec constraint_spec(const Request& r) {
  using grammar::ConstraintKind;
  const std::string& k = r.constraint_kind;
  if (k == "json") return {ConstraintKind::kJsonSchema, r.constraint_text, {}};
  if (k == "json_object") return {ConstraintKind::kJsonObject, "", {}};
  if (k == "regex") return {ConstraintKind::kRegex, r.constraint_text, {}};
  if (k == "choice") return {ConstraintKind::kChoice, "", r.constraint_choices};
  if (k == "grammar") return {ConstraintKind::kGbnf, r.constraint_text, {}};
  throw Error("unknown constraint kind '" + k + "'");
}

}  // namespace

ModelSession::ModelSession(const std::string& model, const cli::EngineFlags& flags)
    : model_(cli::load_engine_model(model, flags)),
      stack_(cli::make_engine(*model_, flags)),
      context_(server::make_model_context(model_->tok, {}, model,
                                          stack_->core.config().max_model_len,
                                          cli::model_chat_template(*model_->file))) {}

std::string ModelSession::summary() const {
  return cli::engine_summary(*stack_);
}

std::vector<TokenId> ModelSession::encode(const std::string& text, bool add_special,
                                          bool parse_special) const {
  return model_->tok.encode(text, {.add_special = add_special, .parse_special = parse_special});
}

std::string ModelSession::decode(const std::vector<TokenId>& ids, bool skip_special_tokens) const {
  return model_->tok.decode(ids, {.render_special = !skip_special_tokens});
}

std::string ModelSession::render_chat(const std::string& messages_json, bool add_generation_prompt,
                                      const std::string& chat_template) const {
  const nlohmann::json messages = nlohmann::json::parse(messages_json);
  return as_folio_error([&] {
    if (chat_template.empty()) {
      if (!context_.chat_template) {
        throw Error(
            "this model has no chat template (tokenizer.chat_template); pass chat_template=");
      }
      return server::render_chat(messages, context_, add_generation_prompt);
    }
    const server::ModelContext custom = server::make_model_context(
        model_->tok, {}, context_.root, context_.max_model_len, chat_template);
    return server::render_chat(messages, custom, add_generation_prompt);
  });
}

engine::AdmittedRequest ModelSession::admit(const Request& r, engine::RequestId id) {
  engine::EngineRequest e;
  e.id = id;
  e.prompt = r.prompt;
  e.params = r.params;
  e.n = r.n;
  e.priority = r.priority;
  if (!r.constraint_kind.empty()) e.grammar = context_.grammars->get(constraint_spec(r));
  return stack_->core.limits().admit(std::move(e), monotonic_seconds());
}

std::unique_ptr<engine::OutputProcessor> ModelSession::output_processor(const Request& r) const {
  return std::make_unique<engine::OutputProcessor>(
      model_->tok, r.params, std::max(r.n, 1),
      engine::OutputOptions{.skip_special_tokens = r.skip_special_tokens});
}

}  // namespace folio::python
