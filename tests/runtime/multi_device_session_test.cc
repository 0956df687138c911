// LocalSession over several CPU devices: placement + partitioning +
// _Send/_Recv through a per-step rendezvous must give exactly the results of
// a single-device session. Random DAGs (seeded, with diamonds and control
// edges) placed randomly on 2-4 devices, a conditional whose deadness crosses
// devices, an MLP with ref and resource variables updated over several
// steps, and a step failing in one partition while another waits for it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/graph.pb.h"
#include "runtime/session.h"
#include "runtime/core/tensor.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using testing::GraphDefBuilder;
using ::testing::HasSubstr;

const std::pair<std::string, Attr> kFloat = {"T", DT_FLOAT};

std::unique_ptr<Session> NewSession(int cpus, bool soft = false,
                                    bool log = false, int inter_op = 0) {
  SessionOptions options;
  options.config.set_inter_op_parallelism_threads(inter_op);
  (*options.config.mutable_device_count())["CPU"] = cpus;
  options.config.set_allow_soft_placement(soft);
  options.config.set_log_device_placement(log);
  options.config.set_intra_op_parallelism_threads(1);
  return NewLocalSession(options);
}

Tensor Floats(std::vector<int64_t> dims, std::vector<float> values) {
  Tensor t(DT_FLOAT, TensorShape(dims));
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

Tensor Ints(std::vector<int64_t> dims, std::vector<int32_t> values) {
  Tensor t(DT_INT32, TensorShape(dims));
  for (size_t i = 0; i < values.size(); ++i) t.data<int32_t>()[i] = values[i];
  return t;
}

void SetDevice(tensorflow::GraphDef* def, const std::string& node,
               const std::string& device) {
  for (auto& n : *def->mutable_node()) {
    if (n.name() == node) n.set_device(device);
  }
}

// Bitwise equality, so NaN and -0 count too.
void ExpectSameTensors(const std::vector<Tensor>& a,
                       const std::vector<Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].dtype(), b[i].dtype()) << what << " #" << i;
    ASSERT_EQ(a[i].shape(), b[i].shape()) << what << " #" << i;
    EXPECT_EQ(std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].TotalBytes()),
              0)
        << what << " fetch #" << i;
  }
}

// ---- Random DAGs -----------------------------------------------------------

struct RandomGraph {
  tensorflow::GraphDef def;
  std::vector<std::string> fetches;
  int devices_used = 0;
};

// Nodes: a few constants, then ops over random earlier nodes (so diamonds
// are common), random control edges, and a Switch/Merge pair whose branches
// may sit on other devices than the Switch. Every node asks for a random
// CPU among `num_devices`.
RandomGraph MakeRandomGraph(uint32_t seed, int num_devices) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) {
    return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng));
  };
  GraphDefBuilder b;
  std::vector<std::string> live;  // nodes that are never dead
  const int num_consts = 2 + pick(3);
  for (int i = 0; i < num_consts; ++i) {
    const std::string name = absl::StrCat("c", i);
    b.ConstT(name, Floats({2}, {static_cast<float>(pick(9) - 4),
                                static_cast<float>(i + 1)}));
    live.push_back(name);
  }
  const int num_ops = 8 + pick(20);
  const int switch_at = pick(num_ops);
  for (int i = 0; i < num_ops; ++i) {
    const std::string name = absl::StrCat("n", i);
    auto any = [&] { return live[pick(static_cast<int>(live.size()))]; };
    if (i == switch_at) {
      // pred -> Switch -> Neg on each branch -> Merge; only the Merge (and
      // its value) join the live set.
      Tensor pred(DT_BOOL, TensorShape({}));
      pred.data<bool>()[0] = pick(2) == 1;
      b.ConstT(name + "_pred", pred);
      b.Op(name + "_sw", "Switch", {any(), name + "_pred"}, {kFloat});
      b.Op(name + "_f", "Neg", {name + "_sw:0"}, {kFloat});
      b.Op(name + "_t", "Neg", {name + "_sw:1"}, {kFloat});
      b.Op(name, "Merge", {name + "_f", name + "_t"}, {kFloat, {"N", 2}});
      live.push_back(name);
      continue;
    }
    std::vector<std::string> inputs;
    std::string op;
    switch (pick(5)) {
      case 0:
        op = "AddV2";
        inputs = {any(), any()};
        break;
      case 1:
        op = "Sub";
        inputs = {any(), any()};
        break;
      case 2:
        op = "Neg";
        inputs = {any()};
        break;
      case 3:
        op = "Identity";
        inputs = {any()};
        break;
      default:
        op = "Mul";
        inputs = {any(), any()};
        break;
    }
    const int num_control = pick(4) == 0 ? 1 + pick(2) : 0;
    for (int k = 0; k < num_control; ++k) inputs.push_back("^" + any());
    b.Op(name, op, inputs, {kFloat});
    live.push_back(name);
  }
  RandomGraph out;
  out.def = b.Build();
  auto* nodes = out.def.mutable_node();
  std::vector<bool> used(num_devices, false);
  for (auto& n : *nodes) {
    const int d = pick(num_devices);
    used[d] = true;
    n.set_device(absl::StrCat("/device:CPU:", d));
  }
  for (bool u : used) out.devices_used += u ? 1 : 0;
  out.fetches = live;
  return out;
}

// A deadline for the random-DAG steps: a partitioning bug that loses a
// transfer then fails with DEADLINE_EXCEEDED under the seed's trace instead
// of hanging until the test runner kills it.
tensorflow::RunOptions WithDeadline() {
  tensorflow::RunOptions options;
  options.set_timeout_in_ms(10000);
  return options;
}

TEST(MultiDeviceSessionTest, RandomDagsMatchSingleDevice) {
  int partitioned_runs = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const int num_devices = 2 + static_cast<int>(seed % 3);
    RandomGraph g = MakeRandomGraph(seed, num_devices);
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", ", num_devices, " devices"));

    auto single = NewSession(1, /*soft=*/true);
    ASSERT_TRUE(single->Create(g.def).ok());
    std::vector<Tensor> expected;
    absl::Status s = single->Run({}, g.fetches, {}, &expected);
    ASSERT_TRUE(s.ok()) << s;

    auto multi = NewSession(num_devices);
    ASSERT_TRUE(multi->Create(g.def).ok());
    tensorflow::RunOptions options = WithDeadline();
    options.set_output_partition_graphs(true);
    for (int step = 0; step < 2; ++step) {  // a second step reuses the run
      std::vector<Tensor> got;
      tensorflow::RunMetadata meta;
      s = multi->Run(options, {}, g.fetches, {}, &got, &meta);
      ASSERT_TRUE(s.ok()) << s;
      ExpectSameTensors(expected, got, "random dag");
      if (meta.partition_graphs_size() > 1) ++partitioned_runs;
    }
  }
  EXPECT_GE(partitioned_runs, 60);  // the test must exercise transfers
}

TEST(MultiDeviceSessionTest, InlineExecutionAndConcurrentSteps) {
  // inter_op_parallelism_threads < 0 runs every partition on the caller's
  // thread (a _Recv waits without holding it); and concurrent Runs of one
  // session each get their own rendezvous.
  for (uint32_t seed = 100; seed < 110; ++seed) {
    RandomGraph g = MakeRandomGraph(seed, 3);
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    auto single = NewSession(1, /*soft=*/true);
    ASSERT_TRUE(single->Create(g.def).ok());
    std::vector<Tensor> expected;
    ASSERT_TRUE(single->Run({}, g.fetches, {}, &expected).ok());

    auto inline_session = NewSession(3, false, false, /*inter_op=*/-1);
    ASSERT_TRUE(inline_session->Create(g.def).ok());
    std::vector<Tensor> got;
    absl::Status s = inline_session->Run(WithDeadline(), {}, g.fetches, {},
                                         &got, nullptr);
    ASSERT_TRUE(s.ok()) << s;
    ExpectSameTensors(expected, got, "inline");

    auto shared = NewSession(3, false, false, /*inter_op=*/2);
    ASSERT_TRUE(shared->Create(g.def).ok());
    std::vector<std::thread> threads;
    std::vector<std::vector<Tensor>> results(4);
    std::vector<absl::Status> statuses(4);
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 10 && statuses[t].ok(); ++i) {
          statuses[t] = shared->Run(WithDeadline(), {}, g.fetches, {},
                                    &results[t], nullptr);
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) {
      ASSERT_TRUE(statuses[t].ok()) << statuses[t];
      ExpectSameTensors(expected, results[t], "concurrent");
    }
  }
}

// ---- Deadness across devices ----------------------------------------------

TEST(MultiDeviceSessionTest, DeadnessCrossesDevices) {
  for (bool taken : {false, true}) {
    GraphDefBuilder b;
    b.ConstF("x", 3.0f).ConstF("k", 5.0f);
    Tensor pred(DT_BOOL, TensorShape({}));
    pred.data<bool>()[0] = taken;
    b.ConstT("pred", pred);
    b.Op("sw", "Switch", {"x", "pred"}, {kFloat});
    b.Op("f", "Neg", {"sw:0"}, {kFloat});
    b.Op("t", "Identity", {"sw:1"}, {kFloat});
    b.Op("m", "Merge", {"f", "t"}, {kFloat, {"N", 2}});
    // g waits (control edge, across devices) on the untaken side only when
    // `taken` is false: it is then dead, and Merge "z" takes k instead.
    b.Op("g", "Identity", {"k", "^t"}, {kFloat});
    b.Op("z", "Merge", {"g", "k"}, {kFloat, {"N", 2}});
    tensorflow::GraphDef def = b.Build();
    SetDevice(&def, "sw", "/device:CPU:0");
    SetDevice(&def, "f", "/device:CPU:1");
    SetDevice(&def, "t", "/device:CPU:2");
    SetDevice(&def, "m", "/device:CPU:1");
    SetDevice(&def, "g", "/device:CPU:0");
    SetDevice(&def, "z", "/device:CPU:2");
    // With `taken` both of z's inputs are live and either may win the race,
    // so z is fetched only when g is dead.
    std::vector<std::string> fetches = {"m", "m:1"};
    if (!taken) fetches = {"m", "m:1", "z", "z:1"};

    auto single = NewSession(1, /*soft=*/true);
    ASSERT_TRUE(single->Create(def).ok());
    std::vector<Tensor> expected, got;
    ASSERT_TRUE(single->Run({}, fetches, {}, &expected).ok());
    auto multi = NewSession(3);
    ASSERT_TRUE(multi->Create(def).ok());
    absl::Status s = multi->Run({}, fetches, {}, &got);
    ASSERT_TRUE(s.ok()) << s;
    ExpectSameTensors(expected, got, taken ? "taken" : "not taken");
    EXPECT_EQ(got[0].data<float>()[0], taken ? 3.0f : -3.0f);
    if (!taken) {
      EXPECT_EQ(got[2].data<float>()[0], 5.0f);
      EXPECT_EQ(got[3].data<int32_t>()[0], 1);
    }
  }
}

// ---- An MLP with variables -------------------------------------------------

tensorflow::GraphDef MlpGraph() {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({4, 3}));
  // Ref variables on CPU:1.
  b.Op("w1", "VariableV2", {},
       {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({3, 5})}});
  b.Op("b1", "VariableV2", {},
       {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({5})}});
  std::vector<float> w1(15), b1(5), w2(10), b2(2);
  for (int i = 0; i < 15; ++i) w1[i] = 0.1f * static_cast<float>(i % 7 - 3);
  for (int i = 0; i < 5; ++i) b1[i] = 0.05f * static_cast<float>(i);
  for (int i = 0; i < 10; ++i) w2[i] = 0.2f * static_cast<float>(3 - i % 5);
  b2 = {0.5f, -0.25f};
  b.ConstT("w1_init", Floats({3, 5}, w1));
  b.ConstT("b1_init", Floats({5}, b1));
  b.Op("w1_assign", "Assign", {"w1", "w1_init"}, {kFloat});
  b.Op("b1_assign", "Assign", {"b1", "b1_init"}, {kFloat});
  // Resource variables on CPU:2.
  b.Op("w2", "VarHandleOp", {},
       {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({5, 2})}});
  b.Op("b2", "VarHandleOp", {},
       {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({2})}});
  b.ConstT("w2_init", Floats({5, 2}, w2));
  b.ConstT("b2_init", Floats({2}, b2));
  b.Op("w2_assign", "AssignVariableOp", {"w2", "w2_init"},
       {{"dtype", DT_FLOAT}});
  b.Op("b2_assign", "AssignVariableOp", {"b2", "b2_init"},
       {{"dtype", DT_FLOAT}});
  b.Op("init", "NoOp",
       {"^w1_assign", "^b1_assign", "^w2_assign", "^b2_assign"});
  // Forward pass: layer 1 on CPU:0, layer 2 on CPU:3, loss on CPU:2.
  b.Op("mm1", "MatMul", {"x", "w1"}, {kFloat});
  b.Op("pre1", "BiasAdd", {"mm1", "b1"}, {kFloat});
  b.Op("h", "Relu", {"pre1"}, {kFloat});
  b.Op("w2_read", "ReadVariableOp", {"w2"}, {{"dtype", DT_FLOAT}});
  b.Op("b2_read", "ReadVariableOp", {"b2"}, {{"dtype", DT_FLOAT}});
  b.Op("mm2", "MatMul", {"h", "w2_read"}, {kFloat});
  b.Op("logits", "AddV2", {"mm2", "b2_read"}, {kFloat});
  b.Op("sq", "Square", {"logits"}, {kFloat});
  b.ConstT("axes", Ints({2}, {0, 1}));
  b.Op("loss", "Sum", {"sq", "axes"},
       {kFloat, {"Tidx", DT_INT32}, {"keep_dims", false}});
  // "Training": shrink w1 by a multiple of itself, grow b2 by the loss.
  b.ConstF("lr", 0.01f);
  b.Op("w1_step", "Mul", {"lr", "w1"}, {kFloat});
  // After the loss has read w1 (otherwise the step races with itself).
  b.Op("w1_update", "AssignSub", {"w1", "w1_step", "^loss"}, {kFloat});
  b.Op("b2_scale", "Mul", {"lr", "loss"}, {kFloat});
  b.Op("b2_now", "ReadVariableOp", {"b2"}, {{"dtype", DT_FLOAT}});
  b.Op("b2_step", "Mul", {"b2_now", "b2_scale"}, {kFloat});
  b.Op("b2_update", "AssignAddVariableOp", {"b2", "b2_step"},
       {{"dtype", DT_FLOAT}});
  b.Op("train", "NoOp", {"^w1_update", "^b2_update"});
  tensorflow::GraphDef def = b.Build();
  for (const char* n : {"w1", "b1"}) SetDevice(&def, n, "/device:CPU:1");
  for (const char* n : {"w2", "b2"}) SetDevice(&def, n, "/device:CPU:2");
  for (const char* n : {"mm1", "pre1", "h"})
    SetDevice(&def, n, "/device:CPU:0");
  for (const char* n : {"mm2", "logits"}) SetDevice(&def, n, "/device:CPU:3");
  for (const char* n : {"sq", "loss"}) SetDevice(&def, n, "/device:CPU:2");
  return def;
}

std::vector<std::vector<Tensor>> TrainMlp(Session* s) {
  std::vector<std::vector<Tensor>> history;
  std::vector<Tensor> out;
  absl::Status st = s->Run({}, {}, {"init"}, &out);
  EXPECT_TRUE(st.ok()) << st;
  const Tensor x = Floats({4, 3}, {1, 2, 3, -1, 0.5f, 2, 0, 0, 1, 3, -2, 1});
  for (int step = 0; step < 4; ++step) {
    st = s->Run({{"x", x}}, {"loss", "logits", "h"}, {}, &out);
    EXPECT_TRUE(st.ok()) << st;
    history.push_back(out);
    st = s->Run({{"x", x}}, {}, {"train"}, &out);
    EXPECT_TRUE(st.ok()) << st;
  }
  st = s->Run({}, {"w1", "w2_read", "b2_read"}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  history.push_back(out);
  return history;
}

TEST(MultiDeviceSessionTest, MlpWithVariablesMatchesSingleDevice) {
  const tensorflow::GraphDef def = MlpGraph();
  auto single = NewSession(1, /*soft=*/true);
  ASSERT_TRUE(single->Create(def).ok());
  auto expected = TrainMlp(single.get());
  auto multi = NewSession(4);
  ASSERT_TRUE(multi->Create(def).ok());
  auto got = TrainMlp(multi.get());
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ExpectSameTensors(expected[i], got[i], absl::StrCat("mlp run ", i));
  }
  // Training changed something.
  EXPECT_NE(expected[0][0].data<float>()[0], expected[3][0].data<float>()[0]);

  // It really ran on four devices.
  tensorflow::RunOptions options;
  options.set_output_partition_graphs(true);
  tensorflow::RunMetadata meta;
  std::vector<Tensor> out;
  const Tensor x = Floats({4, 3}, std::vector<float>(12, 1.0f));
  ASSERT_TRUE(multi->Run(options, {{"x", x}}, {"loss"}, {}, &out, &meta).ok());
  EXPECT_EQ(meta.partition_graphs_size(), 4);
}

// ---- Zero-copy transfers ---------------------------------------------------

TEST(MultiDeviceSessionTest, TransferBetweenCpuDevicesSharesTheBuffer) {
  // CPU devices share host memory: the _Recv on CPU:1 must output the very
  // buffer the _Send on CPU:0 was given (here the fed tensor, which the
  // Identity on each side forwards), not a copy of it.
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.Op("sent", "Identity", {"x"}, {kFloat});
  b.Op("received", "Identity", {"sent"}, {kFloat});
  tensorflow::GraphDef def = b.Build();
  SetDevice(&def, "x", "/device:CPU:0");
  SetDevice(&def, "sent", "/device:CPU:0");
  SetDevice(&def, "received", "/device:CPU:1");
  auto s = NewSession(2);
  ASSERT_TRUE(s->Create(def).ok());
  const Tensor fed = Floats({64, 64}, std::vector<float>(64 * 64, 2.5f));
  tensorflow::RunOptions options = WithDeadline();
  options.set_output_partition_graphs(true);
  for (int step = 0; step < 2; ++step) {
    std::vector<Tensor> out;
    tensorflow::RunMetadata meta;
    absl::Status st =
        s->Run(options, {{"x", fed}}, {"received"}, {}, &out, &meta);
    ASSERT_TRUE(st.ok()) << st;
    int recvs = 0;  // the value did cross devices (to CPU:1, and back to
                    // the fetch on the client's CPU:0)
    for (const auto& part : meta.partition_graphs()) {
      for (const auto& node : part.node()) recvs += node.op() == "_Recv";
    }
    EXPECT_GE(recvs, 1) << "step " << step;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].SharesBufferWith(fed)) << "step " << step;
    ExpectSameTensors({fed}, out, "received");
  }
}

// ---- Failures ---------------------------------------------------------------

TEST(MultiDeviceSessionTest, FailureInOnePartitionAbortsTheStep) {
  // CPU:0 waits (in a _Recv) for "bad" on CPU:1, which fails at run time.
  GraphDefBuilder b;
  b.Placeholder("a", DT_FLOAT);
  b.ConstT("w", Floats({2, 2}, {1, 2, 3, 4}));
  b.Op("bad", "MatMul", {"a", "w"}, {kFloat});
  b.Op("out", "Neg", {"bad"}, {kFloat});
  tensorflow::GraphDef def = b.Build();
  SetDevice(&def, "bad", "/device:CPU:1");
  SetDevice(&def, "out", "/device:CPU:0");
  auto s = NewSession(2);
  ASSERT_TRUE(s->Create(def).ok());
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) {
    absl::Status st = s->Run({{"a", Floats({2, 3}, std::vector<float>(6, 1))}},
                             {"out"}, {}, &out);
    ASSERT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr("[[{{node bad}}]]"));
    // The next step (a fresh rendezvous) is unaffected.
    st = s->Run({{"a", Floats({1, 2}, {1, 1})}}, {"out"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(out[0].data<float>()[0], -4.0f);
  }
}

TEST(MultiDeviceSessionTest, PlacementErrorsAndSoftPlacement) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("n", "Neg", {"a"}, {kFloat});
  tensorflow::GraphDef def = b.Build();
  SetDevice(&def, "n", "/device:CPU:5");
  auto hard = NewSession(2);
  ASSERT_TRUE(hard->Create(def).ok());
  std::vector<Tensor> out;
  absl::Status st = hard->Run({}, {"n"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("node 'n' (Neg)"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("/device:CPU:5"));

  auto soft = NewSession(2, /*soft=*/true);
  ASSERT_TRUE(soft->Create(def).ok());
  st = soft->Run({}, {"n"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].data<float>()[0], -1.0f);
}

TEST(MultiDeviceSessionTest, LogsDevicePlacement) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("n", "Neg", {"a"}, {kFloat});
  tensorflow::GraphDef def = b.Build();
  SetDevice(&def, "n", "/device:CPU:1");
  auto s = NewSession(2, /*soft=*/false, /*log=*/true);
  ASSERT_TRUE(s->Create(def).ok());
  std::vector<Tensor> out;
  ::testing::internal::CaptureStderr();
  absl::Status st = s->Run({}, {"n"}, {}, &out);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_THAT(
      log, HasSubstr("n (Neg): /job:localhost/replica:0/task:0/device:CPU:1"));
  EXPECT_THAT(
      log,
      HasSubstr("a (Const): /job:localhost/replica:0/task:0/device:CPU:1"));
}

}  // namespace
}  // namespace weft
