// TensorFlow's stateless random ops (V1: a seed input; V2: a key, counter
// and algorithm) and RandomShuffle: bit-exact agreement with TensorFlow
// 2.21 for several seeds, seed dtypes, shapes and dtypes
// (stateless_random_golden.inc, shuffle_golden.inc, written by
// stateless_golden_gen.py), the same numbers on every run, and errors;
// Multinomial and StatelessMultinomial.
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
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
  int64_t seed0, seed1;
  DataType seed_dtype;
  int64_t minval, maxval;
  std::vector<uint64_t> small;  // bit patterns, shape [7]
  uint64_t digest;              // shape [1000, 37]
};

const Golden kGolden[] = {
#include "tests/ops/stateless_random_golden.inc"
};

Tensor Seed(DataType dtype, int64_t s0, int64_t s1) {
  return dtype == DT_INT32
             ? Vec<int32_t>({static_cast<int32_t>(s0), static_cast<int32_t>(s1)})
             : Vec<int64_t>({s0, s1});
}

Tensor Bound(DataType dtype, int64_t v) {
  return dtype == DT_INT32 ? Tensor::Scalar<int32_t>(static_cast<int32_t>(v))
                           : Tensor::Scalar<int64_t>(v);
}

bool IsV2(const std::string& op) { return absl::EndsWith(op, "V2"); }
bool IsBounded(const std::string& op) {
  return absl::StrContains(op, "UniformInt");
}

tensorflow::NodeDef Node(const Golden& g, DataType shape_type) {
  NodeBuilder b("r", g.op);
  b.Attr("dtype", g.dtype);
  if (IsV2(g.op)) {
    b.Attr("Tshape", shape_type);
  } else {
    b.Attr("T", shape_type).Attr("Tseed", g.seed_dtype);
  }
  return b.Build();
}

// Key and counter for a seed, from StatelessRandomGetKeyCounter.
std::vector<Tensor> KeyCounter(const Tensor& seed) {
  KernelRunner r(NodeBuilder("kc", "StatelessRandomGetKeyCounter")
                     .Attr("Tseed", seed.dtype())
                     .Build());
  auto out = r.Run({seed});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

TEST(StatelessRandomTest, MatchesTensorFlowBitForBit) {
  int checked = 0;
  for (const Golden& g : kGolden) {
    SCOPED_TRACE(absl::StrCat(g.op, " ", DataTypeString(g.dtype), " seed (",
                              g.seed0, ", ", g.seed1, ") ",
                              DataTypeString(g.seed_dtype)));
    const Tensor seed = Seed(g.seed_dtype, g.seed0, g.seed1);
    if (std::string(g.op) == "StatelessRandomGetKeyCounter") {
      std::vector<Tensor> kc = KeyCounter(seed);
      ASSERT_EQ(kc.size(), 2u);
      ASSERT_EQ(kc[0].shape().DebugString(), "[1]");
      ASSERT_EQ(kc[1].shape().DebugString(), "[2]");
      EXPECT_EQ(kc[0].data<uint64_t>()[0], g.small[0]);
      EXPECT_EQ(kc[1].data<uint64_t>()[0], g.small[1]);
      EXPECT_EQ(kc[1].data<uint64_t>()[1], g.small[2]);
      ++checked;
      continue;
    }
    std::vector<Tensor> rest;
    if (IsV2(g.op)) {
      rest = KeyCounter(seed);
      rest.push_back(Tensor::Scalar<int32_t>(1));  // Philox
    } else {
      rest = {seed};
    }
    if (IsBounded(g.op)) {
      rest.push_back(Bound(g.dtype, g.minval));
      rest.push_back(Bound(g.dtype, g.maxval));
    }
    auto run = [&](KernelRunner& r, Tensor shape) {
      std::vector<Tensor> in = {std::move(shape)};
      in.insert(in.end(), rest.begin(), rest.end());
      return r.Run(in);
    };
    KernelRunner small(Node(g, DT_INT32));
    for (int pass = 0; pass < 2; ++pass) {  // the same numbers every run
      auto out = run(small, Vec<int32_t>({7}));
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->at(0).NumElements(), 7);
      for (int i = 0; i < 7; ++i) EXPECT_EQ(ElementBits(out->at(0), i), g.small[i]) << "element " << i;
    }
    KernelRunner big(Node(g, DT_INT64));
    auto out = run(big, Vec<int64_t>({1000, 37}));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->at(0).shape().DebugString(), "[1000,37]");
    EXPECT_EQ(BitDigest(out->at(0)), g.digest);
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(StatelessRandomTest, GetAlgAndKeyCounterAlgSayPhilox) {
  KernelRunner alg(NodeBuilder("a", "StatelessRandomGetAlg").Build());
  auto a = alg.Run({});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->at(0).scalar<int32_t>(), 1);
  KernelRunner kca(NodeBuilder("k", "StatelessRandomGetKeyCounterAlg")
                       .Attr("Tseed", DT_INT64)
                       .Build());
  auto out = kca.Run({Vec<int64_t>({1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ(out->at(0).data<uint64_t>()[0], kGolden[0].small[0]);
  EXPECT_EQ(out->at(1).data<uint64_t>()[1], kGolden[0].small[2]);
  EXPECT_EQ(out->at(2).scalar<int32_t>(), 1);
}

TEST(StatelessRandomTest, AutoSelectIsPhiloxAndThreeFryIsRefused) {
  const std::vector<Tensor> kc = KeyCounter(Vec<int64_t>({1, 2}));
  ASSERT_EQ(kc.size(), 2u);
  KernelRunner r(NodeBuilder("u", "StatelessRandomUniformV2")
                     .Attr("dtype", DT_FLOAT)
                     .Attr("Tshape", DT_INT32)
                     .Build());
  auto philox = r.Run({Vec<int32_t>({5}), kc[0], kc[1], Tensor::Scalar<int32_t>(1)});
  auto autosel = r.Run({Vec<int32_t>({5}), kc[0], kc[1], Tensor::Scalar<int32_t>(3)});
  ASSERT_TRUE(philox.ok() && autosel.ok());
  ExpectTensorEqual(philox->at(0), autosel->at(0));
  for (int32_t alg : {0, 2, 7}) {
    EXPECT_STATUS(r.Run({Vec<int32_t>({5}), kc[0], kc[1], Tensor::Scalar<int32_t>(alg)}).status(),
                  absl::StatusCode::kInvalidArgument,
                  absl::StrCat("Unsupported algorithm id: ", alg));
  }
  EXPECT_STATUS(r.Run({Vec<int32_t>({5}), Vec<uint64_t>({1, 2}), kc[1],
                       Tensor::Scalar<int32_t>(1)}).status(),
                absl::StatusCode::kInvalidArgument, "key must have shape [1]");
  EXPECT_STATUS(r.Run({Vec<int32_t>({5}), kc[0], Vec<uint64_t>({1}),
                       Tensor::Scalar<int32_t>(1)}).status(),
                absl::StatusCode::kInvalidArgument, "counter must be a vector of at least 2");
}

TEST(StatelessRandomTest, BadSeedsAndBoundsAreRefused) {
  KernelRunner u(NodeBuilder("u", "StatelessRandomUniform")
                     .Attr("dtype", DT_FLOAT)
                     .Attr("T", DT_INT32)
                     .Attr("Tseed", DT_INT64)
                     .Build());
  EXPECT_STATUS(u.Run({Vec<int32_t>({3}), Vec<int64_t>({1, 2, 3})}).status(),
                absl::StatusCode::kInvalidArgument, "seed must have shape [2]");
  EXPECT_STATUS(u.Run({Vec<int32_t>({-3}), Vec<int64_t>({1, 2})}).status(),
                absl::StatusCode::kInvalidArgument, "shape");
  KernelRunner i(NodeBuilder("i", "StatelessRandomUniformInt")
                     .Attr("dtype", DT_INT32)
                     .Attr("T", DT_INT32)
                     .Attr("Tseed", DT_INT64)
                     .Build());
  EXPECT_STATUS(i.Run({Vec<int32_t>({3}), Vec<int64_t>({1, 2}), Tensor::Scalar<int32_t>(3),
                       Tensor::Scalar<int32_t>(3)}).status(),
                absl::StatusCode::kInvalidArgument, "Need minval < maxval, got 3 >= 3");
  // An empty output needs no valid range, as in TensorFlow.
  auto empty = i.Run({Vec<int32_t>({0}), Vec<int64_t>({1, 2}), Tensor::Scalar<int32_t>(3),
                      Tensor::Scalar<int32_t>(3)});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->at(0).NumElements(), 0);
}

struct ShuffleGolden {
  int64_t n, row, seed, seed2;
  uint64_t digests[2];
  std::vector<int32_t> head;
};

const ShuffleGolden kShuffle[] = {
#include "tests/ops/shuffle_golden.inc"
};

tensorflow::NodeDef Shuffle(int64_t seed, int64_t seed2, DataType t = DT_INT32) {
  return NodeBuilder("s", "RandomShuffle")
      .Attr("T", t)
      .Attr("seed", seed)
      .Attr("seed2", seed2)
      .Build();
}

TEST(RandomShuffleTest, MatchesTensorFlowOnSuccessiveRuns) {
  for (const ShuffleGolden& g : kShuffle) {
    SCOPED_TRACE(absl::StrCat("n ", g.n, " row ", g.row));
    std::vector<int32_t> values(g.n * g.row);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i);
    Tensor in = Vec<int32_t>(values);
    if (g.row > 1) in = in.Reshaped(TensorShape({g.n, g.row}));
    KernelRunner r(Shuffle(g.seed, g.seed2));
    for (uint64_t want : g.digests) {
      auto out = r.Run({in});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->at(0).shape(), in.shape());
      EXPECT_EQ(BitDigest(out->at(0)), want);
      if (want == g.digests[0]) {
        for (size_t i = 0; i < g.head.size(); ++i) {
          EXPECT_EQ(out->at(0).data<int32_t>()[i], g.head[i]) << "element " << i;
        }
      }
      // A permutation: every value once.
      std::set<int32_t> seen(out->at(0).data<int32_t>(),
                             out->at(0).data<int32_t>() + values.size());
      EXPECT_EQ(seen.size(), values.size());
    }
  }
}

TEST(RandomShuffleTest, StringsScalarsAndErrors) {
  KernelRunner r(Shuffle(3, 4, DT_STRING));
  auto out = r.Run({Vec<std::string>({"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Seeds (3, 4) move 0..9 to 1 5 3 8 0 4 7 6 9 2 (shuffle_golden.inc).
  EXPECT_EQ(out->at(0).data<std::string>()[0], "b");
  EXPECT_EQ(out->at(0).data<std::string>()[9], "c");
  KernelRunner s(Shuffle(1, 2, DT_FLOAT));
  EXPECT_STATUS(s.Run({Tensor::Scalar<float>(1)}).status(),
                absl::StatusCode::kInvalidArgument, "at least 1-D");
  auto one = s.Run({Vec<float>({5})});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->at(0).data<float>()[0], 5);
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

// Multinomial and StatelessMultinomial: shape, the classes they may draw,
// and errors. (TensorFlow's exact classes: tests/conformance/random_ops_test.)
TEST(MultinomialTest, ShapesClassesAndErrors) {
  const Tensor logits = testing_util::Vec<float>({0.0f, 1.0f, -INFINITY, 2.0f, 2.0f, -INFINITY})
                            .Reshaped(TensorShape({2, 3}));
  KernelRunner stateful(NodeBuilder("m", "Multinomial")
                            .Attr("T", DT_FLOAT)
                            .Attr("output_dtype", DT_INT64)
                            .Attr("seed", int64_t{3})
                            .Attr("seed2", int64_t{4})
                            .Build());
  auto out = stateful.Run({logits, Tensor::Scalar<int32_t>(50)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->at(0).shape().DebugString(), "[2,50]");
  for (int64_t i = 0; i < 100; ++i) {
    const int64_t k = out->at(0).data<int64_t>()[i];
    EXPECT_NE(k, 2) << "a -inf logit is never drawn";
    EXPECT_TRUE(k >= 0 && k < 3);
  }
  EXPECT_STATUS(stateful.Run({testing_util::Vec<float>({1, 2}), Tensor::Scalar<int32_t>(1)})
                    .status(),
                absl::StatusCode::kInvalidArgument, "logits should be a matrix");
  EXPECT_STATUS(stateful.Run({logits, Tensor::Scalar<int32_t>(-1)}).status(),
                absl::StatusCode::kInvalidArgument, "num_samples should be nonnegative");
  KernelRunner stateless(NodeBuilder("s", "StatelessMultinomial")
                             .Attr("T", DT_FLOAT)
                             .Attr("Tseed", DT_INT64)
                             .Attr("output_dtype", DT_INT32)
                             .Build());
  auto a = stateless.Run({logits, Tensor::Scalar<int32_t>(8), testing_util::Vec<int64_t>({5, 6})});
  auto b = stateless.Run({logits, Tensor::Scalar<int32_t>(8), testing_util::Vec<int64_t>({5, 6})});
  ASSERT_TRUE(a.ok() && b.ok());
  ExpectTensorEqual(a->at(0), b->at(0));  // the same seed, the same classes
}

}  // namespace
}  // namespace weft
