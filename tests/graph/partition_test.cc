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
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "tests/runtime/executor_test_ops.h"

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

}  // namespace
}  // namespace weft
