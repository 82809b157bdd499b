// server/tool_call_schema.cpp: the forced tool-call schema.
#include "server/tool_call_schema.h"

#include "base/error.h"

namespace folio::server {

using nlohmann::ordered_json;

nlohmann::ordered_json tool_call_schema(const ordered_json& tools, ToolChoice choice,
                                        const std::string& forced_name, bool parallel) {
  FOLIO_CHECK(choice == ToolChoice::kRequired || choice == ToolChoice::kNamed);
  ordered_json variants = ordered_json::array();
  for (const auto& t : tools) {
    const ordered_json& fn = t["function"];
    const std::string name = fn["name"].get<std::string>();
    if (choice == ToolChoice::kNamed && name != forced_name) continue;
    // No `parameters`: OpenAI treats the function as taking an empty object,
    // so any object is accepted.
    const ordered_json params =
        fn.contains("parameters") ? fn["parameters"] : ordered_json{{"type", "object"}};
    variants.push_back({{"type", "object"},
                        {"properties", {{"name", {{"const", name}}}, {"arguments", params}}},
                        {"required", {"name", "arguments"}},
                        {"additionalProperties", false}});
  }
  FOLIO_CHECK(!variants.empty());
  ordered_json items = variants.size() == 1 ? variants[0] : ordered_json{{"anyOf", variants}};
  ordered_json calls = {{"type", "array"}, {"items", std::move(items)}, {"minItems", 1}};
  // A named function is called exactly once, as vLLM does (its guided
  // output there is that one call's arguments); `required` allows several
  // unless parallel_tool_calls is false.
  if (!parallel || choice == ToolChoice::kNamed) calls["maxItems"] = 1;
  return {{"type", "object"},
          {"properties", {{"tool_calls", std::move(calls)}}},
          {"required", {"tool_calls"}},
          {"additionalProperties", false}};
}

}  // namespace folio::server
