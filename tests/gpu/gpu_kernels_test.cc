// Cross-backend checks in the style of ggml's test-backend-ops: every CUDA
// kernel against the CPU kernel on the same random inputs, over shapes that
// include empty, odd-sized and large ones. Each case is a small graph whose
// inputs are fed on the CPU and whose op node asks for /gpu:0 without soft
// placement (so it really runs there), against the same graph on /cpu:0:
// the values cross CPU -> GPU and GPU -> CPU through _Send/_Recv.
// Skipped (visibly) where no GPU is usable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/graph.pb.h"
#include "runtime/local_session.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using testing::GraphDefBuilder;

Tensor Random(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(DT_FLOAT, TensorShape(dims));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2, 2);
  for (float& v : t.flat<float>()) v = u(rng);
  return t;
}

// Runs `graph` with every node named in `on_device` placed on `device`,
// feeding `feeds` and fetching "out".
Tensor RunOn(tensorflow::GraphDef graph, const std::vector<std::string>& on_device,
             const std::string& device,
             const std::vector<std::pair<std::string, Tensor>>& feeds) {
  for (auto& n : *graph.mutable_node()) {
    for (const std::string& name : on_device) {
      if (n.name() == name) n.set_device(device);
    }
  }
  LocalSession session(SessionOptions{});  // no soft placement
  absl::Status s = session.Create(graph);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = session.Run(feeds, {"out"}, {}, &out);
  EXPECT_TRUE(s.ok()) << device << ": " << s;
  return s.ok() ? out[0] : Tensor();
}

// GPU result vs CPU result: same shape, values within `tol` relative.
void ExpectSameOnBoth(const tensorflow::GraphDef& graph,
                      const std::vector<std::string>& on_device,
                      const std::vector<std::pair<std::string, Tensor>>& feeds,
                      double tol, const std::string& what) {
  Tensor cpu = RunOn(graph, on_device, "/cpu:0", feeds);
  Tensor gpu = RunOn(graph, on_device, "/gpu:0", feeds);
  ASSERT_TRUE(cpu.IsInitialized() && gpu.IsInitialized()) << what;
  ASSERT_EQ(cpu.shape(), gpu.shape()) << what;
  int bad = 0;
  for (int64_t i = 0; i < cpu.NumElements() && bad < 5; ++i) {
    const double c = cpu.flat<float>()[i], g = gpu.flat<float>()[i];
    if (std::fabs(c - g) > tol * (1 + std::fabs(c))) {
      ADD_FAILURE() << what << ": element " << i << " cpu " << c << " gpu " << g;
      ++bad;
    }
  }
}

TEST(GpuKernelsTest, MatMul) {
  WEFT_REQUIRE_GPU();
  const std::vector<std::vector<int64_t>> mkn = {
      {0, 3, 4}, {3, 0, 5}, {4, 5, 0}, {1, 1, 1},  {7, 13, 5},
      {64, 128, 32}, {257, 511, 129}, {1, 1024, 1}, {1000, 3, 1000}};
  uint32_t seed = 1;
  for (const auto& s : mkn) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const int64_t m = s[0], k = s[1], n = s[2];
        GraphDefBuilder g;
        g.Placeholder("a", DT_FLOAT).Placeholder("b", DT_FLOAT);
        g.Op("out", "MatMul", {"a", "b"},
             {{"T", DT_FLOAT}, {"transpose_a", ta}, {"transpose_b", tb}});
        Tensor a = Random(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, seed++);
        Tensor b = Random(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, seed++);
        // Sums of k products: rounding grows with k.
        const double tol = 1e-5 * std::sqrt(static_cast<double>(k) + 1);
        ExpectSameOnBoth(g.Build(), {"out"}, {{"a", a}, {"b", b}}, tol,
                         absl::StrCat("MatMul m=", m, " k=", k, " n=", n,
                                      " ta=", ta, " tb=", tb));
      }
    }
  }
}

TEST(GpuKernelsTest, BinaryOpsWithBroadcasting) {
  WEFT_REQUIRE_GPU();
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{}, {}},         {{5}, {5}},          {{0, 3}, {0, 3}},    {{31, 17}, {31, 17}},
      {{1000, 1000}, {1000, 1000}},          {{4, 5}, {5}},       {{4, 1}, {1, 5}},
      {{2, 3, 4}, {3, 1}},                   {{}, {7}},           {{7}, {}},
      {{0, 5}, {5}},    {{3, 1, 5, 1}, {1, 4, 1, 6}},             {{128, 300}, {300}}};
  uint32_t seed = 100;
  for (const char* op : {"Add", "AddV2", "Sub", "Mul"}) {
    for (const auto& [sx, sy] : shapes) {
      GraphDefBuilder g;
      g.Placeholder("x", DT_FLOAT).Placeholder("y", DT_FLOAT);
      g.Op("out", op, {"x", "y"}, {{"T", DT_FLOAT}});
      ExpectSameOnBoth(g.Build(), {"out"},
                       {{"x", Random(sx, seed++)}, {"y", Random(sy, seed++)}}, 0,
                       absl::StrCat(op, " ", TensorShape(sx).DebugString(), " ",
                                    TensorShape(sy).DebugString()));
    }
  }
}

TEST(GpuKernelsTest, ReluReluGradBiasAddIdentity) {
  WEFT_REQUIRE_GPU();
  uint32_t seed = 200;
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{0}, {1}, {7, 3}, {33, 65}, {2, 3, 4, 5}, {1 << 20}}) {
    GraphDefBuilder relu;
    relu.Placeholder("x", DT_FLOAT).Op("out", "Relu", {"x"}, {{"T", DT_FLOAT}});
    ExpectSameOnBoth(relu.Build(), {"out"}, {{"x", Random(dims, seed++)}}, 0,
                     "Relu " + TensorShape(dims).DebugString());
    GraphDefBuilder grad;
    grad.Placeholder("g", DT_FLOAT).Placeholder("f", DT_FLOAT);
    grad.Op("out", "ReluGrad", {"g", "f"}, {{"T", DT_FLOAT}});
    ExpectSameOnBoth(grad.Build(), {"out"},
                     {{"g", Random(dims, seed++)}, {"f", Random(dims, seed++)}}, 0,
                     "ReluGrad " + TensorShape(dims).DebugString());
    GraphDefBuilder id;
    id.Placeholder("x", DT_FLOAT).Op("out", "Identity", {"x"}, {{"T", DT_FLOAT}});
    ExpectSameOnBoth(id.Build(), {"out"}, {{"x", Random(dims, seed++)}}, 0,
                     "Identity " + TensorShape(dims).DebugString());
    if (dims.size() < 2) continue;
    GraphDefBuilder bias;
    bias.Placeholder("x", DT_FLOAT).Placeholder("b", DT_FLOAT);
    bias.Op("out", "BiasAdd", {"x", "b"}, {{"T", DT_FLOAT}, {"data_format", "NHWC"}});
    ExpectSameOnBoth(bias.Build(), {"out"},
                     {{"x", Random(dims, seed++)}, {"b", Random({dims.back()}, seed++)}},
                     0, "BiasAdd " + TensorShape(dims).DebugString());
  }
}

// CPU -> GPU -> CPU: a fed value through an Identity on the GPU into a Neg
// on the CPU, and a Const made on the GPU fetched back; both directions of
// _Send/_Recv, values bit-exact.
TEST(GpuKernelsTest, SendRecvBothDirections) {
  WEFT_REQUIRE_GPU();
  Tensor x = Random({123, 45}, 7);
  GraphDefBuilder g;
  g.Placeholder("x", DT_FLOAT);
  g.Op("on_gpu", "Identity", {"x"}, {{"T", DT_FLOAT}});
  g.Op("out", "Neg", {"on_gpu"}, {{"T", DT_FLOAT}});
  tensorflow::GraphDef def = g.Build();
  Tensor out = RunOn(def, {"on_gpu"}, "/gpu:0", {{"x", x}});
  ASSERT_EQ(out.shape(), x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    ASSERT_EQ(out.flat<float>()[i], -x.flat<float>()[i]) << i;
  }
  GraphDefBuilder c;
  c.ConstT("k", x);
  c.Op("out", "Identity", {"k"}, {{"T", DT_FLOAT}});
  Tensor back = RunOn(c.Build(), {"k", "out"}, "/gpu:0", {});
  ASSERT_EQ(back.shape(), x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    ASSERT_EQ(back.flat<float>()[i], x.flat<float>()[i]) << i;
  }
}

}  // namespace
}  // namespace weft
