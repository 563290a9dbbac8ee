// The float MatMul kernels' packed constant weights (ops/math/cpu/
// matmul_common.h), tested below the plugin ABI: the plans of every batch
// size share one packed copy of B, because oneDNN packs B the same way for
// every m. (Numbers through the packed path: tests/ops/matmul_test.cc,
// ConstWeightsTest and the matmul_test_packed run.)
#include <gtest/gtest.h>

#include <memory>

#include "math/cpu/matmul_common.h"

// This test is no plugin: nothing here calls into a core.
const GR_CoreApi* graphrt::sdk::detail::g_api = nullptr;

namespace graphrt {
namespace sdk {
namespace matmul {
namespace {

std::shared_ptr<PackedPlan> Plan(int threads, int64_t m, int64_t n, int64_t k, PackedWeightsStore* store) {
  return MakePackedPlan(PackedSplit(threads, m, n, k), false, false, m, n, k, /*bias=*/true, Activation::kRelu,
                        0.2f, store);
}

TEST(PackedWeightsStoreTest, EveryBatchSizeSharesOnePackedCopy) {
  PackedWeightsStore store;
  std::shared_ptr<PackedWeights> first;
  for (int64_t m : {64, 1, 3, 8, 33, 256, 512}) {
    const std::shared_ptr<PackedPlan> plan = Plan(1, m, 512, 784, &store);
    ASSERT_TRUE(plan) << m;
    ASSERT_EQ(plan->prims.size(), 1u) << m;
    ASSERT_EQ(plan->weights.size(), 1u) << m;
    if (!first) first = plan->weights[0];
    EXPECT_EQ(plan->weights[0], first) << m;
  }
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(first->c0, 0);
  EXPECT_EQ(first->cols, 512);
}

TEST(PackedWeightsStoreTest, RowBlocksShareAndColumnBlocksHaveTheirOwn) {
  PackedWeightsStore store;
  // 64 rows on 2 threads: two row blocks over all of B.
  const std::shared_ptr<PackedPlan> rows = Plan(2, 64, 512, 784, &store);
  ASSERT_TRUE(rows);
  ASSERT_TRUE(rows->split.by_rows);
  ASSERT_EQ(rows->prims.size(), 2u);
  ASSERT_EQ(rows->weights.size(), 2u);
  EXPECT_EQ(rows->weights[0], rows->weights[1]);
  EXPECT_EQ(store.size(), 1u);
  // 8 rows on 2 threads: column blocks, each its own columns of B; the
  // full-width copy above stays shared with 1-thread plans.
  const std::shared_ptr<PackedPlan> cols = Plan(2, 8, 512, 784, &store);
  ASSERT_TRUE(cols);
  ASSERT_FALSE(cols->split.by_rows);
  ASSERT_EQ(cols->weights.size(), cols->prims.size());
  for (size_t i = 1; i < cols->weights.size(); ++i) EXPECT_NE(cols->weights[i], cols->weights[0]) << i;
  EXPECT_EQ(store.size(), 1u + cols->weights.size());
  const std::shared_ptr<PackedPlan> one = Plan(1, 8, 512, 784, &store);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->weights[0], rows->weights[0]);
  EXPECT_EQ(store.size(), 1u + cols->weights.size());
}

}  // namespace
}  // namespace matmul
}  // namespace sdk
}  // namespace graphrt
