// The Graph container, traversals, static shapes and placement.
#include "graph/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/algorithm.h"
#include "graph/graph_def_loader.h"
#include "graph/placer.h"
#include "graph/shape_check.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using testing::GraphDefBuilder;
using ::testing::HasSubstr;
using testing::TestOps;

tensorflow::NodeDef MakeNode(const std::string& name, const std::string& op,
                             std::vector<std::string> inputs = {}) {
  tensorflow::NodeDef n;
  n.set_name(name);
  n.set_op(op);
  for (auto& i : inputs) n.add_input(i);
  return n;
}

TEST(GraphTest, AddFindRemove) {
  Graph g(&TestOps());
  tensorflow::NodeDef c = GraphDefBuilder().Const("c", 5).Build().node(0);
  absl::StatusOr<Node*> a = g.AddNode(c);
  ASSERT_TRUE(a.ok()) << a.status();
  tensorflow::NodeDef neg = MakeNode("n", "Neg", {"c"});
  (*neg.mutable_attr())["T"].set_type(DT_INT32);
  absl::StatusOr<Node*> n = g.AddNode(neg);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_NE(g.AddEdge(*a, 0, *n, 0), nullptr);
  EXPECT_EQ(g.AddEdge(*a, 0, *n, 0), nullptr);  // input 0 already fed
  EXPECT_EQ(g.AddEdge(*a, 1, *n, 0), nullptr);  // no output 1
  const Edge* ctl = g.AddControlEdge(*a, *n);
  EXPECT_EQ(g.AddControlEdge(*a, *n), ctl);  // deduplicated
  EXPECT_EQ(g.num_edges(), 2);
  EXPECT_EQ(g.FindNode("n"), *n);
  EXPECT_EQ(g.FindNode("zz"), nullptr);
  EXPECT_EQ((*n)->num_inputs(), 1);
  EXPECT_EQ((*n)->output_type(0), DT_INT32);

  EXPECT_EQ(g.AddNode(c).status().code(), absl::StatusCode::kAlreadyExists);
  absl::Status unknown = g.AddNode(MakeNode("u", "Nope")).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(unknown.message()),
              HasSubstr("op 'Nope' (node 'u') is not registered in Weft"));

  g.RemoveNode(*a);
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.num_edges(), 0);
  EXPECT_EQ(g.num_node_ids(), 2);
  EXPECT_EQ(g.FindNodeId(0), nullptr);
  EXPECT_TRUE((*n)->in_edges().empty());
  tensorflow::GraphDef out;
  g.ToGraphDef(&out);
  ASSERT_EQ(out.node_size(), 1);
  EXPECT_EQ(out.node(0).input_size(), 0);
}

TEST(GraphTest, NodeKinds) {
  GraphDefBuilder b;
  b.Const("c", 1).Placeholder("p", DT_BOOL);
  b.Op("s", "Switch", {"c", "p"}, {{"T", DT_INT32}});
  b.Op("m", "Merge", {"s", "s:1"}, {{"T", DT_INT32}, {"N", 2}});
  auto g = ConvertGraphDefToGraph(b.Build(), TestOps());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE((*g)->FindNode("c")->IsConstant());
  EXPECT_TRUE((*g)->FindNode("p")->IsPlaceholder());
  EXPECT_TRUE((*g)->FindNode("s")->IsSwitch());
  EXPECT_TRUE((*g)->FindNode("m")->IsMerge());
  EXPECT_FALSE((*g)->FindNode("m")->IsLoopOp());
}

TEST(GraphTest, TopologicalOrderPutsProducersFirst) {
  GraphDefBuilder b;
  b.Op("d", "AddV2", {"b", "c"}, {{"T", DT_INT32}});
  b.Op("c", "Neg", {"a"}, {{"T", DT_INT32}});
  b.Op("b", "Neg", {"a"}, {{"T", DT_INT32}});
  b.Const("a", 1);
  auto g = ConvertGraphDefToGraph(b.Build(), TestOps());
  ASSERT_TRUE(g.ok()) << g.status();
  auto order = TopologicalOrder(**g);
  ASSERT_TRUE(order.ok());
  std::vector<std::string> names;
  for (Node* n : *order) names.push_back(n->name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "c", "b", "d"}));
}

TEST(GraphTest, ShapesUseConstValues) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({-1, 3}));
  b.ConstF("two", 2.0f);
  b.Op("y", "AddV2", {"x", "two"}, {{"T", DT_FLOAT}});
  auto g = ConvertGraphDefToGraph(b.Build(), TestOps());
  ASSERT_TRUE(g.ok()) << g.status();
  auto shapes = CheckShapes(**g);
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ(shapes->outputs[(*g)->FindNode("y")->id()][0].DebugString(),
            "[?,3]");
}

TEST(GraphTest, PlacesEverythingOnTheFirstDevice) {
  GraphDefBuilder b;
  b.Const("a", 1);
  b.mutable_def()->mutable_node(0)->set_device("/device:GPU:3");
  auto g = ConvertGraphDefToGraph(b.Build(), TestOps());
  ASSERT_TRUE(g.ok());
  const std::string cpu = "/job:localhost/replica:0/task:0/device:CPU:0";
  ASSERT_TRUE(PlaceGraph({cpu}, g->get()).ok());
  EXPECT_EQ((*g)->FindNode("a")->assigned_device(), cpu);
  EXPECT_EQ((*g)->FindNode("a")->requested_device(), "/device:GPU:3");
  EXPECT_EQ(PlaceGraph(std::vector<std::string>{}, g->get()).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace weft
