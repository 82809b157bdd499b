// Renders every case of tests/data/chat/goldens.json (made by
// tools/gen_chat_goldens.py with transformers' apply_chat_template renderer,
// i.e. jinja2) and requires byte-identical output: SmolLM2's and Gemma 3's
// own templates (Gemma's: folio's built-in one) over several conversations,
// plus feature templates covering
// each supported Jinja2 construct.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "base/error.h"
#include "chat/builtin_templates.h"
#include "chat/chat_template.h"

namespace folio::chat {
namespace {

using Json = nlohmann::ordered_json;

Json load_goldens() {
  const std::string path = std::string(FOLIO_SOURCE_DIR) + "/tests/data/chat/goldens.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing " + path + ": run tools/gen_chat_goldens.py");
  return Json::parse(in);
}

TEST(ChatTemplateGolden, MatchesTransformers) {
  const Json g = load_goldens();
  int checked = 0;
  int templates_seen = 0;
  for (const auto& [name, source] : g["templates"].items()) {
    EXPECT_NO_THROW(ChatTemplate{source.get<std::string>()}) << name;
    ++templates_seen;
  }
  for (const Json& c : g["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const ChatTemplate tmpl(g["templates"][c["template"].get<std::string>()].get<std::string>());
    RenderOptions opts;
    opts.add_generation_prompt = c["add_generation_prompt"];
    opts.bos_token = c["bos_token"];
    opts.eos_token = c["eos_token"];
    opts.extra = c["extra"];
    if (c.contains("error")) {
      try {
        tmpl.render(c["messages"], opts);
        ADD_FAILURE() << "rendered, but the reference raised";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(c["error"].get<std::string>()), std::string::npos)
            << e.what();
      }
    } else {
      std::string got;
      try {
        got = tmpl.render(c["messages"], opts);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      EXPECT_EQ(got, c["expected"].get<std::string>());
    }
    ++checked;
  }
  EXPECT_GE(checked, 25);
  EXPECT_GE(templates_seen, 10);
}

// The template compiled into folio is the file the goldens rendered, and it
// is what a Gemma GGUF without tokenizer.chat_template gets; a file's own
// template always wins, and other architectures get none.
TEST(ChatTemplateGolden, BuiltinGemmaTemplateIsTheRenderedOne) {
  const Json g = load_goldens();
  const auto b = builtin_template("gemma3");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(std::string(b->source), g["templates"]["gemma3_builtin"].get<std::string>());
  EXPECT_EQ(model_chat_template(std::nullopt, "gemma3"), std::string(b->source));
  EXPECT_EQ(model_chat_template("own {{ x }}", "gemma3"), "own {{ x }}");
  EXPECT_EQ(model_chat_template(std::nullopt, "llama"), std::nullopt);
}

}  // namespace
}  // namespace folio::chat
