// RandomUniform, RandomStandardNormal, TruncatedNormal, RandomUniformInt:
// bit-exact agreement with TensorFlow 2.21 for given (seed, seed2) attrs
// (random_golden.inc, random_int_golden.inc),
// successive samples across runs, nondeterminism for seed = seed2 = 0,
// statistics, and errors.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/cpu/philox_random.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::BitDigest;
using testing_util::ElementBits;
using testing_util::Vec;

struct Golden {
  const char* op;
  DataType dtype;
  std::vector<uint64_t> first, second;  // bit patterns, shape [7]
  uint64_t digest1, digest2;            // shape [1000, 37]
};

const Golden kGolden[] = {
#include "tests/ops/random_golden.inc"
};

tensorflow::NodeDef RandomNode(const std::string& op, DataType dtype, int64_t seed,
                               int64_t seed2, DataType shape_type = DT_INT32) {
  return NodeBuilder("r", op)
      .Attr("dtype", dtype)
      .Attr("T", shape_type)
      .Attr("seed", seed)
      .Attr("seed2", seed2)
      .Build();
}

TEST(RandomTest, MatchesTensorFlowBitForBit) {
  for (const Golden& g : kGolden) {
    SCOPED_TRACE(absl::StrCat(g.op, " ", DataTypeString(g.dtype)));
    KernelRunner small(RandomNode(g.op, g.dtype, 87654321, 42));
    for (const auto* want : {&g.first, &g.second}) {  // successive runs
      auto out = small.Run({Vec<int32_t>({7})});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->at(0).NumElements(), 7);
      for (int i = 0; i < 7; ++i) EXPECT_EQ(ElementBits(out->at(0), i), (*want)[i]) << "element " << i;
    }
    KernelRunner big(RandomNode(g.op, g.dtype, 5, 6, DT_INT64));
    for (uint64_t want : {g.digest1, g.digest2}) {
      auto out = big.Run({Vec<int64_t>({1000, 37})});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->at(0).shape().DebugString(), "[1000,37]");
      EXPECT_EQ(BitDigest(out->at(0)), want);
    }
  }
}

struct IntGolden {
  DataType dtype;
  int64_t minval, maxval;
  std::vector<int64_t> first, second;  // shape [7]
  uint64_t digest1, digest2;           // shape [1000, 37]
};

const IntGolden kIntGolden[] = {
#include "tests/ops/random_int_golden.inc"
};

// A scalar of `dtype` (int32 or int64) holding `v`.
Tensor IntScalar(DataType dtype, int64_t v) {
  return dtype == DT_INT32 ? Tensor::Scalar<int32_t>(static_cast<int32_t>(v))
                           : Tensor::Scalar<int64_t>(v);
}

int64_t IntAt(const Tensor& t, int64_t i) {
  return t.dtype() == DT_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

tensorflow::NodeDef RandomIntNode(DataType dtype, int64_t seed, int64_t seed2,
                                  DataType shape_type = DT_INT32) {
  return NodeBuilder("r", "RandomUniformInt")
      .Attr("Tout", dtype)
      .Attr("T", shape_type)
      .Attr("seed", seed)
      .Attr("seed2", seed2)
      .Build();
}

TEST(RandomTest, UniformIntMatchesTensorFlowBitForBit) {
  for (const IntGolden& g : kIntGolden) {
    SCOPED_TRACE(DataTypeString(g.dtype));
    const Tensor lo = IntScalar(g.dtype, g.minval), hi = IntScalar(g.dtype, g.maxval);
    KernelRunner small(RandomIntNode(g.dtype, 87654321, 42));
    for (const auto* want : {&g.first, &g.second}) {  // successive runs
      auto out = small.Run({Vec<int32_t>({7}), lo, hi});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->at(0).NumElements(), 7);
      for (int i = 0; i < 7; ++i) EXPECT_EQ(IntAt(out->at(0), i), (*want)[i]) << "element " << i;
    }
    KernelRunner big(RandomIntNode(g.dtype, 5, 6, DT_INT64));
    for (uint64_t want : {g.digest1, g.digest2}) {
      auto out = big.Run({Vec<int64_t>({1000, 37}), lo, hi});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(BitDigest(out->at(0)), want);
    }
  }
}

TEST(RandomTest, UniformIntChecksItsBounds) {
  KernelRunner r(RandomIntNode(DT_INT32, 1, 2));
  EXPECT_STATUS(r.Run({Vec<int32_t>({3}), Tensor::Scalar<int32_t>(5),
                       Tensor::Scalar<int32_t>(5)}).status(),
                absl::StatusCode::kInvalidArgument, "Need minval < maxval");
  EXPECT_STATUS(r.Run({Vec<int32_t>({3}), Vec<int32_t>({0, 1}),
                       Tensor::Scalar<int32_t>(5)}).status(),
                absl::StatusCode::kInvalidArgument, "minval must be 0-D");
  // An empty output needs no valid range, as in TensorFlow.
  auto empty = r.Run({Vec<int32_t>({0}), Tensor::Scalar<int32_t>(5),
                      Tensor::Scalar<int32_t>(5)});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->at(0).NumElements(), 0);
  // Every value in [lo, hi), across the whole range of int32.
  auto wide = r.Run({Vec<int32_t>({4000}), Tensor::Scalar<int32_t>(-2147483647 - 1),
                     Tensor::Scalar<int32_t>(2147483647)});
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_NE(IntAt(wide->at(0), 0), IntAt(wide->at(0), 1));
}

TEST(RandomTest, SameSeedsSameStreamAcrossKernels) {
  KernelRunner a(RandomNode("RandomStandardNormal", DT_FLOAT, 3, 4));
  KernelRunner b(RandomNode("RandomStandardNormal", DT_FLOAT, 3, 4));
  auto x = a.Run({Vec<int32_t>({5, 3})});
  auto y = b.Run({Vec<int32_t>({5, 3})});
  ASSERT_TRUE(x.ok() && y.ok());
  ExpectTensorEqual(x->at(0), y->at(0));
  auto z = a.Run({Vec<int32_t>({5, 3})});  // the next sample differs
  ASSERT_TRUE(z.ok());
  EXPECT_NE(BitDigest(z->at(0)), BitDigest(x->at(0)));
}

TEST(RandomTest, ZeroSeedsAreNondeterministic) {
  KernelRunner a(RandomNode("RandomUniform", DT_FLOAT, 0, 0));
  KernelRunner b(RandomNode("RandomUniform", DT_FLOAT, 0, 0));
  auto x = a.Run({Vec<int32_t>({64})});
  auto y = b.Run({Vec<int32_t>({64})});
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_NE(BitDigest(x->at(0)), BitDigest(y->at(0)));
}

TEST(RandomTest, Statistics) {
  const int64_t n = 200000;
  struct Case {
    const char* op;
    double mean, stddev, lo, hi;
  };
  // Truncated at +-2: variance 1 - 2*2*phi(2)/(Phi(2)-Phi(-2)) = 0.7737.
  for (const Case& c : {Case{"RandomUniform", 0.5, std::sqrt(1.0 / 12), 0, 1},
                        Case{"RandomStandardNormal", 0, 1, -10, 10},
                        Case{"TruncatedNormal", 0, std::sqrt(0.7737413), -2, 2}}) {
    for (DataType dtype : {DT_FLOAT, DT_DOUBLE}) {
      SCOPED_TRACE(absl::StrCat(c.op, " ", DataTypeString(dtype)));
      KernelRunner r(RandomNode(c.op, dtype, 11, 12));
      auto out = r.Run({Vec<int32_t>({static_cast<int32_t>(n)})});
      ASSERT_TRUE(out.ok()) << out.status();
      double sum = 0, sum2 = 0, lo = 1e9, hi = -1e9;
      for (int64_t i = 0; i < n; ++i) {
        const double v = dtype == DT_FLOAT ? out->at(0).data<float>()[i]
                                           : out->at(0).data<double>()[i];
        sum += v;
        sum2 += v * v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      const double mean = sum / n;
      const double sd = std::sqrt(sum2 / n - mean * mean);
      EXPECT_NEAR(mean, c.mean, 0.01);
      EXPECT_NEAR(sd, c.stddev, 0.01);
      EXPECT_GE(lo, c.lo);
      EXPECT_LT(hi, c.hi);
    }
  }
}

TEST(RandomTest, ShapesAndErrors) {
  KernelRunner r(RandomNode("RandomUniform", DT_FLOAT, 1, 2));
  auto out = r.Run({Vec<int32_t>({0, 5})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->at(0).shape().DebugString(), "[0,5]");
  out = r.Run({Vec<int32_t>({})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->at(0).shape().DebugString(), "[]");
  EXPECT_STATUS(r.Run({Vec<int32_t>({2, -3})}).status(), absl::StatusCode::kInvalidArgument,
                "negative size -3");
  EXPECT_STATUS(r.Run({Tensor::Scalar<int32_t>(3)}).status(), absl::StatusCode::kInvalidArgument,
                "must be a vector");
  KernelRunner bad(RandomNode("RandomUniform", DT_INT32, 1, 2));
  EXPECT_EQ(bad.Run({Vec<int32_t>({2})}).status().code(), absl::StatusCode::kInvalidArgument);
}

// Philox4x32-10 known answers published with Random123 (kat_vectors): zero
// counter and key, all-ones counter and key, and digits of pi.
TEST(PhiloxTest, KnownAnswers) {
  using philox::PhiloxRandom;
  struct Kat {
    PhiloxRandom::Block counter;
    PhiloxRandom::Key key;
    PhiloxRandom::Block expected;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    PhiloxRandom gen(k.counter, k.key);
    EXPECT_EQ(gen(), k.expected);
  }
  PhiloxRandom a(7, 9), b(7, 9);
  for (int i = 0; i < 5; ++i) a();
  b.Skip(5);
  EXPECT_EQ(a(), b());
  // Skip carries across the 32-bit counter words.
  PhiloxRandom c({0xffffffff, 0xffffffff, 0xffffffff, 0}, {1, 2});
  c.Skip(1);
  EXPECT_EQ(c.counter(), (PhiloxRandom::Block{0, 0, 0, 1}));
}

}  // namespace
}  // namespace weft
