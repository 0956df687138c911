// Sgemm (ops/cpu/matmul_sgemm.h) on its own, with intra-op pools of several
// sizes. Its threads share packed B panels and wait on one another's tasks,
// so more workers than cores, than tasks, or workers that start late must
// all give the product one thread gives: the same bits, since every C tile
// is summed in the same order whoever computes it.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "ops/cpu/matmul_sgemm.h"
#include "ops/framework/op_kernel.h"
#include "runtime/device.h"

namespace weft {
namespace {

std::vector<float> RandomFloats(int64_t size, uint32_t seed) {
  std::vector<float> v(size);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  for (float& x : v) x = dist(gen);
  return v;
}

// Sgemm on the default CPU device of a DeviceMgr with `threads` intra-op
// threads.
std::vector<float> RunSgemm(int threads, bool ta, bool tb, int64_t m,
                            int64_t n, int64_t k, const std::vector<float>& a,
                            const std::vector<float>& b) {
  LocalDeviceOptions options;
  options.intra_op_threads = threads;
  std::unique_ptr<DeviceMgr> devices = DeviceMgr::NewLocal(options);
  OpKernelContext::Params params;
  params.device = devices->default_device();
  OpKernelContext ctx(params);
  std::vector<float> out(m * n, NAN);
  const absl::Status s =
      Sgemm(&ctx, ta, tb, m, n, k, a.data(), b.data(), out.data());
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

struct Shape {
  int64_t m, n, k;
};

TEST(SgemmTest, SameBitsForEveryPoolSize) {
  if (!SgemmAvailable()) GTEST_SKIP() << "no AVX-512 in this build";
  // Ragged row, column and depth blocks; a short A (cut by columns); two
  // column panels; many depth blocks (panel buffers reused).
  for (const Shape& sh : {Shape{150, 700, 530}, Shape{5, 1500, 300},
                          Shape{40, 4130, 260}, Shape{97, 33, 1300}}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        SCOPED_TRACE(::testing::Message() << sh.m << "x" << sh.n << "x" << sh.k
                                          << " ta=" << ta << " tb=" << tb);
        const std::vector<float> a = RandomFloats(sh.m * sh.k, 1);
        const std::vector<float> b = RandomFloats(sh.k * sh.n, 2);
        const std::vector<float> one =
            RunSgemm(1, ta, tb, sh.m, sh.n, sh.k, a, b);
        // The single-thread product against a double-precision reference.
        for (int64_t i = 0; i < sh.m; i += 7) {
          for (int64_t j = 0; j < sh.n; ++j) {
            double sum = 0;
            for (int64_t p = 0; p < sh.k; ++p) {
              sum += double{ta ? a[p * sh.m + i] : a[i * sh.k + p]} *
                     double{tb ? b[j * sh.k + p] : b[p * sh.n + j]};
            }
            ASSERT_NEAR(one[i * sh.n + j], sum, 1e-4 * (1 + std::fabs(sum)))
                << "row " << i << " column " << j;
          }
        }
        for (const int threads : {2, 3, 8}) {
          const std::vector<float> many =
              RunSgemm(threads, ta, tb, sh.m, sh.n, sh.k, a, b);
          int64_t differ = 0;
          for (size_t i = 0; i < one.size(); ++i) differ += many[i] != one[i];
          EXPECT_EQ(differ, 0) << "of " << one.size() << " values differ with "
                               << threads << " threads";
        }
      }
    }
  }
}

}  // namespace
}  // namespace weft
