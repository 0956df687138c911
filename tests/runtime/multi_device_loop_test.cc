// While loops whose bodies span devices: the partitioner gives every device
// that receives values inside a loop a control loop steered by the loop's
// LoopCond, and _Send/_Recv keys carry the frame and iteration, so each
// iteration's transfers meet. Results must equal one device's, for loops
// and nested loops placed at random over 2-3 CPU devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/graph.pb.h"
#include "runtime/session.h"
#include "runtime/core/tensor.h"
#include "tests/runtime/executor_test_ops.h"
#include "tests/runtime/loop_builder.h"

namespace weft {
namespace {

using testing::AddLoop;
using testing::GraphDefBuilder;
using testing::LoopOutputs;
using testing::LoopVars;
using testing::WithRealOps;

std::unique_ptr<Session> NewSession(int cpus) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = cpus;
  options.config.set_intra_op_parallelism_threads(1);
  return NewLocalSession(options);
}

Tensor I32(int32_t v) { return Tensor::Scalar<int32_t>(v); }

// acc += i * i, with the multiply and the add as separate nodes so that a
// random placement can split them.
std::string AddSquares(GraphDefBuilder& b, const LoopVars& v) {
  const std::string sq = v.i + "_sq", sum = v.i + "_sum";
  b.Op(sq, "Mul", {v.i, v.i}, {{"T", DT_INT32}});
  b.Op(sum, "AddV2", {v.acc, sq}, {{"T", DT_INT32}});
  return sum;
}

// for i < n: acc += i * i
tensorflow::GraphDef SquaresLoop(std::vector<std::string>* fetches) {
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Const("acc0", 0);
  LoopOutputs loop = AddLoop(b, "w", "n", "acc0", 10, "", AddSquares);
  b.Op("result", "Identity", {loop.acc}, {{"T", DT_INT32}});
  *fetches = {loop.i, "result"};
  return WithRealOps(b.Build());
}

// for i < n: for j < i: acc += j * j
tensorflow::GraphDef NestedLoops(std::vector<std::string>* fetches) {
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Const("acc0", 0);
  LoopOutputs outer = AddLoop(
      b, "outer", "n", "acc0", 10, "",
      [](GraphDefBuilder& b, const LoopVars& ov) {
        return AddLoop(b, "inner", ov.i, ov.acc, 10, ov.pivot, AddSquares).acc;
      });
  *fetches = {outer.i, outer.acc};
  return WithRealOps(b.Build());
}

// Every node on a random one of `devices` CPU devices.
tensorflow::GraphDef PlaceRandomly(tensorflow::GraphDef def, int devices,
                                   uint32_t seed) {
  std::mt19937 rng(seed);
  for (auto& n : *def.mutable_node()) {
    n.set_device(absl::StrCat("/device:CPU:", rng() % devices));
  }
  return def;
}

std::vector<int32_t> RunLoop(const tensorflow::GraphDef& def, int cpus,
                             const std::vector<std::string>& fetches, int32_t n,
                         tensorflow::RunMetadata* metadata = nullptr) {
  std::unique_ptr<Session> s = NewSession(cpus);
  absl::Status st = s->Create(def);
  std::vector<Tensor> out;
  tensorflow::RunOptions options;
  options.set_output_partition_graphs(true);
  options.set_timeout_in_ms(20000);  // a lost transfer must not hang
  if (st.ok()) {
    st = s->Run(options, {{"n", I32(n)}}, fetches, {}, &out, metadata);
  }
  EXPECT_TRUE(st.ok()) << "n = " << n << ": " << st;
  std::vector<int32_t> values;
  for (const Tensor& t : out) values.push_back(t.scalar<int32_t>());
  return values;
}

TEST(MultiDeviceLoopTest, LoopBodySplitOverDevicesMatchesOneDevice) {
  std::vector<std::string> fetches;
  const tensorflow::GraphDef def = SquaresLoop(&fetches);
  for (int32_t n : {0, 1, 7}) {
    const std::vector<int32_t> want = RunLoop(def, 1, fetches, n);
    int32_t sum = 0;
    for (int32_t i = 0; i < n; ++i) sum += i * i;
    ASSERT_EQ(want, (std::vector<int32_t>{n, sum}));
    for (int devices : {2, 3}) {
      for (uint32_t seed = 0; seed < 6; ++seed) {
        EXPECT_EQ(RunLoop(PlaceRandomly(def, devices, seed), devices, fetches, n),
                  want)
            << devices << " devices, seed " << seed << ", n = " << n;
      }
    }
  }
}

TEST(MultiDeviceLoopTest, NestedLoopsSplitOverDevicesMatchOneDevice) {
  std::vector<std::string> fetches;
  const tensorflow::GraphDef def = NestedLoops(&fetches);
  for (int32_t n : {0, 3, 6}) {
    const std::vector<int32_t> want = RunLoop(def, 1, fetches, n);
    int32_t sum = 0;
    for (int32_t i = 0; i < n; ++i) {
      for (int32_t j = 0; j < i; ++j) sum += j * j;
    }
    ASSERT_EQ(want, (std::vector<int32_t>{n, sum}));
    for (uint32_t seed = 0; seed < 8; ++seed) {
      EXPECT_EQ(RunLoop(PlaceRandomly(def, 3, seed), 3, fetches, n), want)
          << "seed " << seed << ", n = " << n;
    }
  }
}

// The body's multiply on CPU:1, everything else on CPU:0: CPU:1 gets a
// control loop (Enter/Merge/Switch/NextIteration) whose Switch reads the
// LoopCond through a transfer, and its _Recv waits on that loop's Merge.
TEST(MultiDeviceLoopTest, ReceivingDeviceGetsAControlLoop) {
  std::vector<std::string> fetches;
  tensorflow::GraphDef def = SquaresLoop(&fetches);
  for (auto& n : *def.mutable_node()) {
    n.set_device(n.name() == "w/i_sq" ? "/device:CPU:1" : "/device:CPU:0");
  }
  tensorflow::RunMetadata metadata;
  EXPECT_EQ(RunLoop(def, 2, fetches, 5, &metadata),
            (std::vector<int32_t>{5, 0 + 1 + 4 + 9 + 16}));
  ASSERT_EQ(metadata.partition_graphs_size(), 2);
  const tensorflow::GraphDef* cpu1 = nullptr;
  for (const auto& g : metadata.partition_graphs()) {
    for (const auto& n : g.node()) {
      if (n.name() == "w/i_sq") cpu1 = &g;
    }
  }
  ASSERT_NE(cpu1, nullptr);
  std::vector<std::string> ops;
  bool recv_waits_on_merge = false, cond_received = false;
  for (const auto& n : cpu1->node()) {
    ops.push_back(n.op());
    if (n.op() == "_Recv") {
      for (const std::string& in : n.input()) {
        if (in.find("/_cloop") != std::string::npos && in[0] == '^') {
          recv_waits_on_merge = true;
        }
      }
      if (n.attr().at("tensor_name").s() == "loopcond_w/cond") {
        cond_received = true;
      }
    }
  }
  EXPECT_THAT(ops, ::testing::IsSupersetOf({"Enter", "Merge", "Switch",
                                            "NextIteration", "_Recv",
                                            "_Send"}));
  EXPECT_TRUE(recv_waits_on_merge);
  EXPECT_TRUE(cond_received);
}

}  // namespace
}  // namespace weft
