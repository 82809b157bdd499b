// ContiguousKvCache and Batch validation: integer logic, no model needed.
#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "model/batch.h"
#include "model/contiguous_kv_cache.h"

namespace folio::model {
namespace {

ModelConfig tiny_config() {
  ModelConfig c;
  c.n_layer = 2;
  c.head_dim_k = c.head_dim_v = 4;
  c.layers = {{2, 1, 8, false}, {2, 2, 8, false}};  // layer 1 has 2 KV heads
  return c;
}

TEST(Batch, ValidateRejectsMalformedBatches) {
  Batch b;
  b.add(5, 0, 0, false);
  b.add(6, 1, 0, true);
  EXPECT_NO_THROW(b.validate(10));
  EXPECT_THROW(b.validate(6), Error);  // token 6 outside a 6-token vocabulary
  Batch bad = b;
  bad.positions.pop_back();
  EXPECT_THROW(bad.validate(10), Error);
  bad = b;
  bad.logit_rows = {1, 1};
  EXPECT_THROW(bad.validate(10), Error);
  bad = b;
  bad.logit_rows = {2};
  EXPECT_THROW(bad.validate(10), Error);
  bad = b;
  bad.seq_ids[0] = -1;
  EXPECT_THROW(bad.validate(10), Error);
}

TEST(ContiguousKvCache, StoresRowsAndReturnsPrefixPages) {
  ContiguousKvCache kv(tiny_config(), 2, 16);
  Batch b;
  for (int p = 0; p < 3; ++p) b.add(0, p, 1, false);
  kv.begin(b);
  EXPECT_EQ(kv.length(1), 3u);
  EXPECT_EQ(kv.length(0), 0u);
  for (std::size_t p = 0; p < 3; ++p) {
    std::vector<float> k(8), v(8);
    for (std::size_t i = 0; i < 8; ++i) {
      k[i] = static_cast<float>(100 * p + i);
      v[i] = -k[i];
    }
    kv.store(1, 1, p, k.data(), v.data());
  }
  std::vector<kernels::KvPage> pages;
  kv.pages(1, 1, 2, pages);
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(pages[0].n_tokens, 2u);
  const auto* k = static_cast<const float*>(pages[0].k);
  const auto* v = static_cast<const float*>(pages[0].v);
  EXPECT_EQ(k[8 + 3], 103.0f);  // row stride = n_kv_heads(2) * head_dim(4)
  EXPECT_EQ(v[8 + 3], -103.0f);
}

TEST(ContiguousKvCache, RejectsGapsOverflowAndUnknownSequencesAtomically) {
  ContiguousKvCache kv(tiny_config(), 1, 4);
  Batch b;
  b.add(0, 0, 0, false);
  b.add(0, 2, 0, false);  // gap at position 1
  EXPECT_THROW(kv.begin(b), Error);
  EXPECT_EQ(kv.length(0), 0u);
  b.positions[1] = 1;
  kv.begin(b);
  EXPECT_EQ(kv.length(0), 2u);
  Batch over;
  for (int p = 2; p < 5; ++p) over.add(0, p, 0, false);  // position 4 >= max_tokens 4
  EXPECT_THROW(kv.begin(over), Error);
  EXPECT_EQ(kv.length(0), 2u);
  Batch unknown;
  unknown.add(0, 0, 1, false);
  EXPECT_THROW(kv.begin(unknown), Error);
  // Rewriting held positions (e.g. after a rejected draft) is allowed.
  Batch rewrite;
  rewrite.add(0, 1, 0, false);
  EXPECT_NO_THROW(kv.begin(rewrite));
  EXPECT_EQ(kv.length(0), 2u);
  kv.truncate(0, 1);
  EXPECT_EQ(kv.length(0), 1u);
}

}  // namespace
}  // namespace folio::model
