// Partitioner: what it writes (TensorFlow's _Send/_Recv attrs, one transfer
// per tensor and destination device, dummy transfers for control edges) and
// that every partition is a valid graph. Execution equivalence is checked by
// tests/runtime/multi_device_session_test.cc.
#include "graph/partition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_def_loader.h"
#include "graph/placer.h"
#include "runtime/core/status.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "tests/runtime/executor_test_ops.h"
#include "tests/runtime/loop_builder.h"

namespace weft {
namespace {

using testing::Attr;
using testing::GraphDefBuilder;

std::string Cpu(int i) {
  return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i);
}

const std::pair<std::string, Attr> kFloat = {"T", DT_FLOAT};

std::vector<const tensorflow::NodeDef*> OfOp(const tensorflow::GraphDef& g,
                                             const std::string& op) {
  std::vector<const tensorflow::NodeDef*> out;
  for (const auto& n : g.node()) {
    if (n.op() == op) out.push_back(&n);
  }
  return out;
}

const tensorflow::NodeDef* Find(const tensorflow::GraphDef& g,
                                const std::string& name) {
  for (const auto& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

class PartitionTest : public ::testing::Test {
 protected:
  // a (CPU:0) feeds b and c (CPU:1) and d (CPU:2); a control edge a -> e
  // (CPU:1); f (CPU:1) reads a variable's ref from CPU:0.
  void SetUp() override {
    GraphDefBuilder b;
    b.ConstF("a", 1.0f);
    b.Op("v", "VariableV2", {},
         {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({})}});
    b.Op("b", "Neg", {"a"}, {kFloat});
    b.Op("c", "AddV2", {"a", "a"}, {kFloat});
    b.Op("d", "Neg", {"a"}, {kFloat});
    b.ConstF("e0", 2.0f);
    b.Op("e", "Neg", {"e0", "^a"}, {kFloat});
    b.Op("f", "Neg", {"v"}, {kFloat});
    auto* def = b.mutable_def();
    for (auto& n : *def->mutable_node()) {
      if (n.name() == "a" || n.name() == "v") n.set_device(Cpu(0));
      if (n.name() == "b" || n.name() == "c" || n.name() == "e" ||
          n.name() == "e0" || n.name() == "f") {
        n.set_device(Cpu(1));
      }
      if (n.name() == "d") n.set_device(Cpu(2));
    }
    auto g = ConvertGraphDefToGraph(b.Build(), GlobalOpRegistry());
    ASSERT_TRUE(g.ok()) << g.status();
    graph_ = std::move(*g);
    PlacerOptions placer;
    placer.devices = {Cpu(0), Cpu(1), Cpu(2)};
    placer.kernels = &GlobalKernelRegistry();
    ASSERT_TRUE(PlaceGraph(placer, graph_.get()).ok());
    PartitionOptions options;
    options.incarnation = [](const std::string& d) -> uint64_t {
      return d == Cpu(0) ? 0xfedcba9876543210ull : 7;
    };
    auto parts = PartitionGraph(options, *graph_);
    ASSERT_TRUE(parts.ok()) << parts.status();
    parts_ = std::move(*parts);
  }

  std::unique_ptr<Graph> graph_;
  std::map<std::string, tensorflow::GraphDef> parts_;
};

TEST_F(PartitionTest, OnePartitionPerDeviceEachValid) {
  ASSERT_EQ(parts_.size(), 3u);
  std::set<std::string> names;
  for (const auto& [device, part] : parts_) {
    for (const auto& n : part.node()) {
      EXPECT_EQ(n.device(), device) << n.name();
      EXPECT_TRUE(names.insert(n.name()).second) << "duplicate " << n.name();
    }
    auto loaded = ConvertGraphDefToGraph(part, GlobalOpRegistry());
    EXPECT_TRUE(loaded.ok()) << device << ": " << loaded.status();
  }
  EXPECT_NE(Find(parts_[Cpu(0)], "a"), nullptr);
  EXPECT_NE(Find(parts_[Cpu(1)], "b"), nullptr);
  EXPECT_NE(Find(parts_[Cpu(2)], "d"), nullptr);
}

TEST_F(PartitionTest, SendRecvCarryTensorFlowsAttrs) {
  const tensorflow::GraphDef& p1 = parts_[Cpu(1)];
  // b and c (both inputs) share one _Recv of a:0; f gets v's value.
  const tensorflow::NodeDef* b = Find(p1, "b");
  const tensorflow::NodeDef* c = Find(p1, "c");
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->input(0), b->input(0));
  EXPECT_EQ(c->input(1), b->input(0));
  const tensorflow::NodeDef* recv = Find(p1, b->input(0));
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->op(), "_Recv");
  EXPECT_TRUE(absl::StartsWith(recv->name(), "a/_")) << recv->name();
  const std::string tensor_name = recv->attr().at("tensor_name").s();
  EXPECT_TRUE(absl::StartsWith(tensor_name, "edge_")) << tensor_name;
  EXPECT_TRUE(absl::EndsWith(tensor_name, "_a")) << tensor_name;
  EXPECT_EQ(recv->attr().at("send_device").s(), Cpu(0));
  EXPECT_EQ(recv->attr().at("recv_device").s(), Cpu(1));
  EXPECT_EQ(
      static_cast<uint64_t>(recv->attr().at("send_device_incarnation").i()),
      0xfedcba9876543210ull);
  EXPECT_FALSE(recv->attr().at("client_terminated").b());
  EXPECT_EQ(recv->attr().at("tensor_type").type(), tensorflow::DT_FLOAT);

  // The matching _Send in CPU:0 has the same tensor_name and reads a.
  const tensorflow::NodeDef* send = nullptr;
  for (const auto* s : OfOp(parts_[Cpu(0)], "_Send")) {
    if (s->attr().at("tensor_name").s() == tensor_name) send = s;
  }
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->input(0), "a");
  EXPECT_EQ(send->attr().at("T").type(), tensorflow::DT_FLOAT);
  EXPECT_EQ(send->attr().at("recv_device").s(), Cpu(1));

  // The ref edge v -> f is sent as a plain float.
  const tensorflow::NodeDef* f = Find(p1, "f");
  const tensorflow::NodeDef* f_recv = Find(p1, f->input(0));
  ASSERT_NE(f_recv, nullptr);
  EXPECT_EQ(f_recv->attr().at("tensor_type").type(), tensorflow::DT_FLOAT);
}

TEST_F(PartitionTest, OneTransferPerTensorAndDestination) {
  // a:0 goes to CPU:1 (once, for b and c) and CPU:2; v to CPU:1; plus the
  // dummy for the control edge a -> e.
  EXPECT_EQ(OfOp(parts_[Cpu(0)], "_Send").size(), 4u);
  EXPECT_EQ(OfOp(parts_[Cpu(1)], "_Recv").size(), 3u);
  EXPECT_EQ(OfOp(parts_[Cpu(2)], "_Recv").size(), 1u);
  EXPECT_TRUE(OfOp(parts_[Cpu(2)], "_Send").empty());
}

TEST_F(PartitionTest, ControlEdgesUseADummyTransfer) {
  const tensorflow::GraphDef& p0 = parts_[Cpu(0)];
  const tensorflow::GraphDef& p1 = parts_[Cpu(1)];
  std::vector<const tensorflow::NodeDef*> consts = OfOp(p0, "Const");
  const tensorflow::NodeDef* dummy = nullptr;
  for (const auto* n : consts) {
    if (n->name() != "a") dummy = n;
  }
  ASSERT_NE(dummy, nullptr);
  EXPECT_TRUE(absl::StartsWith(dummy->name(), "a/ctrl/_")) << dummy->name();
  EXPECT_THAT(dummy->input(), ::testing::ElementsAre("^a"));
  EXPECT_EQ(dummy->attr().at("value").tensor().tensor_shape().dim(0).size(), 0);
  const tensorflow::NodeDef* e = Find(p1, "e");
  ASSERT_EQ(e->input_size(), 2);
  EXPECT_EQ(e->input(0), "e0");
  ASSERT_TRUE(absl::StartsWith(e->input(1), "^"));
  const tensorflow::NodeDef* identity = Find(p1, e->input(1).substr(1));
  ASSERT_NE(identity, nullptr);
  EXPECT_EQ(identity->op(), "Identity");
  const tensorflow::NodeDef* recv = Find(p1, identity->input(0));
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->op(), "_Recv");
}

// TensorFlow's read control: a variable on CPU:0 updated there (up) and
// read on CPU:1 twice, once after the update (`after`, under ^up and also
// fed by x) and once without (`plain`). Each read gets its own _Recv; the
// ordered one waits for every other input of its reader, so the value,
// encoded when CPU:1 asks for it, is the updated one.
TEST(PartitionRefTest, AReadOrderedAfterAnUpdateWaitsForIt) {
  GraphDefBuilder b;
  b.Op("v", "VariableV2", {}, {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({})}})
      .ConstF("one", 1.0f)
      .Op("up", "AssignAdd", {"v", "one"}, {kFloat})
      .ConstF("x", 2.0f)
      .Op("after", "Add", {"v", "x", "^up"}, {kFloat})
      .Op("plain", "Neg", {"v"}, {kFloat});
  tensorflow::GraphDef def = b.Build();
  for (auto& n : *def.mutable_node()) {
    const bool reader = n.name() == "after" || n.name() == "plain" || n.name() == "x";
    n.set_device(Cpu(reader ? 1 : 0));
  }
  auto g = ConvertGraphDefToGraph(def, GlobalOpRegistry());
  ASSERT_TRUE(g.ok()) << g.status();
  PlacerOptions placer;
  placer.devices = {Cpu(0), Cpu(1)};
  placer.kernels = &GlobalKernelRegistry();
  ASSERT_TRUE(PlaceGraph(placer, g->get()).ok());
  auto parts = PartitionGraph(PartitionOptions(), **g);
  ASSERT_TRUE(parts.ok()) << parts.status();
  const tensorflow::GraphDef& p1 = (*parts)[Cpu(1)];
  const tensorflow::NodeDef* after = Find(p1, "after");
  const tensorflow::NodeDef* plain = Find(p1, "plain");
  ASSERT_NE(after, nullptr);
  ASSERT_NE(plain, nullptr);
  EXPECT_NE(after->input(0), plain->input(0)) << "the two reads share a _Recv";
  const tensorflow::NodeDef* ordered = Find(p1, after->input(0));
  const tensorflow::NodeDef* unordered = Find(p1, plain->input(0));
  ASSERT_NE(ordered, nullptr);
  ASSERT_NE(unordered, nullptr);
  EXPECT_EQ(ordered->op(), "_Recv");
  // Its control inputs: x (same partition) and the transfer of ^up.
  std::vector<std::string> controls(ordered->input().begin(),
                                    ordered->input().end());
  EXPECT_THAT(controls, ::testing::Contains("^x"));
  ASSERT_EQ(after->input_size(), 3);
  EXPECT_THAT(controls, ::testing::Contains(after->input(2)));  // ^up's transfer
  EXPECT_EQ(unordered->input_size(), 0);
  for (const auto& [device, part] : *parts) {
    auto loaded = ConvertGraphDefToGraph(part, GlobalOpRegistry());
    EXPECT_TRUE(loaded.ok()) << device << ": " << loaded.status();
  }
}

// The partitioner's transfers pair up; a _Recv whose _Send is missing (or
// names another incarnation) is reported by name instead of waiting forever.
TEST_F(PartitionTest, TransfersPairUpAndAStrayRecvIsNamed) {
  EXPECT_TRUE(CheckTransfersPair(parts_).ok());
  std::map<std::string, tensorflow::GraphDef> stray = parts_;
  for (auto& n : *stray[Cpu(1)].mutable_node()) {
    if (n.op() == "_Recv" && Find(parts_[Cpu(1)], "b")->input(0) == n.name()) {
      (*n.mutable_attr())["send_device_incarnation"].set_i(8);
    }
  }
  absl::Status s = CheckTransfersPair(stray);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("_Recv node '" +
                                   Find(parts_[Cpu(1)], "b")->input(0) +
                                   "' on " + Cpu(1) + " waits for tensor"));
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("would wait forever"));

  // A client-terminated _Recv is fed by the client, not by a _Send.
  std::map<std::string, tensorflow::GraphDef> fed = parts_;
  tensorflow::NodeDef* recv = fed[Cpu(2)].add_node();
  recv->set_name("fed");
  recv->set_op("_Recv");
  (*recv->mutable_attr())["tensor_name"].set_s("x");
  (*recv->mutable_attr())["client_terminated"].set_b(true);
  EXPECT_TRUE(CheckTransfersPair(fed).ok());
}

TEST(PartitionErrorsTest, UnplacedNodeIsNamed) {
  GraphDefBuilder b;
  b.ConstF("lonely", 1.0f);
  auto g = ConvertGraphDefToGraph(b.Build(), GlobalOpRegistry());
  ASSERT_TRUE(g.ok());
  auto parts = PartitionGraph(PartitionOptions(), **g);
  EXPECT_EQ(parts.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parts.status().message()),
              ::testing::HasSubstr("node 'lonely' (Const)"));
}

// ---- While loops -----------------------------------------------------------

// The counter loop "w" (acc += i) with every node on CPU:0 except those
// `on_cpu1` names, placed and partitioned.
absl::StatusOr<std::map<std::string, tensorflow::GraphDef>> PartitionLoop(
    const std::set<std::string>& on_cpu1, bool drop_loop_cond = false) {
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Const("acc0", 0);
  testing::AddLoop(b, "w", "n", "acc0", 10, "",
                   [](GraphDefBuilder& b, const testing::LoopVars& v) {
                     b.Op("w/sum", "AddV2", {v.acc, v.i}, {{"T", DT_INT32}});
                     return std::string("w/sum");
                   });
  tensorflow::GraphDef def = testing::WithRealOps(b.Build());
  for (auto& n : *def.mutable_node()) {
    n.set_device(on_cpu1.count(n.name()) ? Cpu(1) : Cpu(0));
    if (drop_loop_cond) {
      // Switches read the predicate straight from Less: no pivot to follow.
      for (std::string& in : *n.mutable_input()) {
        if (in == "w/cond") in = "w/less";
      }
    }
  }
  if (drop_loop_cond) {
    auto* nodes = def.mutable_node();
    for (int i = 0; i < nodes->size(); ++i) {
      if (nodes->Get(i).name() == "w/cond") {
        nodes->DeleteSubrange(i, 1);
        break;
      }
    }
  }
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g,
                        ConvertGraphDefToGraph(def, GlobalOpRegistry()));
  PlacerOptions placer;
  placer.devices = {Cpu(0), Cpu(1)};
  placer.kernels = &GlobalKernelRegistry();
  WEFT_RETURN_IF_ERROR(PlaceGraph(placer, g.get()));
  return PartitionGraph(PartitionOptions(), *g);
}

// A Switch goes with its data input, a NextIteration with the Merge it
// feeds, as TensorFlow's partitioner moves them: this loop then needs no
// transfer at all.
TEST(PartitionLoopTest, LoopPlumbingFollowsItsData) {
  auto parts = PartitionLoop({"w/switch_acc", "w/next_acc", "w/exit_acc"});
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_NE(Find(parts->begin()->second, "w/switch_acc"), nullptr);
  EXPECT_TRUE(OfOp(parts->begin()->second, "_Send").empty());
}

// A body node on CPU:1: CPU:1 gets one control loop for frame "w", whose
// Switch reads the LoopCond through its own transfer; every _Recv on CPU:1
// waits on the control loop's Merge.
TEST(PartitionLoopTest, ReceivingDeviceFollowsTheLoop) {
  auto parts = PartitionLoop({"w/sum"});
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  const tensorflow::GraphDef& cpu1 = parts->at(Cpu(1));
  const auto enters = OfOp(cpu1, "Enter");
  ASSERT_EQ(enters.size(), 1u);
  EXPECT_EQ(enters[0]->attr().at("frame_name").s(), "w");
  ASSERT_EQ(OfOp(cpu1, "Merge").size(), 1u);
  const std::string merge = OfOp(cpu1, "Merge")[0]->name();
  ASSERT_EQ(OfOp(cpu1, "Switch").size(), 1u);
  ASSERT_EQ(OfOp(cpu1, "NextIteration").size(), 1u);
  std::string cond_recv;
  for (const tensorflow::NodeDef* recv : OfOp(cpu1, "_Recv")) {
    EXPECT_THAT(std::vector<std::string>(recv->input().begin(),
                                         recv->input().end()),
                ::testing::Contains("^" + merge))
        << recv->name();
    if (recv->attr().at("tensor_name").s() == "loopcond_w/cond") {
      cond_recv = recv->name();
    }
  }
  ASSERT_FALSE(cond_recv.empty());
  EXPECT_EQ(OfOp(cpu1, "Switch")[0]->input(1), cond_recv);
}

TEST(PartitionLoopTest, LoopWithoutLoopCondAcrossDevicesIsAnError) {
  auto parts = PartitionLoop({"w/sum"}, /*drop_loop_cond=*/true);
  ASSERT_FALSE(parts.ok());
  EXPECT_EQ(parts.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parts.status().message(),
              ::testing::HasSubstr("while loop 'w' spans devices but has no "
                                   "LoopCond"));
}

}  // namespace
}  // namespace weft
