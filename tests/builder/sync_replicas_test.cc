// SyncReplicasOptimizer's graph: the ops TensorFlow's builds, in both
// variable forms, and where the replica device setter puts them (each
// accumulator with its variable, the token queue with the global step, the
// local step on the worker).
#include "graph/builder/sync_replicas.h"

#include <map>
#include <memory>
#include <string>

#include "graph/builder/array_ops.h"
#include "graph/builder/device_setter.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

tensorflow::GraphDef SyncGraph(VariableKind kind, int to_aggregate, int total) {
  Scope root = Scope::NewRoot();
  TrainableVariable step = NewGlobalStep(root, kind);
  auto var = [&](const char* name) {
    return NewTrainableVariable(root.WithOpName(name), {2, 2}, DT_FLOAT,
                                Fill(root, Const(root, {2, 2}), Const(root, 0.5f)),
                                kind);
  };
  TrainableVariable a = var("a"), b = var("b");
  Output loss = Sum(root.WithOpName("loss"),
                    MatMul(root, a.value, b.value), Const(root, {0, 1}));
  SyncReplicasOptions o;
  o.replicas_to_aggregate = to_aggregate;
  o.total_num_replicas = total;
  SyncReplicasOptimizer sync(NewGradientDescentOptimizer({}), o);
  auto train = sync.Minimize(root, loss, {a, b}, &step);
  EXPECT_TRUE(train.ok()) << train.status();
  auto graph = root.ToGraphDef();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

std::map<std::string, const tensorflow::NodeDef*> Nodes(
    const tensorflow::GraphDef& g) {
  std::map<std::string, const tensorflow::NodeDef*> out;
  for (const auto& n : g.node()) out[n.name()] = &n;
  return out;
}

// The node called `name`; a failure (and an empty node) if there is none.
const tensorflow::NodeDef& N(
    const std::map<std::string, const tensorflow::NodeDef*>& nodes,
    const std::string& name) {
  static const tensorflow::NodeDef* const kNone = new tensorflow::NodeDef;
  auto it = nodes.find(name);
  if (it != nodes.end()) return *it->second;
  ADD_FAILURE() << "no node '" << name << "'";
  return *kNone;
}

// The first element of an int32 Const; -1 if it is not one.
int32_t ConstInt(const tensorflow::NodeDef& node) {
  auto it = node.attr().find("value");
  if (it == node.attr().end()) return -1;
  absl::StatusOr<Tensor> t = TensorFromProto(it->second.tensor());
  if (!t.ok() || t->dtype() != DT_INT32 || t->NumElements() < 1) return -1;
  return t->flat<int32_t>()[0];
}

TEST(SyncReplicasOptimizer, BuildsTensorFlowsOpsAndPlacesThem) {
  for (VariableKind kind : {VariableKind::kResource, VariableKind::kRef}) {
    const std::string p = kind == VariableKind::kResource ? "Resource" : "";
    tensorflow::GraphDef g = SyncGraph(kind, 2, 3);
    ReplicaDeviceSetterOptions setter;
    setter.ps_tasks = 2;
    setter.worker_device = "/job:worker/task:2";
    ASSERT_TRUE(ApplyReplicaDeviceSetter(setter, &g).ok());
    auto n = Nodes(g);
    const tensorflow::NodeDef& acc = N(n, "sync_replicas/a/grad_accum");
    EXPECT_EQ(acc.op(), p + "ConditionalAccumulator");
    EXPECT_EQ(acc.attr().count("shared_name") ? acc.attr().at("shared_name").s() : "",
              "a/grad_accum");
    EXPECT_EQ(N(n, "sync_replicas/a/take").op(), p + "AccumulatorTakeGradient");
    EXPECT_EQ(N(n, "sync_replicas/b/apply").op(), p + "AccumulatorApplyGradient");
    EXPECT_EQ(N(n, "sync_replicas/b/SetGlobalStep").op(),
              p + "AccumulatorSetGlobalStep");
    // global_step, a, b round-robin over 2 ps tasks.
    EXPECT_EQ(N(n, "global_step").device(), "/job:ps/task:0");
    EXPECT_EQ(N(n, "a").device(), "/job:ps/task:1");
    EXPECT_EQ(N(n, "b").device(), "/job:ps/task:0");
    for (const char* op : {"grad_accum", "apply", "take", "SetGlobalStep"}) {
      EXPECT_EQ(N(n, absl::StrCat("sync_replicas/a/", op)).device(),
                "/job:ps/task:1") << op;
    }
    for (const char* q : {"sync_token_q", "sync_op", "sync_end_tokens",
                          "sync_token_q_Dequeue"}) {
      EXPECT_EQ(N(n, q).device(), "/job:ps/task:0") << q;
    }
    EXPECT_EQ(N(n, "sync_token_q").op(), "FIFOQueueV2");
    EXPECT_EQ(N(n, "sync_op").op(), "QueueEnqueueManyV2");
    EXPECT_EQ(N(n, "sync_init_tokens").op(), "NoOp");  // no initial tokens
    // max(total, to_aggregate) tokens per step.
    EXPECT_EQ(ConstInt(N(n, "sync_op_tokens/dims")), 3);
    EXPECT_EQ(ConstInt(N(n, "sync_replicas/replicas_to_aggregate")), 2);
    // The local step is the worker's own.
    EXPECT_EQ(N(n, "sync_rep_local_step").device(), "/job:worker/task:2");
    EXPECT_EQ(N(n, "sync_rep_local_step_update").device(), "/job:worker/task:2");
  }
}

TEST(SyncReplicasOptimizer, NeedsAGlobalStepAndSaneCounts) {
  Scope root = Scope::NewRoot();
  TrainableVariable a = NewTrainableVariable(
      root.WithOpName("a"), {}, DT_FLOAT, Const(root, 1.f),
      VariableKind::kResource);
  Output loss = Identity(root, a.value);
  SyncReplicasOptimizer sync(NewGradientDescentOptimizer({}), {});
  auto train = sync.Minimize(root, loss, {a}, nullptr);
  EXPECT_EQ(train.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(train.status().message().find("needs a global step"),
            std::string::npos);
  SyncReplicasOptions bad;
  bad.replicas_to_aggregate = 0;
  TrainableVariable step = NewGlobalStep(root, VariableKind::kResource);
  SyncReplicasOptimizer zero(NewGradientDescentOptimizer({}), bad);
  train = zero.Minimize(root, loss, {a}, &step);
  EXPECT_EQ(train.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace weft
