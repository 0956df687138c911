#include "graph/builder/allreduce.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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

namespace {

tensorflow::NodeDef* AddDef(tensorflow::GraphDef* g, std::string name,
                            const std::string& op, const std::string& device,
                            std::vector<std::string> inputs) {
  tensorflow::NodeDef* n = g->add_node();
  n->set_name(std::move(name));
  n->set_op(op);
  n->set_device(device);
  for (std::string& in : inputs) n->add_input(std::move(in));
  return n;
}

void SetType(tensorflow::NodeDef* n, const char* attr, DataType t) {
  (*n->mutable_attr())[attr].set_type(t);
}

}  // namespace

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
  tensorflow::NodeDef* done = AddDef(graph, kBroadcastNode, "NoOp", "", {});
  if (vars.empty()) return absl::OkStatus();
  const std::string& device = vars[0].device;
  std::vector<std::string> sent;
  for (size_t i = 0; i < vars.size(); ++i) {
    const Var& v = vars[i];
    const std::string p = absl::StrCat(prefix, i, "/");
    tensorflow::NodeDef* read =
        AddDef(graph, p + "read", v.resource ? "ReadVariableOp" : "Identity",
               v.device, {v.name});
    SetType(read, v.resource ? "dtype" : "T", v.dtype);
    std::string value = read->name();
    if (o.rank != 0) {
      SetType(AddDef(graph, p + "zeros", "ZerosLike", v.device, {value}), "T", v.dtype);
      value = p + "zeros";
    }
    if (v.dtype != DT_DOUBLE) {
      tensorflow::NodeDef* cast = AddDef(graph, p + "to_double", "Cast", v.device, {value});
      SetType(cast, "SrcT", v.dtype);
      SetType(cast, "DstT", DT_DOUBLE);
      (*cast->mutable_attr())["Truncate"].set_b(false);
      value = cast->name();
    }
    sent.push_back(value);
  }
  tensorflow::NodeDef* instance = AddDef(graph, prefix + "instance", "Const", device, {});
  SetType(instance, "dtype", DT_INT64);
  tensorflow::TensorProto* t = (*instance->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_INT64);
  t->mutable_tensor_shape();
  t->add_int64_val(kBroadcastInstance);
  std::vector<std::string> inputs = {instance->name()};
  inputs.insert(inputs.end(), sent.begin(), sent.end());
  tensorflow::NodeDef* sum = AddDef(graph, prefix + "sum", "_RingAllReduce", device, inputs);
  SetType(sum, "T", DT_DOUBLE);
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
    std::string value = absl::StrCat(sum->name(), ":", i);
    if (v.dtype != DT_DOUBLE) {
      tensorflow::NodeDef* cast = AddDef(graph, p + "back", "Cast", v.device, {value});
      SetType(cast, "SrcT", DT_DOUBLE);
      SetType(cast, "DstT", v.dtype);
      (*cast->mutable_attr())["Truncate"].set_b(false);
      value = cast->name();
    }
    tensorflow::NodeDef* assign =
        AddDef(graph, p + "assign", v.resource ? "AssignVariableOp" : "Assign",
               v.device, {v.name, value});
    SetType(assign, v.resource ? "dtype" : "T", v.dtype);
    done->add_input(absl::StrCat("^", assign->name()));
  }
  done->set_device(device);
  return absl::OkStatus();
}

}  // namespace weft
