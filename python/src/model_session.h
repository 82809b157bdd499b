// python/src/model_session.h: a loaded model and its engine, as the Python
// API holds them.
//
// Loading goes through the CLI's engine flags (cli/engine_flags.h), so
// `folio.LLM(model, max_num_seqs=...)` and `folio generate -m model
// --max-num-seqs ...` build the same engine. Chat rendering is the server's
// (server/chat_messages.h): the same message validation and template.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/engine_flags.h"
#include "engine/output_processor.h"
#include "request.h"
#include "server/model_context.h"

namespace folio::python {

class ModelSession {
 public:
  // Throws folio::Error naming the flag or the file.
  ModelSession(const std::string& model, const cli::EngineFlags& flags);

  engine::LLMEngine& core() { return stack_->core; }
  const engine::LLMEngine& core() const { return stack_->core; }
  const tokenizer::Tokenizer& tokenizer() const { return model_->tok; }
  const server::ModelContext& context() const { return context_; }
  const std::vector<TokenId>& eos() const { return model_->eos; }
  // One line describing the engine (cli::engine_summary), as the CLI prints it.
  std::string summary() const;

  // `parse_special`: control-token text ("<|im_start|>") becomes its token,
  // as for a rendered chat prompt.
  std::vector<TokenId> encode(const std::string& text, bool add_special, bool parse_special) const;
  std::string decode(const std::vector<TokenId>& ids, bool skip_special_tokens) const;
  // `messages_json`: an OpenAI messages array. `chat_template`: "" for the
  // model's own. Throws folio::Error (bad messages, no template).
  std::string render_chat(const std::string& messages_json, bool add_generation_prompt,
                          const std::string& chat_template) const;

  // The engine request for `r` (output constraint compiled and cached);
  // admitted against the engine's limits: throws folio::Error naming the
  // field or limit.
  engine::AdmittedRequest admit(const Request& r, engine::RequestId id);
  // The text side of `r` (folio's OutputProcessor).
  std::unique_ptr<engine::OutputProcessor> output_processor(const Request& r) const;

 private:
  std::unique_ptr<cli::EngineModel> model_;
  std::unique_ptr<cli::EngineStack> stack_;
  server::ModelContext context_;
};

}  // namespace folio::python
