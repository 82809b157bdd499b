// loadgen/openai_stream.cpp: OpenAI stream chunks -> RequestRecord (see openai_stream.h).
#include "loadgen/openai_stream.h"

#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"

namespace folio::loadgen {

namespace {

using nlohmann::json;

// The generated text of a completions or chat chunk ("" when it has none).
std::string_view chunk_text(const json& j) {
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return {};
  const json& c = choices->front();
  if (const auto t = c.find("text"); t != c.end() && t->is_string())
    return t->get_ref<const std::string&>();
  if (const auto d = c.find("delta"); d != c.end() && d->is_object()) {
    if (const auto t = d->find("content"); t != d->end() && t->is_string())
      return t->get_ref<const std::string&>();
  }
  return {};
}

std::int64_t count_field(const json& usage, const char* name) {
  const auto f = usage.find(name);
  return f != usage.end() && f->is_number_integer() ? f->get<std::int64_t>() : -1;
}

}  // namespace

bool OpenAiStreamReader::on_event(std::string_view data, double t) {
  if (data == "[DONE]") {
    done_ = true;
    return true;
  }
  const json j = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw Error("malformed stream event: " + std::string(data.substr(0, 200)));
  if (const auto e = j.find("error"); e != j.end()) {
    const std::string msg = e->is_object() && e->contains("message") && (*e)["message"].is_string()
                                ? (*e)["message"].get<std::string>()
                                : e->dump();
    throw Error("error event in stream: " + msg);
  }
  if (!chunk_text(j).empty()) {
    r_.chunk_times.push_back(t);
    ++chunks_;
  }
  if (const auto u = j.find("usage"); u != j.end() && u->is_object()) {
    usage_prompt_ = count_field(*u, "prompt_tokens");
    usage_completion_ = count_field(*u, "completion_tokens");
  }
  return false;
}

void OpenAiStreamReader::finish() {
  r_.usage_reported = usage_completion_ >= 0;
  r_.output_tokens = r_.usage_reported ? usage_completion_ : chunks_;
  if (usage_prompt_ >= 0) r_.prompt_tokens = usage_prompt_;
}

}  // namespace folio::loadgen
