// ConvertGraphDefToGraph: every way a GraphDef can be wrong is reported at
// load, naming the node and field.
#include "graph/graph_def_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/graph.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using testing::GraphDefBuilder;
using ::testing::HasSubstr;
using testing::TestOps;

absl::Status Load(const tensorflow::GraphDef& def) {
  return ConvertGraphDefToGraph(def, TestOps()).status();
}

void ExpectError(const tensorflow::GraphDef& def, absl::StatusCode code,
                 const std::string& substr) {
  absl::Status s = Load(def);
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(substr));
}

TEST(GraphDefLoaderTest, LoadsValidGraphAndWritesItBack) {
  GraphDefBuilder b;
  b.Const("a", 1).Const("b", 2).Op("c", "AddV2", {"a", "b"}, {{"T", DT_INT32}});
  b.Op("n", "NoOp", {"^c"});
  tensorflow::GraphDef def = b.Build();
  def.mutable_library()->add_function()->mutable_signature()->set_name("f");
  absl::StatusOr<std::unique_ptr<Graph>> g =
      ConvertGraphDefToGraph(def, TestOps());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 4);
  EXPECT_EQ((*g)->num_edges(), 3);
  Node* c = (*g)->FindNode("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->input_type(0), DT_INT32);
  EXPECT_EQ(c->input_edge(1)->src->name(), "b");
  EXPECT_EQ((*g)->library().function(0).signature().name(), "f");

  tensorflow::GraphDef out;
  (*g)->ToGraphDef(&out);
  ASSERT_EQ(out.node_size(), 4);
  EXPECT_EQ(out.node(2).input(0), "a");
  EXPECT_EQ(out.node(2).input(1), "b");
  EXPECT_EQ(out.node(3).input(0), "^c");
  EXPECT_EQ(out.library().function_size(), 1);
  EXPECT_EQ(out.versions().producer(), 2474);
}

TEST(GraphDefLoaderTest, FillsDefaultAttrs) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.Op("y", "MatMul", {"x", "x"}, {{"T", DT_FLOAT}});
  absl::StatusOr<std::unique_ptr<Graph>> g =
      ConvertGraphDefToGraph(b.Build(), TestOps());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE((*g)->FindNode("y")->def().attr().contains("transpose_a"));
}

TEST(GraphDefLoaderTest, RejectsVersions) {
  tensorflow::GraphDef def = GraphDefBuilder().Const("a", 1).Build();
  def.mutable_versions()->set_min_consumer(kGraphDefVersion + 1);
  ExpectError(def, absl::StatusCode::kInvalidArgument,
              "needs a consumer of version 2475 or newer");

  def.mutable_versions()->set_min_consumer(0);
  def.mutable_versions()->add_bad_consumers(kGraphDefVersion);
  ExpectError(def, absl::StatusCode::kInvalidArgument, "bad_consumers");

  def.mutable_versions()->clear_bad_consumers();
  def.mutable_versions()->add_bad_consumers(12);
  EXPECT_TRUE(Load(def).ok());

  def.mutable_versions()->set_producer(-1);
  ExpectError(def, absl::StatusCode::kInvalidArgument,
              "producer version -1 is below");
}

TEST(GraphDefLoaderTest, RejectsDuplicateNames) {
  GraphDefBuilder b;
  b.Const("a", 1).Const("a", 2);
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "node name 'a' is used by more than one node (nodes 0 and 1");
}

TEST(GraphDefLoaderTest, RejectsBadNames) {
  GraphDefBuilder b;
  b.Const("a:1", 1);
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "invalid name 'a:1'");
  ExpectError(GraphDefBuilder().Const("", 1).Build(),
              absl::StatusCode::kInvalidArgument, "invalid name ''");
}

TEST(GraphDefLoaderTest, RejectsUnknownOp) {
  GraphDefBuilder b;
  b.Op("f", "Frobnicate");
  ExpectError(b.Build(), absl::StatusCode::kUnimplemented,
              "op 'Frobnicate' (node 'f') is not registered in Weft");
}

TEST(GraphDefLoaderTest, RejectsMissingAttr) {
  GraphDefBuilder b;
  b.Const("a", 1).Op("n", "Neg", {"a"});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "node 'n' (Neg): missing attr 'T'");
}

TEST(GraphDefLoaderTest, RejectsWrongAttrKind) {
  GraphDefBuilder b;
  b.Const("a", 1).Op("n", "Neg", {"a"}, {{"T", 3}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "attr 'T' has type int, expected type");
}

TEST(GraphDefLoaderTest, RejectsDisallowedType) {
  GraphDefBuilder b;
  b.Placeholder("a", DT_BOOL).Op("n", "Neg", {"a"}, {{"T", DT_BOOL}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "attr 'T' is bool, which is not one of");
}

TEST(GraphDefLoaderTest, RejectsUnknownAttr) {
  GraphDefBuilder b;
  b.Const("a", 1).Op("n", "Neg", {"a"}, {{"T", DT_INT32}, {"colour", "red"}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "unknown attr 'colour'");
}

TEST(GraphDefLoaderTest, RejectsWrongInputCount) {
  GraphDefBuilder b;
  b.Const("a", 1).Op("n", "Neg", {"a", "a"}, {{"T", DT_INT32}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "has 2 data inputs, op Neg expects 1");
}

TEST(GraphDefLoaderTest, RejectsDanglingInput) {
  GraphDefBuilder b;
  b.Op("b", "Neg", {"a"}, {{"T", DT_INT32}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "node 'b' input 0 refers to 'a', which does not exist");
  GraphDefBuilder c;
  c.Op("n", "NoOp", {"^ghost"});
  ExpectError(c.Build(), absl::StatusCode::kInvalidArgument,
              "node 'n' control input '^ghost' refers to 'ghost', which does "
              "not exist");
}

TEST(GraphDefLoaderTest, RejectsBadOutputIndex) {
  GraphDefBuilder b;
  b.Const("p", 1).Placeholder("q", DT_BOOL);
  b.Op("a", "Switch", {"p", "q"}, {{"T", DT_INT32}});
  b.Op("b", "Neg", {"a:3"}, {{"T", DT_INT32}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "node 'b' input 0 refers to 'a:3' but a has 2 outputs");
}

TEST(GraphDefLoaderTest, RejectsMalformedInputName) {
  GraphDefBuilder b;
  b.Const("a", 1).Op("b", "Neg", {"a:x"}, {{"T", DT_INT32}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "node 'b': malformed tensor name 'a:x'");
}

TEST(GraphDefLoaderTest, RejectsDtypeMismatch) {
  GraphDefBuilder b;
  b.ConstF("f", 1.0f).Const("a", 1);
  b.Op("b", "AddV2", {"f", "a"}, {{"T", DT_FLOAT}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "node 'b' input 1 expects float but 'a:0' is int32");
}

TEST(GraphDefLoaderTest, RefOutputMayFeedPlainInputButNotTheReverse) {
  GraphDefBuilder b;
  b.Op("v", "VariableV2", {},
       {{"dtype", DT_INT32}, {"shape", Attr::Shape({})}});
  b.Op("r", "Neg", {"v"}, {{"T", DT_INT32}});
  EXPECT_TRUE(Load(b.Build()).ok()) << Load(b.Build());

  GraphDefBuilder c;
  c.Const("a", 1).Const("one", 1);
  c.Op("s", "Assign", {"a", "one"}, {{"T", DT_INT32}});
  ExpectError(c.Build(), absl::StatusCode::kInvalidArgument,
              "node 's' input 0 expects int32_ref but 'a:0' is int32");
}

TEST(GraphDefLoaderTest, RejectsCycles) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("a", "AddV2", {"c", "b"}, {{"T", DT_INT32}});
  b.Op("b", "Neg", {"a"}, {{"T", DT_INT32}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "graph has a cycle through nodes a -> b -> a");

  GraphDefBuilder self;
  self.Op("x", "NoOp", {"^x"});
  ExpectError(self.Build(), absl::StatusCode::kInvalidArgument,
              "cycle through nodes x -> x");
}

TEST(GraphDefLoaderTest, AllowsLoopBackEdges) {
  // The shape of a TensorFlow while loop: Enter -> Merge <- NextIteration.
  GraphDefBuilder b;
  b.Const("init", 0);
  b.Op("enter", "Enter", {"init"}, {{"T", DT_INT32}, {"frame_name", "loop"}});
  b.Op("merge", "Merge", {"enter", "next"}, {{"T", DT_INT32}, {"N", 2}});
  b.Op("body", "Neg", {"merge"}, {{"T", DT_INT32}});
  b.Op("next", "NextIteration", {"body"}, {{"T", DT_INT32}});
  b.Op("exit", "Exit", {"merge"}, {{"T", DT_INT32}});
  absl::Status s = Load(b.Build());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(GraphDefLoaderTest, RejectsImpossibleShapes) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({2, 3}));
  b.Placeholder("w", DT_FLOAT, Attr::Shape({4, 5}));
  b.Op("mm", "MatMul", {"x", "w"}, {{"T", DT_FLOAT}});
  ExpectError(b.Build(), absl::StatusCode::kInvalidArgument,
              "node 'mm' (MatMul): Dimensions must be equal, but are 3 and 4 "
              "(input shapes: [2,3], [4,5])");

  GraphDefBuilder c;
  c.Placeholder("x", DT_FLOAT, Attr::Shape({2}));
  c.Placeholder("y", DT_FLOAT, Attr::Shape({3}));
  c.Op("add", "AddV2", {"x", "y"}, {{"T", DT_FLOAT}});
  ExpectError(c.Build(), absl::StatusCode::kInvalidArgument, "node 'add'");
}

TEST(GraphDefLoaderTest, UnknownDimsAreFine) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({-1, 3}));
  b.Placeholder("w", DT_FLOAT, Attr::Shape({-1, 5}));
  b.Op("mm", "MatMul", {"x", "w"}, {{"T", DT_FLOAT}});
  b.Placeholder("u", DT_FLOAT);
  b.Op("mm2", "MatMul", {"mm", "u"}, {{"T", DT_FLOAT}});
  EXPECT_TRUE(Load(b.Build()).ok()) << Load(b.Build());
}

TEST(GraphDefLoaderTest, ShapeCheckCanBeTurnedOff) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({2, 3}));
  b.Op("mm", "MatMul", {"x", "x"}, {{"T", DT_FLOAT}});
  GraphConversionOptions options;
  options.check_shapes = false;
  EXPECT_TRUE(ConvertGraphDefToGraph(b.Build(), TestOps(), options).ok());
  EXPECT_FALSE(Load(b.Build()).ok());
}

}  // namespace
}  // namespace weft
