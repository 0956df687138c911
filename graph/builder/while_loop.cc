// WhileLoop: per loop variable Enter -> Merge -> Switch(LoopCond) ->
// Identity -> body -> NextIteration -> back into the Merge, and Switch's
// false output -> Exit; outside tensors enter the frame as constants.
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/control_flow.h"
#include "graph/builder/control_flow_info.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

absl::Status CheckBodyOutputs(const Scope& ws, const std::vector<Output>& vars,
                              const std::vector<Output>& outs) {
  if (outs.size() != vars.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        ws.name_scope(), ": the body returned ", outs.size(),
        " tensors for ", vars.size(), " loop variables"));
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          ws.name_scope(), ": the body returned an invalid tensor for loop "
          "variable ", i));
    }
    if (BaseType(outs[i].dtype) != BaseType(vars[i].dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          ws.name_scope(), ": loop variable ", i, " is ",
          DataTypeString(vars[i].dtype), " but the body returned ",
          DataTypeString(outs[i].dtype)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status BuildWhileLoop(const Scope& scope,
                            const std::vector<Output>& loop_vars,
                            const LoopCondFn& cond, const LoopBodyFn& body,
                            absl::string_view frame_name,
                            int parallel_iterations,
                            const LoopCaptureFn& capture_hook, int* loop_id,
                            std::vector<Output>* outputs) {
  WEFT_RETURN_IF_ERROR(scope.status());
  if (loop_vars.empty()) {
    return absl::InvalidArgumentError("WhileLoop: no loop variables");
  }
  for (size_t i = 0; i < loop_vars.size(); ++i) {
    if (!loop_vars[i].valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat("WhileLoop: loop variable ", i, " is invalid"));
    }
  }
  Scope ws = scope.NewSubScope("while");
  // Nodes inside the frame must not wait on nodes outside it: only the
  // Enters get the caller's control dependencies.
  Scope in = ws.WithoutControlDependencies();
  const std::string frame =
      frame_name.empty() ? ws.name_scope() : std::string(frame_name);
  ControlFlowInfo& info = scope.control_flow();
  const int id = static_cast<int>(info.loops.size());
  const int begin = scope.graph().node_size();
  {
    LoopRecord rec;
    rec.frame_name = frame;
    rec.parallel_iterations = parallel_iterations;
    rec.inits = loop_vars;
    info.loops.push_back(std::move(rec));
  }
  auto record = [&info, id]() -> LoopRecord& { return info.loops[id]; };
  std::vector<Output> merges;
  for (const Output& v : loop_vars) {
    Output enter = AddNode1(ws.WithOpName("Enter"), "Enter", {v},
                            EnterAttrs(frame, false, parallel_iterations));
    WEFT_RETURN_IF_ERROR(scope.status());
    // Input 1 becomes the NextIteration once the body is built.
    std::vector<Output> merge =
        AddNode(in.WithOpName("Merge"), "Merge", {Input({enter, enter})});
    WEFT_RETURN_IF_ERROR(scope.status());
    record().enters.push_back(enter.node);
    record().merges.push_back(merge[0].node);
    merges.push_back(merge[0]);
  }
  // Outside tensors enter once each, as constants of the frame.
  absl::flat_hash_map<std::string, Output> captured;
  Output pivot;
  auto enter = [&](const Output& t) {
    Output e = AddNode1(in.WithOpName("Enter"), "Enter", {t},
                        EnterAttrs(frame, true, parallel_iterations));
    if (e.valid()) {
      record().captures.push_back(t);
      record().capture_enters.push_back(e.node);
    }
    return e;
  };
  auto capture = [&](const Output& t) {
    auto it = captured.find(t.name());
    if (it != captured.end()) return it->second;
    Output inner;
    if (capture_hook) inner = capture_hook(t, pivot, enter);
    if (!inner.valid()) inner = enter(t);
    return captured[t.name()] = inner;
  };
  // Built since the loop began, and not part of an older loop (a gradient
  // built in this body adds counters and stacks to the forward loops).
  auto inside = [&](const std::string& node) {
    if (scope.NodeIndex(node) < begin) return false;
    auto it = info.loop_of.find(node);
    return it == info.loop_of.end() || it->second >= id;
  };
  std::vector<std::string> outside_controls;
  // The condition, on the Merges; its constants wait for the first Merge.
  int region = scope.graph().node_size();
  pivot = merges[0];
  Output pred = cond(in, merges);
  WEFT_RETURN_IF_ERROR(scope.status());
  if (!pred.valid() || BaseType(pred.dtype) != DT_BOOL) {
    return absl::InvalidArgumentError(absl::StrCat(
        ws.name_scope(), ": the loop condition must return a bool tensor"));
  }
  WEFT_RETURN_IF_ERROR(RewireRegion(scope, region, inside, capture,
                                    pivot.node, &outside_controls));
  if (!inside(pred.node)) pred = capture(pred);
  Output loop_cond = AddNode1(in.WithOpName("LoopCond"), "LoopCond", {pred});
  WEFT_RETURN_IF_ERROR(scope.status());
  record().loop_cond = loop_cond;
  std::vector<Output> identities, exits_from;
  for (const Output& m : merges) {
    std::vector<Output> sw =
        AddNode(in.WithOpName("Switch"), "Switch", {m, loop_cond});
    WEFT_RETURN_IF_ERROR(scope.status());
    Output ident = Identity(in.WithOpName("Identity"), sw[1]);
    WEFT_RETURN_IF_ERROR(scope.status());
    record().switches.push_back(sw[0].node);
    record().identities.push_back(ident.node);
    identities.push_back(ident);
    exits_from.push_back(sw[0]);
  }
  // The body, on the Identities; its constants wait for the first one.
  region = scope.graph().node_size();
  pivot = identities[0];
  std::vector<Output> outs = body(in, identities);
  WEFT_RETURN_IF_ERROR(scope.status());
  WEFT_RETURN_IF_ERROR(CheckBodyOutputs(ws, loop_vars, outs));
  WEFT_RETURN_IF_ERROR(RewireRegion(scope, region, inside, capture,
                                    pivot.node, &outside_controls));
  for (Output& o : outs) {
    if (!inside(o.node)) o = capture(o);
  }
  WEFT_RETURN_IF_ERROR(scope.status());
  // Control inputs from outside the frame wait at the first Enter instead.
  tensorflow::NodeDef* first_enter = scope.MutableNode(record().enters[0]);
  for (const std::string& c : outside_controls) {
    first_enter->add_input(absl::StrCat("^", c));
  }
  outputs->clear();
  for (size_t i = 0; i < outs.size(); ++i) {
    Output next =
        AddNode1(in.WithOpName("NextIteration"), "NextIteration", {outs[i]});
    WEFT_RETURN_IF_ERROR(scope.status());
    scope.MutableNode(record().merges[i])->set_input(1, next.node);
    Output exit = AddNode1(in.WithOpName("Exit"), "Exit", {exits_from[i]});
    WEFT_RETURN_IF_ERROR(scope.status());
    record().body_outputs.push_back(outs[i]);
    record().next_iterations.push_back(next.node);
    record().exits.push_back(exit.node);
    outputs->push_back(exit);
  }
  // Every node built from `begin` belongs to this loop unless an inner
  // loop claimed it already; inner loops without a parent get this one.
  const int end = scope.graph().node_size();
  for (int i = begin; i < end; ++i) {
    info.loop_of.try_emplace(scope.graph().node(i).name(), id);
  }
  for (int j = id + 1; j < static_cast<int>(info.loops.size()); ++j) {
    if (info.loops[j].parent < 0) info.loops[j].parent = id;
  }
  if (loop_id != nullptr) *loop_id = id;
  return absl::OkStatus();
}

int FrameOf(const ControlFlowInfo& info, const tensorflow::NodeDef& node) {
  auto it = info.loop_of.find(node.name());
  if (it == info.loop_of.end() || it->second < 0) return -1;
  const bool is_exit = node.op() == "Exit" || node.op() == "RefExit";
  return is_exit ? info.loops[it->second].parent : it->second;
}

absl::Status RefreshLoopInputs(const Scope& scope, int loop) {
  LoopRecord& rec = scope.control_flow().loops[loop];
  for (size_t i = 0; i < rec.enters.size(); ++i) {
    WEFT_ASSIGN_OR_RETURN(
        rec.inits[i],
        OutputFromInput(scope, scope.FindNode(rec.enters[i])->input(0)));
  }
  for (size_t k = 0; k < rec.capture_enters.size(); ++k) {
    WEFT_ASSIGN_OR_RETURN(
        rec.captures[k],
        OutputFromInput(scope,
                        scope.FindNode(rec.capture_enters[k])->input(0)));
  }
  return absl::OkStatus();
}

std::vector<Output> WhileLoop(const Scope& scope,
                              const std::vector<Output>& loop_vars,
                              const LoopCondFn& cond, const LoopBodyFn& body,
                              absl::string_view frame_name,
                              const WhileOptions& options) {
  if (!scope.ok()) return {};
  std::vector<Output> outputs;
  absl::Status s =
      BuildWhileLoop(scope, loop_vars, cond, body, frame_name,
                     options.parallel_iterations, nullptr, nullptr, &outputs);
  if (!s.ok()) {
    scope.UpdateStatus(s);
    return {};
  }
  return outputs;
}

}  // namespace weft
