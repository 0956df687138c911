// Cond (Switch per input, two branches, Merge per output) and the rewiring
// shared with WhileLoop (while_loop.cc).
#include "graph/builder/control_flow.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/control_flow_info.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {

std::string InputName(const Output& o) {
  return o.index == 0 ? o.node : o.name();
}

AttrList EnterAttrs(const std::string& frame, bool is_constant,
                    int parallel_iterations) {
  return {{"frame_name", Attr(absl::string_view(frame))},
          {"is_constant", Attr(is_constant)},
          {"parallel_iterations", Attr(int64_t{parallel_iterations})}};
}

BranchId BranchOf(const ControlFlowInfo& info, const tensorflow::NodeDef& node,
                  const Output& t) {
  auto cond = info.cond_of.find(t.node);
  if (cond != info.cond_of.end() && node.op() == "Switch") {
    return BranchId{cond->second, t.index};
  }
  auto it = info.branch_of.find(t.node);
  return it == info.branch_of.end() ? BranchId() : it->second;
}

absl::StatusOr<Output> OutputFromInput(const Scope& scope,
                                       absl::string_view input) {
  WEFT_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(input));
  const tensorflow::NodeDef* node = scope.FindNode(id.node);
  if (node == nullptr || id.is_control()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", input, "' is not a tensor of the graph"));
  }
  WEFT_ASSIGN_OR_RETURN(DataTypeVector types, NodeOutputTypes(scope, *node));
  if (id.index >= static_cast<int>(types.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", input, "': node has ", types.size(), " outputs"));
  }
  return Output{id.node, id.index, types[id.index]};
}

absl::Status RewireRegion(
    const Scope& scope, int begin,
    const std::function<bool(const std::string& node)>& inside,
    const std::function<Output(const Output&)>& capture,
    const std::string& pivot, std::vector<std::string>* outside_controls) {
  // Only the nodes the function built: captures appended below need none.
  const int end = scope.graph().node_size();
  for (int i = begin; i < end; ++i) {
    tensorflow::NodeDef* node = scope.MutableNodeAt(i);
    // Built meanwhile but not part of the region (a gradient's additions
    // to an older loop).
    if (!inside(node->name())) continue;
    // Gated already: by a data input, or (a constant of an inner loop or
    // cond) by a control input from inside.
    bool gated = false;
    std::vector<std::string> kept;
    for (const std::string& input : node->input()) {
      WEFT_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(input));
      if (id.is_control()) {
        gated = gated || inside(id.node);
        if (inside(id.node) || outside_controls == nullptr) {
          kept.push_back(input);
        } else if (std::find(outside_controls->begin(),
                             outside_controls->end(),
                             id.node) == outside_controls->end()) {
          outside_controls->push_back(id.node);
        }
        continue;
      }
      gated = true;
      if (inside(id.node)) {
        kept.push_back(input);
        continue;
      }
      WEFT_ASSIGN_OR_RETURN(Output source, OutputFromInput(scope, input));
      Output inner = capture(source);
      WEFT_RETURN_IF_ERROR(scope.status());
      kept.push_back(InputName(inner));
      node = scope.MutableNodeAt(i);
    }
    if (!gated) kept.push_back(absl::StrCat("^", pivot));
    node->clear_input();
    for (std::string& input : kept) node->add_input(std::move(input));
  }
  return absl::OkStatus();
}

namespace {

// Builds one branch: `fn` on the branch's Switch outputs, then outside
// tensors it used are switched in (one Switch per tensor) and constants
// tied to the branch's pivot.
absl::Status BuildBranch(const Scope& cs, int cond_id, int branch,
                         const Output& pred_id, const Output& pivot,
                         const absl::flat_hash_set<std::string>& switches,
                         const std::vector<Output>& inputs, const BranchFn& fn,
                         std::vector<Output>* outs) {
  const int begin = cs.graph().node_size();
  *outs = fn(cs, inputs);
  WEFT_RETURN_IF_ERROR(cs.status());
  absl::flat_hash_map<std::string, Output> captured;
  auto capture = [&](const Output& t) {
    auto it = captured.find(t.name());
    if (it != captured.end()) return it->second;
    std::vector<Output> sw =
        AddNode(cs.WithOpName("Switch"), "Switch", {t, pred_id});
    if (sw.size() != 2) return Output();
    cs.control_flow().cond_of[sw[0].node] = cond_id;
    return captured[t.name()] = sw[branch];
  };
  auto inside = [&](const std::string& node) {
    return cs.NodeIndex(node) >= begin || switches.contains(node);
  };
  WEFT_RETURN_IF_ERROR(
      RewireRegion(cs, begin, inside, capture, pivot.node, nullptr));
  for (Output& o : *outs) {
    if (!o.valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          cs.name_scope(), ": the ", branch ? "true" : "false",
          " branch returned an invalid tensor"));
    }
    if (!inside(o.node)) o = capture(o);
  }
  // Inner conds claimed their nodes first.
  ControlFlowInfo& info = cs.control_flow();
  for (int i = begin; i < cs.graph().node_size(); ++i) {
    info.branch_of.try_emplace(cs.graph().node(i).name(),
                               BranchId{cond_id, branch});
  }
  return cs.status();
}

absl::Status BuildCond(const Scope& cs, const Output& pred,
                       const std::vector<Output>& inputs,
                       const BranchFn& true_fn, const BranchFn& false_fn,
                       std::vector<Output>* outputs) {
  WEFT_RETURN_IF_ERROR(cs.status());
  if (!pred.valid() || BaseType(pred.dtype) != DT_BOOL) {
    return absl::InvalidArgumentError(absl::StrCat(
        cs.name_scope(), ": the predicate must be a bool tensor, got '",
        pred.name(), "' (", DataTypeString(pred.dtype), ")"));
  }
  // The pivots: switch_t is live only when pred is true, switch_f only
  // when it is false; constants in a branch wait for its pivot.
  std::vector<Output> pivot =
      AddNode(cs.WithOpName("Switch"), "Switch", {pred, pred});
  WEFT_RETURN_IF_ERROR(cs.status());
  Output switch_t = Identity(cs.WithOpName("switch_t"), pivot[1]);
  Output switch_f = Identity(cs.WithOpName("switch_f"), pivot[0]);
  Output pred_id = Identity(cs.WithOpName("pred_id"), pred);
  WEFT_RETURN_IF_ERROR(cs.status());
  ControlFlowInfo& info = cs.control_flow();
  const int id = static_cast<int>(info.conds.size());
  info.conds.push_back(CondRecord{pred_id});
  absl::flat_hash_set<std::string> switches;
  std::vector<Output> t_in, f_in;
  for (const Output& x : inputs) {
    std::vector<Output> sw =
        AddNode(cs.WithOpName("Switch"), "Switch", {x, pred_id});
    WEFT_RETURN_IF_ERROR(cs.status());
    info.cond_of[sw[0].node] = id;
    switches.insert(sw[0].node);
    f_in.push_back(sw[0]);
    t_in.push_back(sw[1]);
  }
  std::vector<Output> t_out, f_out;
  WEFT_RETURN_IF_ERROR(
      BuildBranch(cs, id, 1, pred_id, switch_t, switches, t_in, true_fn,
                  &t_out));
  WEFT_RETURN_IF_ERROR(
      BuildBranch(cs, id, 0, pred_id, switch_f, switches, f_in, false_fn,
                  &f_out));
  if (t_out.size() != f_out.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        cs.name_scope(), ": the true branch returned ", t_out.size(),
        " tensors, the false branch ", f_out.size()));
  }
  outputs->clear();
  for (size_t i = 0; i < t_out.size(); ++i) {
    if (BaseType(t_out[i].dtype) != BaseType(f_out[i].dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          cs.name_scope(), ": output ", i, " is ",
          DataTypeString(t_out[i].dtype), " in the true branch but ",
          DataTypeString(f_out[i].dtype), " in the false branch"));
    }
    // Input 0 from the false branch, 1 from the true one, as TensorFlow.
    std::vector<Output> merge = AddNode(cs.WithOpName("Merge"), "Merge",
                                        {Input({f_out[i], t_out[i]})});
    WEFT_RETURN_IF_ERROR(cs.status());
    info.cond_of[merge[0].node] = id;
    outputs->push_back(merge[0]);
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<Output> Cond(const Scope& scope, const Output& pred,
                         const std::vector<Output>& inputs,
                         const BranchFn& true_fn, const BranchFn& false_fn) {
  if (!scope.ok()) return {};
  std::vector<Output> outputs;
  absl::Status s = BuildCond(scope.NewSubScope("cond"), pred, inputs, true_fn,
                             false_fn, &outputs);
  if (!s.ok()) {
    scope.UpdateStatus(s);
    return {};
  }
  return outputs;
}

}  // namespace weft
