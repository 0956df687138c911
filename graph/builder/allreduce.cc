#include "graph/builder/allreduce.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder/node_def_edit.h"
#include "graph/builder/scope.h"
#include "runtime/core/status.h"

namespace weft {

AllReduceOptimizer::AllReduceOptimizer(std::unique_ptr<Optimizer> wrapped,
                                       AllReduceOptions options)
    : WrappedOptimizer("AllReduce", std::move(wrapped)),
      options_(std::move(options)) {}

absl::StatusOr<Operation> AllReduceOptimizer::ApplyGradients(
    const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
    const TrainableVariable* global_step) {
  WEFT_RETURN_IF_ERROR(scope.status());
  const AllReduceOptions& o = options_;
  if (global_step == nullptr || !global_step->valid()) {
    return absl::InvalidArgumentError(
        "AllReduceOptimizer needs a global step (its value numbers the "
        "all-reduce of each step)");
  }
  const int g = static_cast<int>(o.group_tasks.size());
  if (g < 1 || o.rank < 0 || o.rank >= g) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AllReduceOptimizer: rank ", o.rank, " is not one of the ", g,
        " tasks of the group"));
  }
  if (grads_and_vars.empty()) {
    return absl::InvalidArgumentError("AllReduceOptimizer: no gradients");
  }
  std::vector<Output> grads;
  const DataType dtype = grads_and_vars[0].var.dtype;
  for (const GradAndVar& gv : grads_and_vars) {
    if (!gv.var.valid() || !gv.grad.valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AllReduceOptimizer: variable '", gv.var.name, "' has no gradient"));
    }
    if (gv.var.dtype != dtype || (dtype != DT_FLOAT && dtype != DT_DOUBLE)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AllReduceOptimizer: variable '", gv.var.name, "' is ",
          DataTypeString(gv.var.dtype), "; all-reduce takes float or double "
          "variables of one dtype (the first is ", DataTypeString(dtype), ")"));
    }
    grads.push_back(gv.grad);
  }
  tensorflow::AttrValue tasks;
  for (const std::string& t : o.group_tasks) tasks.mutable_list()->add_s(t);
  const Scope root = scope.WithAbsoluteNameScope("");
  std::vector<Output> means =
      AddNode(root.WithOpName(kAllReduceNode), "_RingAllReduce",
              {global_step->value, Input(grads)},
              {{"group_tasks", tasks},
               {"rank", Attr(int64_t{o.rank})},
               {"chunk_bytes", Attr(o.chunk_bytes)},
               {"final_op", Attr("Mean")}});
  WEFT_RETURN_IF_ERROR(root.status());
  std::vector<GradAndVar> averaged = grads_and_vars;
  for (size_t i = 0; i < averaged.size(); ++i) averaged[i].grad = means[i];
  return wrapped()->ApplyGradients(scope, averaged, global_step);
}

absl::Status AddBroadcastFromRankZero(const AllReduceOptions& o,
                                      tensorflow::GraphDef* graph) {
  struct Var {
    std::string name, device;
    DataType dtype;
    bool resource;
  };
  std::vector<Var> vars;
  for (const tensorflow::NodeDef& n : graph->node()) {
    if (n.name() == kBroadcastNode) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the graph has a node '", kBroadcastNode, "' already"));
    }
    const bool resource = n.op() == "VarHandleOp";
    if (!resource && n.op() != "VariableV2") continue;
    auto it = n.attr().find("dtype");
    const DataType t = it == n.attr().end() ? DT_INVALID : it->second.type();
    if (t != DT_FLOAT && t != DT_DOUBLE && t != DT_INT32 && t != DT_INT64) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot broadcast variable '", n.name(), "' of dtype ",
          DataTypeString(t), " over the all-reduce ring (float, double, int32 "
          "or int64)"));
    }
    vars.push_back({n.name(), n.device(), t, resource});
  }
  const int g = static_cast<int>(o.group_tasks.size());
  if (g < 1 || o.rank < 0 || o.rank >= g) {
    return absl::InvalidArgumentError(absl::StrCat(
        "broadcast: rank ", o.rank, " is not one of the ", g, " tasks of the group"));
  }
  const std::string prefix = absl::StrCat(kBroadcastNode, "/");
  const std::string device = vars.empty() ? "" : vars[0].device;
  tensorflow::NodeDef* done = AppendNode(graph, kBroadcastNode, "NoOp", device);
  if (vars.empty()) return absl::OkStatus();
  // `value` as `to` (the same node when it is `to` already).
  auto cast = [&](const std::string& name, const std::string& at, std::string value,
                  DataType from, DataType to) {
    if (from == to) return value;
    tensorflow::NodeDef* c = AppendNode(graph, name, "Cast", at, {std::move(value)});
    SetTypeAttr(c, "SrcT", from);
    SetTypeAttr(c, "DstT", to);
    (*c->mutable_attr())["Truncate"].set_b(false);
    return c->name();
  };
  // The sum's inputs: the instance, then every variable's contribution.
  std::vector<std::string> inputs = {
      AppendIntConst(graph, prefix + "instance", device, DT_INT64, kBroadcastInstance)
          ->name()};
  for (size_t i = 0; i < vars.size(); ++i) {
    const Var& v = vars[i];
    const std::string p = absl::StrCat(prefix, i, "/");
    tensorflow::NodeDef* read =
        AppendNode(graph, p + "read", v.resource ? "ReadVariableOp" : "Identity",
                   v.device, {v.name});
    SetTypeAttr(read, v.resource ? "dtype" : "T", v.dtype);
    std::string value = read->name();
    if (o.rank != 0) {
      SetTypeAttr(AppendNode(graph, p + "zeros", "ZerosLike", v.device, {value}), "T", v.dtype);
      value = p + "zeros";
    }
    inputs.push_back(cast(p + "to_double", v.device, value, v.dtype, DT_DOUBLE));
  }
  tensorflow::NodeDef* sum =
      AppendNode(graph, prefix + "sum", "_RingAllReduce", device, std::move(inputs));
  SetTypeAttr(sum, "T", DT_DOUBLE);
  (*sum->mutable_attr())["N"].set_i(static_cast<int64_t>(vars.size()));
  for (const std::string& task : o.group_tasks) {
    (*sum->mutable_attr())["group_tasks"].mutable_list()->add_s(task);
  }
  (*sum->mutable_attr())["rank"].set_i(o.rank);
  (*sum->mutable_attr())["chunk_bytes"].set_i(o.chunk_bytes);
  (*sum->mutable_attr())["final_op"].set_s("Sum");
  for (size_t i = 0; i < vars.size(); ++i) {
    const Var& v = vars[i];
    const std::string p = absl::StrCat(prefix, i, "/");
    const std::string value =
        cast(p + "back", v.device, absl::StrCat(sum->name(), ":", i), DT_DOUBLE, v.dtype);
    tensorflow::NodeDef* assign =
        AppendNode(graph, p + "assign", v.resource ? "AssignVariableOp" : "Assign",
                   v.device, {v.name, value});
    SetTypeAttr(assign, v.resource ? "dtype" : "T", v.dtype);
    done->add_input(absl::StrCat("^", assign->name()));
  }
  return absl::OkStatus();
}

}  // namespace weft
