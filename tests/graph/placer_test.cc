// Placer: requested devices (full, partial, legacy), colocation groups,
// variable/consumer colocation, kernel availability, soft placement, the
// placement log, and (when TensorFlow is installed) agreement with
// TensorFlow's own placer on a graph TensorFlow wrote.
#include "graph/placer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_def_loader.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using testing::GraphDefBuilder;
using ::testing::HasSubstr;

std::string Cpu(int i) {
  return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i);
}
const char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";

PlacerOptions Options(int cpus) {
  PlacerOptions o;
  for (int i = 0; i < cpus; ++i) o.devices.push_back(Cpu(i));
  o.kernels = &GlobalKernelRegistry();
  return o;
}

void Request(GraphDefBuilder* b, const std::string& node,
             const std::string& device) {
  for (auto& n : *b->mutable_def()->mutable_node()) {
    if (n.name() == node) n.set_device(device);
  }
}

void Colocate(GraphDefBuilder* b, const std::string& node,
              const std::string& with) {
  for (auto& n : *b->mutable_def()->mutable_node()) {
    if (n.name() == node) {
      (*n.mutable_attr())["_class"].mutable_list()->add_s("loc:@" + with);
    }
  }
}

// Places and returns node -> device, or the error.
absl::StatusOr<std::map<std::string, std::string>> Place(
    const GraphDefBuilder& b, const PlacerOptions& options) {
  auto g = ConvertGraphDefToGraph(b.Build(), GlobalOpRegistry());
  if (!g.ok()) return g.status();
  absl::Status s = PlaceGraph(options, g->get());
  if (!s.ok()) return s;
  std::map<std::string, std::string> out;
  for (Node* n : (*g)->nodes()) out[n->name()] = n->assigned_device();
  return out;
}

const std::pair<std::string, Attr> kFloat = {"T", DT_FLOAT};

TEST(PlacerTest, HonoursFullPartialAndLegacyRequests) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f).ConstF("c", 2.0f);
  b.Op("full", "AddV2", {"a", "c"}, {kFloat});
  b.Op("partial", "Neg", {"a"}, {kFloat});
  b.Op("legacy", "Neg", {"a"}, {kFloat});
  b.Op("job_only", "Neg", {"a"}, {kFloat});
  b.Op("free", "Neg", {"c"}, {kFloat});
  b.Op("star", "Neg", {"c"}, {kFloat});
  Request(&b, "full", Cpu(2));
  Request(&b, "partial", "/device:CPU:1");
  Request(&b, "legacy", "/cpu:2");
  Request(&b, "job_only", "/job:localhost/task:0");
  Request(&b, "star", "/device:CPU:*");
  auto placed = Place(b, Options(3));
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("full"), Cpu(2));
  EXPECT_EQ(placed->at("partial"), Cpu(1));
  EXPECT_EQ(placed->at("legacy"), Cpu(2));
  EXPECT_EQ(placed->at("job_only"), Cpu(0));  // the rest from the default
  EXPECT_EQ(placed->at("free"), Cpu(0));
  EXPECT_EQ(placed->at("star"), Cpu(0));

  PlacerOptions other_default = Options(3);
  other_default.default_device = Cpu(1);
  placed = Place(b, other_default);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("free"), Cpu(1));
  EXPECT_EQ(placed->at("star"), Cpu(1));
  EXPECT_EQ(placed->at("full"), Cpu(2));
}

TEST(PlacerTest, GeneratorsJoinTheirConsumers) {
  // TensorFlow's heuristic: an unconstrained Const goes where its consumers
  // are when they agree; otherwise it stays on the default device.
  GraphDefBuilder b;
  b.ConstF("k", 1.0f).ConstF("shared", 2.0f);
  b.Op("use", "Neg", {"k"}, {kFloat});
  b.Op("u1", "Neg", {"shared"}, {kFloat});
  b.Op("u2", "Neg", {"shared"}, {kFloat});
  Request(&b, "use", "/device:CPU:2");
  Request(&b, "u1", "/device:CPU:1");
  Request(&b, "u2", "/device:CPU:2");
  auto placed = Place(b, Options(3));
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("k"), Cpu(2));
  EXPECT_EQ(placed->at("shared"), Cpu(0));
}

TEST(PlacerTest, ColocationClassAttrJoinsAGroup) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("x", "Neg", {"a"}, {kFloat});
  b.Op("y", "Neg", {"x"}, {kFloat});
  b.Op("z", "Neg", {"y"}, {kFloat});
  Request(&b, "x", "/device:CPU:2");
  Colocate(&b, "y", "x");
  Colocate(&b, "z", "y");            // transitive
  Colocate(&b, "z", "pruned_away");  // a class of its own: z alone
  auto placed = Place(b, Options(3));
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("y"), Cpu(2));
  EXPECT_EQ(placed->at("z"), Cpu(2));
}

TEST(PlacerTest, ColocationClassWithoutSuchNodeStillGroups) {
  // TensorFlow groups by the class string: two nodes colocated with a node
  // that was pruned away (or never existed) still share a device.
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("x", "Neg", {"a"}, {kFloat});
  b.Op("free", "Neg", {"a"}, {kFloat});
  b.Op("y", "Neg", {"a"}, {kFloat});
  Request(&b, "y", "/device:CPU:2");
  Colocate(&b, "x", "gone");
  Colocate(&b, "y", "gone");
  auto placed = Place(b, Options(3));
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("x"), Cpu(2));  // x (lower id) follows y's request
  EXPECT_EQ(placed->at("y"), Cpu(2));
  EXPECT_EQ(placed->at("free"), Cpu(0));

  // And the class's members' requests must agree, as for a named node.
  Request(&b, "x", "/device:CPU:1");
  placed = Place(b, Options(3));
  ASSERT_FALSE(placed.ok());
  EXPECT_THAT(std::string(placed.status().message()),
              HasSubstr("conflicting colocation"));
}

TEST(PlacerTest, ConflictingColocationNamesBothNodes) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("x", "Neg", {"a"}, {kFloat});
  b.Op("y", "Neg", {"x"}, {kFloat});
  Request(&b, "x", "/device:CPU:1");
  Request(&b, "y", "/device:CPU:2");
  Colocate(&b, "y", "x");
  auto placed = Place(b, Options(3));
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(placed.status().message());
  EXPECT_THAT(msg, HasSubstr("node 'y' (Neg)"));
  EXPECT_THAT(msg, HasSubstr("'/device:CPU:2'"));
  EXPECT_THAT(msg, HasSubstr("colocated with node 'x'"));
  EXPECT_THAT(msg, HasSubstr("conflicting colocation"));

  PlacerOptions soft = Options(3);
  soft.allow_soft_placement = true;
  placed = Place(b, soft);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("x"), Cpu(1));
  EXPECT_EQ(placed->at("y"), Cpu(1));
}

TEST(PlacerTest, VariableConsumersFollowTheVariable) {
  GraphDefBuilder b;
  b.Op("v", "VariableV2", {},
       {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({})}});
  b.ConstF("one", 1.0f);
  b.Op("init", "Assign", {"v", "one"}, {kFloat});
  b.Op("inc", "AssignAdd", {"v", "one"}, {kFloat});
  b.Op("read", "Identity", {"v"}, {kFloat});  // a plain (copying) read
  b.Op("h", "VarHandleOp", {},
       {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({})}});
  b.Op("rv", "ReadVariableOp", {"h"}, {{"dtype", DT_FLOAT}});
  b.Op("av", "AssignVariableOp", {"h", "one"}, {{"dtype", DT_FLOAT}});
  Request(&b, "v", "/device:CPU:1");
  Request(&b, "h", "/device:CPU:2");
  auto placed = Place(b, Options(3));
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("init"), Cpu(1));
  EXPECT_EQ(placed->at("inc"), Cpu(1));
  EXPECT_EQ(placed->at("read"), Cpu(0));
  EXPECT_EQ(placed->at("rv"), Cpu(2));
  EXPECT_EQ(placed->at("av"), Cpu(2));

  // A consumer asking for another device than its variable's goes to the
  // variable's, as in TensorFlow (which checks `tf.is_variable_initialized`
  // and assign_add under a device scope this way): ref and resource alike.
  Request(&b, "inc", "/device:CPU:2");
  Request(&b, "av", "/device:CPU:0");
  placed = Place(b, Options(3));
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("inc"), Cpu(1));
  EXPECT_EQ(placed->at("av"), Cpu(2));

  // Two `_class` members with conflicting requests still conflict, a
  // variable's consumer among them or not.
  Request(&b, "read", "/device:CPU:2");
  Colocate(&b, "read", "init");
  placed = Place(b, Options(3));
  ASSERT_FALSE(placed.ok());
  EXPECT_THAT(std::string(placed.status().message()),
              HasSubstr("conflicting colocation"));
}

TEST(PlacerTest, NoSuchDeviceAndSoftPlacement) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("x", "Neg", {"a"}, {kFloat});
  Request(&b, "x", "/device:CPU:7");
  auto placed = Place(b, Options(2));
  ASSERT_FALSE(placed.ok());
  const std::string msg(placed.status().message());
  EXPECT_THAT(msg, HasSubstr("node 'x' (Neg)"));
  EXPECT_THAT(msg, HasSubstr("'/device:CPU:7'"));
  EXPECT_THAT(msg, HasSubstr("matches no device"));
  EXPECT_THAT(msg, HasSubstr(Cpu(1)));  // lists what exists

  PlacerOptions soft = Options(2);
  soft.allow_soft_placement = true;
  placed = Place(b, soft);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("x"), Cpu(0));
}

TEST(PlacerTest, ChoosesADeviceTypeWithAKernel) {
  // A GPU device name with no GPU kernels registered: requests for it fail
  // with the kernel registry's explanation, or fall back when soft.
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("x", "Neg", {"a"}, {kFloat});
  b.Op("y", "Neg", {"a"}, {kFloat});
  Request(&b, "x", "/device:GPU:0");
  PlacerOptions options = Options(2);
  options.devices.insert(options.devices.begin(), kGpu0);
  auto placed = Place(b, options);
  ASSERT_FALSE(placed.ok());
  const std::string msg(placed.status().message());
  EXPECT_THAT(msg, HasSubstr("node 'x' (Neg)"));
  EXPECT_THAT(msg, HasSubstr("/device:GPU:0"));
  EXPECT_THAT(msg, HasSubstr("no GPU kernel for op 'Neg'"));

  options.allow_soft_placement = true;
  placed = Place(b, options);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->at("x"), Cpu(0));
  EXPECT_EQ(placed->at("y"), Cpu(0));  // default is the GPU: no kernel there
}

TEST(PlacerTest, NoKernelForTheDtypeAnywhere) {
  GraphDefBuilder b;
  b.Const("i", 1).Const("j", 2);
  b.Op("div", "RealDiv", {"i", "j"}, {{"T", DT_INT32}});
  PlacerOptions soft = Options(2);
  soft.allow_soft_placement = true;
  auto placed = Place(b, soft);
  ASSERT_FALSE(placed.ok());
  EXPECT_THAT(std::string(placed.status().message()),
              HasSubstr("cannot place node 'div' (RealDiv)"));
  EXPECT_THAT(std::string(placed.status().message()),
              HasSubstr("no CPU kernel for op 'RealDiv' with T=int32"));
}

TEST(PlacerTest, BadRequestAndBadDeviceList) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  Request(&b, "a", "/device:CPU:x");
  auto placed = Place(b, Options(1));
  ASSERT_FALSE(placed.ok());
  EXPECT_THAT(std::string(placed.status().message()),
              HasSubstr("node 'a' (Const)"));
  PlacerOptions none;
  EXPECT_EQ(Place(GraphDefBuilder().ConstF("a", 1.0f), none).status().code(),
            absl::StatusCode::kFailedPrecondition);
  PlacerOptions partial;
  partial.devices = {"/device:CPU:0"};
  EXPECT_EQ(Place(GraphDefBuilder().ConstF("a", 1.0f), partial).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PlacerTest, LogsOneLinePerNodeAndIsDeterministic) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("x", "Neg", {"a"}, {kFloat});
  Request(&b, "x", "/device:CPU:1");
  PlacerOptions options = Options(2);
  std::vector<std::string> lines;
  options.log = [&](absl::string_view l) { lines.emplace_back(l); };
  auto first = Place(b, options);
  ASSERT_TRUE(first.ok());
  EXPECT_THAT(lines, ::testing::ElementsAre("a (Const): " + Cpu(1),
                                            "x (Neg): " + Cpu(1)));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(*Place(b, options), *first);
}

TEST(PlacerTest, LogMarksNodesSoftPlacementMoved) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("moved", "Neg", {"a"}, {kFloat});
  b.Op("kept", "Neg", {"a"}, {kFloat});
  Request(&b, "moved", "/cpu:7");
  Request(&b, "kept", "/cpu:1");
  PlacerOptions options = Options(2);
  options.allow_soft_placement = true;
  std::vector<std::string> lines;
  options.log = [&](absl::string_view l) { lines.emplace_back(l); };
  ASSERT_TRUE(Place(b, options).ok());
  EXPECT_THAT(lines,
              ::testing::ElementsAre(
                  "a (Const): " + Cpu(0),
                  "moved (Neg): " + Cpu(0) + " (requested /cpu:7, soft-placed)",
                  "kept (Neg): " + Cpu(1)));
}

TEST(PlacerTest, LegacySignaturePlacesSoftlyWithoutKernelChecks) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("x", "Neg", {"a"}, {kFloat});
  Request(&b, "x", "/device:GPU:3");
  auto g = ConvertGraphDefToGraph(b.Build(), GlobalOpRegistry());
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(PlaceGraph({Cpu(0), Cpu(1)}, g->get()).ok());
  EXPECT_EQ((*g)->FindNode("x")->assigned_device(), Cpu(0));
}

// ---- Agreement with TensorFlow ---------------------------------------------

std::string Runfile(const std::string& rel) {
  const char* dir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  if (dir == nullptr || ws == nullptr) return rel;
  return absl::StrCat(dir, "/", ws, "/", rel);
}

TEST(PlacerTest, AgreesWithTensorFlowOnAGraphItWrote) {
  // The script writes a GraphDef with explicit device strings, colocation
  // and variables, and TensorFlow's placement of every node (read from the
  // partition graphs of a session with 3 CPUs).
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string graph_path = dir + "/tf_placed_graph.pb";
  const std::string placement_path = dir + "/tf_placement.txt";
  const std::string cmd = absl::StrCat(
      "python3 ", Runfile("tests/graph/tf_placement.py"), " ", graph_path, " ",
      placement_path, " > ", dir, "/tf_placement.log 2>&1");
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(dir + "/tf_placement.log");
    std::stringstream text;
    text << log.rdbuf();
    if (text.str().find("SKIPPED") != std::string::npos) {
      std::printf("SKIPPED: tensorflow not installed\n");
      GTEST_SKIP() << "tensorflow not installed";
    }
    FAIL() << "tf_placement.py failed:\n" << text.str();
  }
  tensorflow::GraphDef def;
  std::ifstream in(graph_path, std::ios::binary);
  ASSERT_TRUE(def.ParseFromIstream(&in));
  std::map<std::string, std::string> expected;
  std::ifstream lines(placement_path);
  std::string name, device;
  while (lines >> name >> device) expected[name] = device;
  ASSERT_GE(expected.size(), 8u);

  auto g = ConvertGraphDefToGraph(def, GlobalOpRegistry());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(PlaceGraph(Options(3), g->get()).ok());
  int compared = 0;
  for (const auto& [node, tf_device] : expected) {
    Node* n = (*g)->FindNode(node);
    if (n == nullptr) continue;  // a node TensorFlow added (e.g. _Send)
    EXPECT_EQ(n->assigned_device(), tf_device) << "node " << node;
    ++compared;
  }
  EXPECT_GE(compared, 8);
}

}  // namespace
}  // namespace weft
