// server/openai_request.cpp: parsing and validating completions / chat bodies.
#include "server/openai_request.h"

#include <algorithm>
#include <limits>

#include "base/error.h"
#include "base/timer.h"
#include "grammar/grammar_error.h"
#include "server/api_error.h"
#include "server/chat_messages.h"
#include "server/json_fields.h"
#include "server/structured_output.h"
#include "server/tool_call_schema.h"

namespace folio::server {
namespace {

constexpr std::int64_t kI32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::size_t kMaxPromptIds = 1u << 20;

// Fields shared by both endpoints that map onto SamplingParams.
void read_sampling(Fields& f, GenerationRequest& r, const ModelContext& model) {
  sampling::SamplingParams& p = r.params;
  const double big = 1e9;
  if (auto v = f.number("temperature", 0, big)) p.temperature = static_cast<float>(*v);
  if (auto v = f.number("top_p", -big, big)) p.top_p = static_cast<float>(*v);
  if (auto v = f.integer("top_k", -1, kI32Max)) p.top_k = static_cast<std::int32_t>(*v);
  if (auto v = f.number("min_p", -big, big)) p.min_p = static_cast<float>(*v);
  if (auto v = f.number("presence_penalty", -big, big)) p.presence_penalty = static_cast<float>(*v);
  if (auto v = f.number("frequency_penalty", -big, big))
    p.frequency_penalty = static_cast<float>(*v);
  if (auto v = f.number("repetition_penalty", -big, big))
    p.repetition_penalty = static_cast<float>(*v);
  if (auto v = f.integer("seed", std::numeric_limits<std::int64_t>::min(),
                         std::numeric_limits<std::int64_t>::max())) {
    p.seed = static_cast<std::uint64_t>(*v);
  }
  if (auto v = f.integer("min_tokens", 0, kI32Max)) p.min_tokens = static_cast<std::int32_t>(*v);
  if (auto v = f.boolean("ignore_eos")) p.ignore_eos = *v;
  if (auto v = f.boolean("include_stop_str_in_output")) p.include_stop_str_in_output = *v;
  if (auto v = f.boolean("skip_special_tokens")) r.skip_special_tokens = *v;
  p.stop = f.strings("stop", sampling::kMaxStopStrings);
  p.stop_token_ids = f.int_list("stop_token_ids", 0, model.vocab_size - 1, sampling::kMaxLogitBias);
  if (const auto* lb = f.get("logit_bias")) {
    if (!lb->is_object() || lb->size() > sampling::kMaxLogitBias) {
      bad_param("logit_bias", "an object mapping token ids to biases");
    }
    for (const auto& [key, val] : lb->items()) {
      std::size_t used = 0;
      long long id = -1;
      try {
        id = std::stoll(key, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != key.size() || id < 0 || id >= model.vocab_size) {
        bad_param("logit_bias",
                  "keyed by token ids in [0, " + std::to_string(model.vocab_size) + ")");
      }
      if (!val.is_number()) bad_param("logit_bias", "an object mapping token ids to numbers");
      p.logit_bias[static_cast<TokenId>(id)] = static_cast<float>(val.get<double>());
    }
  }
  if (auto v = f.integer("n", 1, kI32Max)) r.n = static_cast<std::int32_t>(*v);
  if (auto v = f.integer("priority", std::numeric_limits<std::int32_t>::min(), kI32Max)) {
    r.priority = static_cast<std::int32_t>(*v);
  }
  const auto window = f.integer("attention_window", 0, kI32Max);
  const auto sinks = f.integer("attention_sinks", 0, kI32Max);
  if (sinks && !window) bad_param("attention_sinks", "set together with attention_window");
  if (window) {
    const auto w = static_cast<std::int32_t>(*window);
    r.attention_window =
        AttentionWindow{w, sinks ? static_cast<std::int32_t>(*sinks) : default_sinks(w)};
  }
  if (auto v = f.boolean("stream")) r.stream = *v;
  if (const auto* so = f.get("stream_options")) {
    if (!so->is_object()) bad_param("stream_options", "an object");
    if (!r.stream)
      throw ApiError(400, "stream_options can only be set when stream is true", "stream_options");
    Fields sf(*so);
    if (auto v = sf.boolean("include_usage")) r.include_usage = *v;
    // Refused like any field folio does not implement (vLLM's
    // continuous_usage_stats among them), never ignored.
    if (const auto unknown = sf.unread(); !unknown.empty()) {
      const std::string name = "stream_options." + unknown.front();
      throw ApiError(400, "unsupported field '" + name + "': folio does not implement it", name);
    }
  }
  f.string("user");  // accepted, unused
}

// The caller resolved `model` to this model (or routed a virtual name to
// it): the response names the model that answers, by the name the client
// used when that is one of its names.
void check_model(Fields& f, GenerationRequest& r, const ModelContext& model) {
  r.model = model.name();
  if (auto m = f.string("model"); m && model.serves(*m)) r.model = *m;
}

// Limits (context length, the default max_tokens, the sampling ranges) are
// the engine's RequestLimits, applied when the job admits each prompt.
void finish(Fields& f, GenerationRequest& r, std::optional<std::int64_t> max_tokens,
            const ServerConfig& config) {
  if (r.n > config.max_n) bad_param("n", "at most " + std::to_string(config.max_n));
  if (max_tokens) r.params.max_tokens = static_cast<std::int32_t>(*max_tokens);
  if (r.want_logprobs) r.params.logprobs = r.top_logprobs;
  // A field folio does not implement is refused, never ignored: the client
  // would believe it got what it asked for. (null asks for nothing.)
  f.refuse_unread();
}

void add_prompt(GenerationRequest& r, std::vector<TokenId> ids, const ModelContext& model,
                const char* field) {
  if (ids.empty()) throw ApiError(400, std::string(field) + " must not be empty", field);
  r.prompt_texts.push_back(model.tokenizer->decode(ids));
  r.prompts.push_back(std::move(ids));
}

// `field`: "prompt" (completions) or "input" (embeddings), named in errors.
void read_prompts(const nlohmann::json* p, GenerationRequest& r, const ModelContext& model,
                  const ServerConfig& config, const char* field = "prompt") {
  if (!p) bad_param(field, "given (a string, a list of strings or token ids)");
  const tokenizer::EncodeOptions enc{.add_special = true, .parse_special = true};
  const auto text_prompt = [&](const nlohmann::json& s) {
    if (s.get_ref<const std::string&>().empty())
      throw ApiError(400, std::string(field) + " must not be empty", field);
    add_prompt(r, model.tokenizer->encode(s.get_ref<const std::string&>(), enc), model, field);
  };
  if (p->is_string()) return text_prompt(*p);
  if (!p->is_array() || p->empty())
    bad_param(field, "a non-empty string, list of strings or token ids");
  const auto& first = p->front();
  if (first.is_number()) {
    if (p->size() > kMaxPromptIds)
      bad_param(field, "at most " + std::to_string(kMaxPromptIds) + " tokens");
    return add_prompt(r, token_ids(*p, field, model.vocab_size), model, field);
  }
  if (p->size() > static_cast<std::size_t>(config.max_prompts)) {
    bad_param(field, "a list of at most " + std::to_string(config.max_prompts) + " prompts");
  }
  for (const auto& item : *p) {
    if (item.is_string() && first.is_string()) {
      text_prompt(item);
    } else if (item.is_array() && first.is_array() && item.size() <= kMaxPromptIds) {
      add_prompt(r, token_ids(item, field, model.vocab_size), model, field);
    } else {
      bad_param(field, "a string, a list of strings, a list of token ids or a list of such lists");
    }
  }
}

// The compiled grammar for `c` (cached per model); a constraint that does
// not compile is a 400 naming its field and the offending part.
std::shared_ptr<const grammar::CompiledGrammar> compile(const OutputConstraint& c,
                                                        const ModelContext& model) {
  FOLIO_CHECK(model.grammars != nullptr, "model context without a grammar cache");
  try {
    return model.grammars->get(c.spec);
  } catch (const grammar::GrammarError& e) {
    throw ApiError(400, "invalid " + c.field + ": " + e.what(), c.field);
  }
}

// The request's output constraint (response_format, structured_outputs,
// guided_*), compiled.
void read_constraint(Fields& f, GenerationRequest& r, const ModelContext& model,
                     const nlohmann::ordered_json* ordered) {
  if (const auto c = read_output_constraint(f, ordered)) r.grammar = compile(*c, model);
}

// How the answer is read for tool calls. tool_choice "required" or a named
// function constrains the output to tool_call_schema() (folio's generic
// form, whatever the template), which is then parsed as such.
void enable_tool_output(const ToolRequest& tools, GenerationRequest& r, const ModelContext& model) {
  if (!tools.active()) return;
  if (tools.forced()) {
    if (r.grammar) {
      throw ApiError(400,
                     "tool_choice 'required' or a named function cannot be combined with "
                     "response_format or another output constraint",
                     "tool_choice");
    }
    const nlohmann::ordered_json schema =
        tool_call_schema(tools.tools, tools.choice, tools.forced_name, tools.parallel);
    OutputConstraint c;
    c.spec.kind = grammar::ConstraintKind::kJsonSchema;
    c.spec.text = schema.dump();
    c.field = "tool_choice";
    r.grammar = compile(c, model);
    r.tool_output = ToolOutput{.format = ToolFormat::kGeneric, .names = tools.names()};
    return;
  }
  r.tool_output = ToolOutput{.format = tool_format(model), .names = tools.names()};
}

std::optional<std::int64_t> read_max_tokens(Fields& f) {
  auto a = f.integer("max_tokens", 1, kI32Max);
  auto b = f.integer("max_completion_tokens", 1, kI32Max);
  return b ? b : a;
}

}  // namespace

GenerationRequest parse_completion_request(const nlohmann::json& body, const ModelContext& model,
                                           const ServerConfig& config,
                                           const nlohmann::ordered_json* ordered) {
  GenerationRequest r;
  r.kind = ApiKind::kCompletion;
  Fields f(body);
  check_model(f, r, model);
  if (f.get("suffix")) throw ApiError(400, "suffix is not supported", "suffix");
  if (f.get("best_of")) {
    if (auto b = f.integer("best_of", 1, kI32Max); b && *b != 1) {
      throw ApiError(400, "best_of is not supported", "best_of");
    }
  }
  read_sampling(f, r, model);
  if (auto v = f.boolean("echo")) r.echo = *v;
  if (auto v = f.integer("logprobs", 0, kI32Max)) {
    if (*v > config.max_logprobs) {
      bad_param("logprobs", "at most " + std::to_string(config.max_logprobs) + " (--max-logprobs)");
    }
    r.want_logprobs = true;
    r.top_logprobs = static_cast<std::int32_t>(*v);
  }
  if (r.echo && r.want_logprobs) {
    throw ApiError(400, "echo together with logprobs (prompt logprobs) is not supported", "echo");
  }
  const auto max_tokens = read_max_tokens(f);
  read_constraint(f, r, model, ordered);
  // OpenAI's (and vLLM's) completions default: 16 tokens, not the whole context.
  r.default_max_tokens = kCompletionDefaultMaxTokens;
  Stopwatch sw;
  read_prompts(f.get("prompt"), r, model, config);
  r.tokenize_seconds = sw.seconds();
  finish(f, r, max_tokens, config);
  return r;
}

GenerationRequest parse_chat_request(const nlohmann::json& body, const ModelContext& model,
                                     const ServerConfig& config,
                                     const nlohmann::ordered_json* ordered) {
  GenerationRequest r;
  r.kind = ApiKind::kChat;
  Fields f(body);
  check_model(f, r, model);
  read_sampling(f, r, model);
  if (auto v = f.boolean("logprobs")) r.want_logprobs = *v;
  if (auto v = f.integer("top_logprobs", 0, kI32Max)) {
    if (!r.want_logprobs)
      throw ApiError(400, "top_logprobs requires logprobs to be true", "top_logprobs");
    if (*v > config.max_logprobs) {
      bad_param("top_logprobs",
                "at most " + std::to_string(config.max_logprobs) + " (--max-logprobs)");
    }
    r.top_logprobs = static_cast<std::int32_t>(*v);
  }
  const bool add_gen = f.boolean("add_generation_prompt").value_or(true);
  const auto max_tokens = read_max_tokens(f);
  ToolRequest tools = read_tool_request(f);
  // Parameter schemas as the client ordered them (their properties' order
  // is the order the model is asked to write them in).
  if (ordered != nullptr && tools.active()) {
    const auto sent = ordered->find("tools");
    for (std::size_t i = 0; sent != ordered->end() && i < tools.tools.size(); ++i) {
      const nlohmann::ordered_json& fn = (*sent)[i]["function"];
      if (const auto p = fn.find("parameters"); p != fn.end() && p->is_object()) {
        tools.tools[i]["function"]["parameters"] = *p;
      }
    }
  }
  read_constraint(f, r, model, ordered);
  enable_tool_output(tools, r, model);
  const nlohmann::json* messages = f.get("messages");
  if (!messages) bad_param("messages", "given");
  Stopwatch sw;
  const std::string text = render_chat(*messages, model, add_gen, tools);
  std::vector<TokenId> ids =
      model.tokenizer->encode(text, {.add_special = false, .parse_special = true});
  r.tokenize_seconds = sw.seconds();
  if (ids.empty()) throw ApiError(400, "the rendered conversation is empty", "messages");
  r.prompt_texts.push_back(text);
  r.prompts.push_back(std::move(ids));
  finish(f, r, max_tokens, config);
  return r;
}

EmbeddingRequest parse_embedding_request(const nlohmann::json& body, const ModelContext& model,
                                         const ServerConfig& config) {
  GenerationRequest r;
  Fields f(body);
  check_model(f, r, model);
  f.string("user");  // accepted, unused
  EmbeddingRequest e;
  if (auto fmt = f.string("encoding_format")) {
    if (*fmt != "float" && *fmt != "base64")
      bad_param("encoding_format", "\"float\" or \"base64\"");
    e.base64 = *fmt == "base64";
  }
  if (auto dims = f.integer("dimensions", 1, kI32Max); dims && *dims != model.hidden_size) {
    throw ApiError(400,
                   "dimensions = " + std::to_string(*dims) +
                       " is not supported: this model's "
                       "embeddings have " +
                       std::to_string(model.hidden_size) + " values",
                   "dimensions");
  }
  Stopwatch sw;
  const nlohmann::json* input = f.get("input");
  const nlohmann::json* messages = f.get("messages");
  const std::optional<bool> add_gen = f.boolean("add_generation_prompt");
  if ((input == nullptr) == (messages == nullptr))
    throw ApiError(400, "give either input or messages (a chat to embed), not both", "input");
  if (messages != nullptr) {
    const std::string text = render_chat(*messages, model, add_gen.value_or(false));
    std::vector<TokenId> ids =
        model.tokenizer->encode(text, {.add_special = false, .parse_special = true});
    if (ids.empty()) throw ApiError(400, "the rendered conversation is empty", "messages");
    r.prompts.push_back(std::move(ids));
  } else {
    if (add_gen) bad_param("add_generation_prompt", "given only with messages");
    read_prompts(input, r, model, config, "input");
  }
  e.tokenize_seconds = sw.seconds();
  finish(f, r, std::nullopt, config);  // refuses what it did not read
  e.model = std::move(r.model);
  e.prompts = std::move(r.prompts);
  return e;
}

}  // namespace folio::server
