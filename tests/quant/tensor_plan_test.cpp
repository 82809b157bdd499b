// llama-quantize's per-tensor type rules, on tensor lists shaped like the
// models we ship (SmolLM2: rows of 576, tied embeddings) and like a 7B Llama
// (rows of 4096, its own output), without a model.
#include "quant/tensor_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"

namespace folio::quant {
namespace {

using gguf::TensorType;

std::vector<TensorShape> llama_like(int n_layer, std::uint64_t hidden, std::uint64_t ffn,
                                    std::uint64_t kv, bool tied) {
  std::vector<TensorShape> t;
  t.push_back({"token_embd.weight", {hidden, 32000}, TensorType::F32});
  t.push_back({"output_norm.weight", {hidden}, TensorType::F32});
  if (!tied) t.push_back({"output.weight", {hidden, 32000}, TensorType::F32});
  for (int i = 0; i < n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    t.push_back({p + "attn_norm.weight", {hidden}, TensorType::F32});
    t.push_back({p + "attn_q.weight", {hidden, hidden}, TensorType::F32});
    t.push_back({p + "attn_k.weight", {hidden, kv}, TensorType::F32});
    t.push_back({p + "attn_v.weight", {hidden, kv}, TensorType::F32});
    t.push_back({p + "attn_output.weight", {hidden, hidden}, TensorType::F32});
    t.push_back({p + "ffn_norm.weight", {hidden}, TensorType::F32});
    t.push_back({p + "ffn_gate.weight", {hidden, ffn}, TensorType::F32});
    t.push_back({p + "ffn_up.weight", {hidden, ffn}, TensorType::F32});
    t.push_back({p + "ffn_down.weight", {ffn, hidden}, TensorType::F32});
  }
  return t;
}

TensorType type_of(const TensorPlan& plan, const std::vector<TensorShape>& ts,
                   const std::string& name) {
  const auto it = std::find_if(ts.begin(), ts.end(), [&](const auto& s) { return s.name == name; });
  EXPECT_NE(it, ts.end()) << name;
  return plan.choose(*it).type;
}

PlanOptions options(std::string_view recipe) {
  PlanOptions o;
  o.recipe = &find_recipe(recipe);
  return o;
}

TEST(TensorPlan, Q4KMOnALlama7BShape) {
  const auto ts = llama_like(32, 4096, 11008, 4096, false);
  const TensorPlan plan(options("Q4_K_M"), ts);
  EXPECT_EQ(type_of(plan, ts, "output.weight"), TensorType::Q6_K);
  EXPECT_EQ(type_of(plan, ts, "token_embd.weight"), TensorType::Q4_K);
  EXPECT_EQ(type_of(plan, ts, "output_norm.weight"), TensorType::F32);
  EXPECT_FALSE(plan.choose(ts[1]).quantized);
  // more bits: layers < 4, >= 28, and (i - 4) % 3 == 2 between.
  const std::vector<int> more = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  for (int i = 0; i < 32; ++i) {
    const bool m = std::find(more.begin(), more.end(), i) != more.end();
    const std::string p = "blk." + std::to_string(i) + ".";
    EXPECT_EQ(type_of(plan, ts, p + "attn_v.weight"), m ? TensorType::Q6_K : TensorType::Q4_K) << i;
    EXPECT_EQ(type_of(plan, ts, p + "ffn_down.weight"), m ? TensorType::Q6_K : TensorType::Q4_K)
        << i;
    EXPECT_EQ(type_of(plan, ts, p + "attn_q.weight"), TensorType::Q4_K) << i;
    EXPECT_EQ(type_of(plan, ts, p + "ffn_norm.weight"), TensorType::F32) << i;
  }
}

TEST(TensorPlan, Q4KSAndQ5KM) {
  const auto ts = llama_like(32, 4096, 11008, 4096, false);
  const TensorPlan s(options("Q4_K_S"), ts);
  EXPECT_EQ(type_of(s, ts, "blk.3.attn_v.weight"), TensorType::Q5_K);
  EXPECT_EQ(type_of(s, ts, "blk.4.attn_v.weight"), TensorType::Q4_K);
  EXPECT_EQ(type_of(s, ts, "blk.3.ffn_down.weight"), TensorType::Q5_K);
  EXPECT_EQ(type_of(s, ts, "blk.4.ffn_down.weight"), TensorType::Q4_K);
  const TensorPlan m5(options("q5_k_m"), ts);
  EXPECT_EQ(type_of(m5, ts, "blk.0.attn_v.weight"), TensorType::Q6_K);
  EXPECT_EQ(type_of(m5, ts, "blk.4.attn_v.weight"), TensorType::Q5_K);
  EXPECT_EQ(type_of(m5, ts, "output.weight"), TensorType::Q6_K);
}

TEST(TensorPlan, SmolLM2RowsOf576FallBack) {
  // 576 is not a multiple of 256: K types fall back to 32-blocks; the tied
  // embedding is the output and gets Q8_0.
  const auto ts = llama_like(30, 576, 1536, 192, true);
  const TensorPlan plan(options("Q4_K_M"), ts);
  EXPECT_EQ(type_of(plan, ts, "token_embd.weight"), TensorType::Q8_0);
  EXPECT_EQ(type_of(plan, ts, "blk.0.attn_q.weight"), TensorType::Q5_0);
  EXPECT_EQ(type_of(plan, ts, "blk.0.attn_v.weight"), TensorType::Q8_0);    // Q6_K -> Q8_0
  EXPECT_EQ(type_of(plan, ts, "blk.4.attn_v.weight"), TensorType::Q5_0);    // Q4_K -> Q5_0
  EXPECT_EQ(type_of(plan, ts, "blk.0.ffn_down.weight"), TensorType::Q6_K);  // rows of 1536
  EXPECT_EQ(type_of(plan, ts, "blk.4.ffn_down.weight"), TensorType::Q4_K);
  EXPECT_NE(plan.choose(ts[3]).note.find("fallback"), std::string::npos);
  const TensorPlan q51(options("Q5_K_M"), ts);
  EXPECT_EQ(type_of(q51, ts, "blk.4.attn_q.weight"), TensorType::Q5_1);  // Q5_K -> Q5_1
}

TEST(TensorPlan, PlainRecipesStillKeepTheOutputHigher) {
  const auto ts = llama_like(8, 4096, 11008, 4096, false);
  const TensorPlan plan(options("Q4_0"), ts);
  EXPECT_EQ(type_of(plan, ts, "output.weight"), TensorType::Q6_K);
  EXPECT_EQ(type_of(plan, ts, "blk.0.attn_v.weight"), TensorType::Q4_0);
  const TensorPlan q8(options("Q8_0"), ts);
  EXPECT_EQ(type_of(q8, ts, "output.weight"), TensorType::Q8_0);
  const TensorPlan f16(options("F16"), ts);
  EXPECT_EQ(type_of(f16, ts, "output.weight"), TensorType::F16);
  EXPECT_EQ(type_of(f16, ts, "output_norm.weight"), TensorType::F32);
  PlanOptions imp = options("Q4_0");
  imp.has_importance = true;
  const TensorPlan withimp(imp, ts);
  EXPECT_EQ(type_of(withimp, ts, "blk.0.ffn_down.weight"), TensorType::Q4_1);
  EXPECT_EQ(type_of(withimp, ts, "blk.1.ffn_down.weight"), TensorType::Q4_0);
}

TEST(TensorPlan, OverridesPureAndOrder) {
  const auto ts = llama_like(8, 4096, 11008, 4096, false);
  PlanOptions o = options("Q4_K_M");
  o.tensor_types = {{"attn_q", TensorType::Q8_0}, {"attn", TensorType::Q5_K}};
  o.output_type = TensorType::Q8_0;
  o.token_embedding_type = TensorType::F16;
  const TensorPlan plan(o, ts);
  EXPECT_EQ(type_of(plan, ts, "blk.2.attn_q.weight"), TensorType::Q8_0);
  EXPECT_EQ(type_of(plan, ts, "blk.0.attn_v.weight"), TensorType::Q5_K);  // the pattern, not Q6_K
  EXPECT_EQ(type_of(plan, ts, "blk.0.ffn_down.weight"), TensorType::Q6_K);
  EXPECT_EQ(type_of(plan, ts, "output.weight"), TensorType::Q8_0);
  EXPECT_EQ(type_of(plan, ts, "token_embd.weight"), TensorType::F16);
  PlanOptions pure = options("Q4_K_M");
  pure.pure = true;
  const TensorPlan p(pure, ts);
  EXPECT_EQ(type_of(p, ts, "blk.0.attn_v.weight"), TensorType::Q4_K);
  EXPECT_EQ(type_of(p, ts, "output.weight"), TensorType::Q4_K);

  EXPECT_TRUE(tensor_order_less("token_embd.weight", "blk.0.attn_q.weight"));
  EXPECT_TRUE(tensor_order_less("blk.2.ffn_up.weight", "blk.10.attn_q.weight"));
  EXPECT_TRUE(tensor_order_less("blk.2.attn_q.weight", "blk.2.ffn_up.weight"));
}

TEST(TensorPlan, BadNamesAreErrors) {
  EXPECT_THROW(find_recipe("Q3_K_M"), Error);
  EXPECT_THROW(writable_type("Q2_K"), Error);
  EXPECT_EQ(writable_type("q6_k"), TensorType::Q6_K);
  const auto ts = llama_like(1, 256, 256, 256, false);
  PlanOptions o = options("Q4_0");
  o.tensor_types = {{"(", TensorType::Q8_0}};
  EXPECT_THROW(TensorPlan(o, ts), Error);
}

}  // namespace
}  // namespace folio::quant
