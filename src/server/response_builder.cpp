// server/response_builder.cpp: building OpenAI JSON bodies and chunks.
#include "server/response_builder.h"

#include "tokenizer/utf8.h"

namespace folio::server {
namespace {

using nlohmann::json;

const char* object_name(ApiKind k, bool chunk) {
  if (k == ApiKind::kChat) return chunk ? "chat.completion.chunk" : "chat.completion";
  return "text_completion";
}

json head(const ResponseMeta& m, bool chunk) {
  json j = {{"id", m.id},
            {"object", object_name(m.kind, chunk)},
            {"created", m.created},
            {"model", m.model}};
  return j;
}

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

json chat_logprobs(const std::vector<const TextDelta*>& pieces) {
  json content = json::array();
  for (const TextDelta* d : pieces) {
    for (const engine::LogprobText& lp : d->logprobs) {
      json top = json::array();
      for (const auto& alt : lp.top) {
        top.push_back({{"token", tokenizer::utf8::to_valid(alt.piece)},
                       {"logprob", alt.logprob},
                       {"bytes", bytes_of(alt.piece)}});
      }
      content.push_back({{"token", tokenizer::utf8::to_valid(lp.chosen.piece)},
                         {"logprob", lp.chosen.logprob},
                         {"bytes", bytes_of(lp.chosen.piece)},
                         {"top_logprobs", top}});
    }
  }
  return {{"content", content}};
}

json completion_logprobs(const std::vector<const TextDelta*>& pieces) {
  json tokens = json::array(), token_lps = json::array(), tops = json::array(),
       offsets = json::array();
  for (const TextDelta* d : pieces) {
    for (std::size_t i = 0; i < d->logprobs.size(); ++i) {
      const auto& lp = d->logprobs[i];
      tokens.push_back(tokenizer::utf8::to_valid(lp.chosen.piece));
      token_lps.push_back(lp.chosen.logprob);
      json top = json::object();
      for (const auto& alt : lp.top) top[tokenizer::utf8::to_valid(alt.piece)] = alt.logprob;
      tops.push_back(top);
      offsets.push_back(i < d->text_offsets.size() ? d->text_offsets[i] : 0);
    }
  }
  return {{"tokens", tokens},
          {"token_logprobs", token_lps},
          {"top_logprobs", tops},
          {"text_offset", offsets}};
}

json finish_json(FinishReason r) {
  return r == FinishReason::kNone ? json(nullptr) : json(finish_reason_name(r));
}

json tool_calls_json(const std::vector<ToolCall>& calls, bool with_index) {
  json arr = json::array();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    json c = {{"id", calls[i].id},
              {"type", "function"},
              {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
    if (with_index) c["index"] = i;
    arr.push_back(std::move(c));
  }
  return arr;
}

json chat_message(const FinalChoice& c) {
  if (c.tool_calls.empty()) return {{"role", "assistant"}, {"content", c.text}};
  return {{"role", "assistant"},
          {"content", c.text.empty() ? json(nullptr) : json(c.text)},
          {"tool_calls", tool_calls_json(c.tool_calls, false)}};
}

}  // namespace

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"completion_tokens", u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json logprobs_json(ApiKind kind, const std::vector<const TextDelta*>& pieces, bool wanted) {
  if (!wanted) return nullptr;
  return kind == ApiKind::kChat ? chat_logprobs(pieces) : completion_logprobs(pieces);
}

std::string final_body(const ResponseMeta& m, const std::vector<FinalChoice>& choices,
                       const Usage& usage, bool logprobs) {
  json j = head(m, false);
  json arr = json::array();
  for (const auto& c : choices) {
    std::vector<const TextDelta*> ps;
    for (const auto& p : c.pieces) ps.push_back(&p);
    json lp = logprobs_json(m.kind, ps, logprobs);
    if (m.kind == ApiKind::kChat) {
      arr.push_back(
          {{"index", c.index},
           {"message", chat_message(c)},
           {"logprobs", lp},
           {"finish_reason", c.tool_calls.empty() ? finish_json(c.finish) : json("tool_calls")}});
    } else {
      arr.push_back({{"index", c.index},
                     {"text", c.text},
                     {"logprobs", lp},
                     {"finish_reason", finish_json(c.finish)},
                     {"stop_reason", nullptr}});
    }
  }
  j["choices"] = arr;
  j["usage"] = usage_json(usage);
  return dump(j);
}

std::string chat_role_chunk(const ResponseMeta& m, std::int32_t index) {
  json j = head(m, true);
  j["choices"] = json::array({{{"index", index},
                               {"delta", {{"role", "assistant"}, {"content", ""}}},
                               {"logprobs", nullptr},
                               {"finish_reason", nullptr}}});
  if (m.include_usage) j["usage"] = nullptr;
  return dump(j);
}

std::string delta_chunk(const ResponseMeta& m, std::int32_t index, const TextDelta& d,
                        bool logprobs) {
  json j = head(m, true);
  json lp = logprobs_json(m.kind, {&d}, logprobs);
  json choice;
  if (m.kind == ApiKind::kChat) {
    // The closing chunk of a choice has an empty delta, as OpenAI sends.
    json delta = json::object();
    if (!d.text.empty() || d.finish == FinishReason::kNone) delta["content"] = d.text;
    choice = {{"index", index},
              {"delta", delta},
              {"logprobs", lp},
              {"finish_reason", finish_json(d.finish)}};
  } else {
    choice = {{"index", index},
              {"text", d.text},
              {"logprobs", lp},
              {"finish_reason", finish_json(d.finish)},
              {"stop_reason", nullptr}};
  }
  j["choices"] = json::array({choice});
  if (m.include_usage) j["usage"] = nullptr;
  return dump(j);
}

std::string tool_calls_chunk(const ResponseMeta& m, std::int32_t index,
                             const std::vector<ToolCall>& calls) {
  json j = head(m, true);
  j["choices"] = json::array({{{"index", index},
                               {"delta", {{"tool_calls", tool_calls_json(calls, true)}}},
                               {"logprobs", nullptr},
                               {"finish_reason", nullptr}}});
  if (m.include_usage) j["usage"] = nullptr;
  return dump(j);
}

std::string finish_chunk(const ResponseMeta& m, std::int32_t index, const char* finish_reason) {
  json j = head(m, true);
  j["choices"] = json::array({{{"index", index},
                               {"delta", json::object()},
                               {"logprobs", nullptr},
                               {"finish_reason", finish_reason}}});
  if (m.include_usage) j["usage"] = nullptr;
  return dump(j);
}

std::string usage_chunk(const ResponseMeta& m, const Usage& usage) {
  json j = head(m, true);
  j["choices"] = json::array();
  j["usage"] = usage_json(usage);
  return dump(j);
}

}  // namespace folio::server
