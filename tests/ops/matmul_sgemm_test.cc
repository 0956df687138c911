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
#include "runtime/core/device.h"

namespace weft {
namespace {

std::vector<float> RandomFloats(int64_t size, uint32_t seed) {
  std::vector<float> v(size);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  for (float& x : v) x = dist(gen);
  return v;
}

// Sgemm on the default CPU device of `devices`.
std::vector<float> RunSgemm(DeviceMgr& devices, bool ta, bool tb, int64_t m,
                            int64_t n, int64_t k, const std::vector<float>& a,
                            const std::vector<float>& b) {
  OpKernelContext::Params params;
  params.device = devices.default_device();
  OpKernelContext ctx(params);
  std::vector<float> out(m * n, NAN);
  const absl::Status s =
      Sgemm(&ctx, ta, tb, m, n, k, a.data(), b.data(), out.data());
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

// The same on a DeviceMgr of its own with `threads` intra-op threads.
std::vector<float> RunSgemm(int threads, bool ta, bool tb, int64_t m,
                            int64_t n, int64_t k, const std::vector<float>& a,
                            const std::vector<float>& b) {
  LocalDeviceOptions options;
  options.intra_op_threads = threads;
  std::unique_ptr<DeviceMgr> devices = DeviceMgr::NewLocal(options).value();
  return RunSgemm(*devices, ta, tb, m, n, k, a, b);
}

// op(a) * op(b) at (i, j), in double.
double Reference(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                 const std::vector<float>& a, const std::vector<float>& b,
                 int64_t i, int64_t j) {
  double sum = 0;
  for (int64_t p = 0; p < k; ++p) {
    sum += double{ta ? a[p * m + i] : a[i * k + p]} *
           double{tb ? b[j * k + p] : b[p * n + j]};
  }
  return sum;
}

struct Shape {
  int64_t m, n, k;
};

TEST(SgemmTest, SameBitsForEveryPoolSize) {
  if (!SgemmAvailable()) GTEST_SKIP() << "no SGEMM kernel in this build";
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
            const double sum = Reference(ta, tb, sh.m, sh.n, sh.k, a, b, i, j);
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

// Every edge-tile shape of both kernels (12 x 32 tiles on AVX-512, 6 x 16
// on AVX2): rows 1 to 13 cover each row remainder of 6 and 12; the columns
// each remainder class of 8, 16 and 32 (the transposed-B pack works in 8 x 8
// or 16 x 16 blocks); the depths a single step, partial transpose blocks
// and a depth block of 256 plus or minus one. Every value is checked.
TEST(SgemmTest, EveryEdgeTileAgainstReference) {
  if (!SgemmAvailable()) GTEST_SKIP() << "no SGEMM kernel in this build";
  LocalDeviceOptions options;
  options.intra_op_threads = 2;
  std::unique_ptr<DeviceMgr> devices = DeviceMgr::NewLocal(options).value();
  for (int64_t m = 1; m <= 13; ++m) {
    for (const int64_t n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 40}) {
      for (const int64_t k : {1, 9, 17, 255, 257}) {
        const std::vector<float> a = RandomFloats(m * k, 3);
        const std::vector<float> b = RandomFloats(k * n, 4);
        for (const bool ta : {false, true}) {
          for (const bool tb : {false, true}) {
            SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k
                                              << " ta=" << ta << " tb=" << tb);
            const std::vector<float> out =
                RunSgemm(*devices, ta, tb, m, n, k, a, b);
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                const double sum = Reference(ta, tb, m, n, k, a, b, i, j);
                ASSERT_NEAR(out[i * n + j], sum, 1e-4 * (1 + std::fabs(sum)))
                    << "row " << i << " column " << j;
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace weft
