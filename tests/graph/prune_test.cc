// PruneGraph: keeps what fetches and targets need, rewrites feeds into _Arg
// and fetches into _Retval nodes.
#include "graph/prune.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "graph/graph_def_loader.h"
#include "proto/attr_value.pb.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::GraphDefBuilder;
using ::testing::HasSubstr;
using testing::TestOps;
using ::testing::UnorderedElementsAre;

// x -> neg -> add(neg, c) -> out ; unrelated -> other ; init (NoOp)
std::unique_ptr<Graph> Sample() {
  GraphDefBuilder b;
  b.Placeholder("x", DT_INT32);
  b.Const("c", 10);
  b.Op("neg", "Neg", {"x"}, {{"T", DT_INT32}});
  b.Op("add", "AddV2", {"neg", "c"}, {{"T", DT_INT32}});
  b.Const("unrelated", 1);
  b.Op("other", "Neg", {"unrelated"}, {{"T", DT_INT32}});
  b.Op("init", "NoOp", {"^other"});
  b.Op("gated", "Neg", {"c", "^x"}, {{"T", DT_INT32}});
  auto g = ConvertGraphDefToGraph(b.Build(), TestOps());
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

std::vector<std::string> Names(const Graph& g) {
  std::vector<std::string> names;
  for (Node* n : g.nodes()) names.push_back(n->name());
  return names;
}

const Node* FindOp(const Graph& g, const std::string& op, int index) {
  for (Node* n : g.nodes()) {
    if (n->type_string() == op && n->def().attr().at("index").i() == index) {
      return n;
    }
  }
  return nullptr;
}

TEST(PruneTest, KeepsOnlyWhatFetchesNeedAndRewritesFeeds) {
  auto g = Sample();
  auto p = PruneGraph(*g, {"x:0"}, {"add:0"}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(Names(**p), UnorderedElementsAre("c", "neg", "add", "_arg_x_0_0",
                                               "_retval_add_0_0"));
  const Node* arg = FindOp(**p, "_Arg", 0);
  ASSERT_NE(arg, nullptr);
  EXPECT_EQ(arg->def().attr().at("T").type(), DT_INT32);
  EXPECT_EQ((*p)->FindNode("neg")->input_edge(0)->src, arg);
  const Node* ret = FindOp(**p, "_Retval", 0);
  ASSERT_NE(ret, nullptr);
  EXPECT_EQ(ret->input_edge(0)->src->name(), "add");
}

TEST(PruneTest, TargetsKeepControlDependencies) {
  auto g = Sample();
  auto p = PruneGraph(*g, {}, {}, {"init"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(Names(**p), UnorderedElementsAre("unrelated", "other", "init"));
}

TEST(PruneTest, FedPlaceholderControlEdgesMoveToTheArg) {
  auto g = Sample();
  auto p = PruneGraph(*g, {"x"}, {"gated"}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)->FindNode("x"), nullptr);
  const Node* gated = (*p)->FindNode("gated");
  bool has_ctl_from_arg = false;
  for (const Edge* e : gated->in_edges()) {
    has_ctl_from_arg |= e->IsControlEdge() && e->src->IsArg();
  }
  EXPECT_TRUE(has_ctl_from_arg);
  // Unfed, the placeholder stays (and would complain when run).
  auto q = PruneGraph(*g, {}, {"gated"}, {});
  ASSERT_TRUE(q.ok());
  EXPECT_NE((*q)->FindNode("x"), nullptr);
}

TEST(PruneTest, DuplicateFetchesAndFetchingAFeed) {
  auto g = Sample();
  auto p = PruneGraph(*g, {"neg"}, {"add", "add:0", "neg:0"}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)->FindNode("x"), nullptr);
  for (int i = 0; i < 3; ++i) ASSERT_NE(FindOp(**p, "_Retval", i), nullptr);
  EXPECT_EQ(FindOp(**p, "_Retval", 0)->input_edge(0)->src->name(), "add");
  EXPECT_EQ(FindOp(**p, "_Retval", 1)->input_edge(0)->src->name(), "add");
  EXPECT_TRUE(FindOp(**p, "_Retval", 2)->input_edge(0)->src->IsArg());
}

TEST(PruneTest, UnusedFeedsGetNoArg) {
  auto g = Sample();
  auto p = PruneGraph(*g, {"x", "unrelated"}, {"add"}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_NE(FindOp(**p, "_Arg", 0), nullptr);
  EXPECT_EQ(FindOp(**p, "_Arg", 1), nullptr);
}

TEST(PruneTest, Errors) {
  auto g = Sample();
  auto expect = [&](absl::StatusOr<std::unique_ptr<Graph>> r,
                    const std::string& msg) {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(msg));
  };
  expect(PruneGraph(*g, {}, {"add:1"}, {}),
         "fetch 'add:1': node 'add' has 1 output");
  expect(PruneGraph(*g, {}, {"nope:0"}, {}),
         "fetch 'nope:0': node 'nope' does not exist");
  expect(PruneGraph(*g, {"nope"}, {"add"}, {}),
         "feed 'nope': node 'nope' does not exist");
  expect(PruneGraph(*g, {"x", "x:0"}, {"add"}, {}),
         "feed 'x:0' is given twice");
  expect(PruneGraph(*g, {}, {}, {"ghost"}), "target 'ghost': node 'ghost'");
  expect(PruneGraph(*g, {}, {"^add"}, {}), "fetch '^add'");
  expect(PruneGraph(*g, {}, {}, {}), "nothing to run");
}

}  // namespace
}  // namespace weft
