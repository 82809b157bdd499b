// The Hessian collector without a model: H = X^T X / n per input, linears
// that read the same buffer in a row share one matrix (and keep sharing it
// on later passes), widths are checked.
#include "calib/hessian.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"

namespace folio::calib {
namespace {

TEST(Hessian, IsTheInputSecondMomentMatrix) {
  HessianCollector h;
  const std::vector<float> x = {1, 2, 3, -1, 0, 2};  // 2 rows of 3
  h.observe("blk.0.attn_q.weight", x.data(), 2, 3);
  const std::vector<double> H = h.hessian("blk.0.attn_q.weight");
  ASSERT_EQ(H.size(), 9u);
  const double want[9] = {1 + 1, 2 + 0, 3 - 2, 2 + 0, 4 + 0, 6 + 0, 3 - 2, 6 + 0, 9 + 4};
  for (int i = 0; i < 9; ++i) EXPECT_DOUBLE_EQ(H[i], want[i] / 2) << i;
  EXPECT_EQ(h.rows("blk.0.attn_q.weight"), 2u);
  EXPECT_TRUE(h.hessian("blk.0.attn_k.weight").empty());
}

TEST(Hessian, ConsecutiveReadersOfOneBufferShareItsMatrix) {
  HessianCollector h;
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y = {5, 6, 7, 8};
  for (int pass = 0; pass < 2; ++pass) {
    h.observe("q", x.data(), 2, 2);
    h.observe("k", x.data(), 2, 2);  // same buffer, same shape: shares q's
    h.observe("o", y.data(), 2, 2);
    x[0] += 1.0f;  // the second pass sees different data in the same buffer
  }
  EXPECT_EQ(h.distinct_inputs(), 2u);
  EXPECT_EQ(h.hessian("q"), h.hessian("k"));
  EXPECT_EQ(h.rows("k"), 4u);  // counted once, not twice per pass
  EXPECT_DOUBLE_EQ(h.hessian("q")[0], (1.0 + 9.0 + 4.0 + 9.0) / 4);
  EXPECT_NE(h.hessian("o"), h.hessian("q"));
  EXPECT_THROW(h.observe("o", y.data(), 1, 4), Error);
}

}  // namespace
}  // namespace folio::calib
