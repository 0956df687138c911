// The gradient of a builder while loop (control_flow.h), as one unit.
//
// The forward loop gains an int32 counter (a loop variable of its frame).
// The backward loop starts from that count, the gradients of the Exits and
// zeros for each captured outside tensor, and runs once per forward
// iteration, last first: each iteration differentiates one forward body
// (AddGradients with the body's outputs as ys and its Identities and
// captured Enters as xs), passes the gradient of the Identities on as the
// next iteration's gradient of the body outputs, and adds the gradient of
// each captured tensor to its accumulator. The Exits of the backward loop
// are then the gradients of the loop's inputs.
//
// A forward value the backward body needs is pushed on a stack (StackV2,
// made once per step outside the loop) in every forward iteration and
// popped in the backward one. Order: a push waits for the counter's
// Identity of its iteration and the counter's increment waits for the
// pushes (through a ControlTrigger, which runs even when a push in an
// untaken branch is dead), so iteration t's pushes precede iteration
// t+1's; pops wait for the backward counter's Identity, and the backward
// decrement for the pops (through a trigger too). The pushes run because
// the counter's Exit (which the backward loop needs) waits for the
// increments.
//
// Conds inside the body: a value from a branch was pushed only in the
// iterations that took it, so its pop also waits for that branch of the
// (popped) predicate and is dead in the others. Nested loops: an inner
// loop is folded into one node in the outer body's gradient, so its
// backward loop is built inside the outer one; its values go on stacks
// made outside all loops (a stack handle is never pushed: TensorFlow's
// optimizer would drop such a push), which is right because an inner
// loop's runs are serialized (each waits for the outer counter, whose
// increment waits for the previous run) and so are its backward runs (the
// outer backward decrement waits for them).
#include <functional>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/control_flow_info.h"
#include "graph/builder/gradients_internal.h"
#include "graph/builder/math_ops.h"
#include "runtime/core/status.h"

namespace weft {
namespace grad_internal {
namespace {

bool IsFloat(DataType t) {
  t = BaseType(t);
  return t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF || t == DT_BFLOAT16;
}

std::string NameScopeOf(const std::string& node) {
  const size_t slash = node.rfind('/');
  return slash == std::string::npos ? "" : node.substr(0, slash);
}

// Nodes for loop `id` outside its frame, under the loop's name scope.
Scope OuterScope(const Scope& scope, const LoopRecord& loop,
                 absl::string_view sub) {
  return scope.WithoutControlDependencies()
      .WithAbsoluteNameScope(NameScopeOf(loop.enters[0]))
      .NewSubScope(sub);
}

// Adds the forward counter to loop `id` once.
absl::Status EnsureCounter(const Scope& scope, int id) {
  ControlFlowInfo& info = scope.control_flow();
  if (info.loops[id].count.valid()) return absl::OkStatus();
  const int parent = info.loops[id].parent;
  if (parent >= 0) WEFT_RETURN_IF_ERROR(EnsureCounter(scope, parent));
  const LoopRecord loop = info.loops[id];
  Scope cs = OuterScope(scope, loop, "count");
  // Outside the frame; waits for the first input so that, in an untaken
  // branch, it is dead as the loop is. In a loop nested in another, it
  // also waits for the outer iteration's counter, which waits for the
  // previous outer iteration's run of this loop (below): the runs of a
  // nested loop, and so their pushes, follow each other in order.
  std::vector<Operation> zero_deps = {loop.inits[0].op()};
  if (parent >= 0) {
    zero_deps.push_back(Operation{info.loops[parent].counter_identity});
  }
  Output zero = Const(cs.WithControlDependencies(zero_deps), 0);
  const int begin = scope.graph().node_size();
  Output enter = AddNode1(cs.WithOpName("Enter"), "Enter", {zero},
                          EnterAttrs(loop.frame_name, false,
                                     loop.parallel_iterations));
  WEFT_RETURN_IF_ERROR(scope.status());
  std::vector<Output> merge =
      AddNode(cs.WithOpName("Merge"), "Merge", {Input({enter, enter})});
  WEFT_RETURN_IF_ERROR(scope.status());
  std::vector<Output> sw =
      AddNode(cs.WithOpName("Switch"), "Switch", {merge[0], loop.loop_cond});
  WEFT_RETURN_IF_ERROR(scope.status());
  Output ident = Identity(cs.WithOpName("Identity"), sw[1]);
  Output one = Const(cs.WithControlDependencies({ident.op()}), 1);
  Operation sync = AddNode0(
      cs.WithOpName("push_sync").WithControlDependencies({ident.op()}),
      "ControlTrigger", {});
  Output inc =
      AddV2(cs.WithOpName("add").WithControlDependencies({sync}), ident, one);
  Output next = AddNode1(cs.WithOpName("NextIteration"), "NextIteration", {inc});
  Output exit = AddNode1(cs.WithOpName("Exit"), "Exit", {sw[0]});
  WEFT_RETURN_IF_ERROR(scope.status());
  scope.MutableNode(merge[0].node)->set_input(1, next.node);
  // A loop in a branch: its counter is in the branch too (the backward
  // loop around it pops the count only when the branch ran).
  auto found = info.branch_of.find(loop.enters[0]);
  const bool in_branch = found != info.branch_of.end();
  const BranchId branch = in_branch ? found->second : BranchId();
  for (int i = begin; i < scope.graph().node_size(); ++i) {
    info.loop_of[scope.graph().node(i).name()] = id;
    if (in_branch) info.branch_of[scope.graph().node(i).name()] = branch;
  }
  // In the frame around the loop (-1: none; recorded, so that a backward
  // loop being built now does not take it for one of its own nodes).
  info.loop_of[zero.node] = loop.parent;
  if (parent >= 0) {
    scope.MutableNode(info.loops[parent].push_sync)
        ->add_input(absl::StrCat("^", exit.node));
  }
  LoopRecord& rec = info.loops[id];
  rec.count = exit;
  rec.counter_identity = ident.node;
  rec.counter_increment = inc.node;
  rec.push_sync = sync.node;
  return absl::OkStatus();
}

// A new stack of forward tensor `t`'s values, pushed once per iteration;
// returns the stack's handle. The stack is made once per step outside all
// loops (so no handle is ever pushed: a nested loop's runs push in order,
// EnsureCounter) and enters each frame down to the loop's.
Output PushEachIteration(const Scope& scope, int id, const Output& t) {
  ControlFlowInfo& info = scope.control_flow();
  const LoopRecord loop = info.loops[id];
  Scope ss = OuterScope(scope, loop, "stack");
  Output max_size = Const(ss, -1);
  Output handle = AddNode1(ss.WithOpName("Stack"), "StackV2", {max_size},
                           {{"elem_type", Attr(BaseType(t.dtype))}});
  if (!handle.valid()) return Output();
  // Built while a backward loop is, but part of no loop.
  info.loop_of[max_size.node] = -1;
  info.loop_of[handle.node] = -1;
  std::vector<int> frames;  // outermost first
  for (int l = id; l >= 0; l = info.loops[l].parent) {
    frames.insert(frames.begin(), l);
  }
  Output inner = handle;
  for (int l : frames) {
    inner = AddNode1(ss.WithOpName("Enter"), "Enter", {inner},
                     EnterAttrs(info.loops[l].frame_name, true,
                                info.loops[l].parallel_iterations));
    if (!inner.valid()) return Output();
    info.loop_of[inner.node] = l;
  }
  Output push = AddNode1(
      ss.WithOpName("Push").WithControlDependencies(
          {Operation{loop.counter_identity}}),
      "StackPushV2", {inner, t});
  if (!push.valid()) return Output();
  scope.MutableNode(loop.push_sync)->add_input(absl::StrCat("^", push.node));
  info.loop_of[push.node] = id;
  return handle;
}

}  // namespace

absl::Status WhileLoopGrad(const Scope& scope, const Scope& gscope, int id,
                           const std::vector<Output>& dy,
                           std::vector<Output>* dx) {
  WEFT_RETURN_IF_ERROR(EnsureCounter(scope, id));
  const LoopRecord fwd = scope.control_flow().loops[id];
  std::vector<int> vars, caps;  // the differentiable ones
  for (size_t i = 0; i < fwd.inits.size(); ++i) {
    if (IsFloat(fwd.inits[i].dtype)) vars.push_back(static_cast<int>(i));
  }
  for (size_t k = 0; k < fwd.captures.size(); ++k) {
    if (IsFloat(fwd.captures[k].dtype)) caps.push_back(static_cast<int>(k));
  }
  dx->assign(fwd.inits.size() + fwd.captures.size(), Output());
  if (vars.empty()) return absl::OkStatus();
  // Backward loop variables: count, one gradient per differentiable loop
  // variable, one accumulator per differentiable capture.
  std::vector<Output> init = {fwd.count};
  for (int i : vars) {
    init.push_back(dy[i].valid() ? dy[i]
                                 : ZerosLike(gscope, Output{fwd.exits[i], 0,
                                                            fwd.inits[i].dtype}));
  }
  for (int k : caps) init.push_back(ZerosLike(gscope, fwd.captures[k]));
  WEFT_RETURN_IF_ERROR(scope.status());

  std::optional<Scope> body_scope;
  std::vector<std::string> pops;
  std::string decrement;
  auto cond = [](const Scope& s, const std::vector<Output>& v) {
    return Greater(s, v[0], Const(s, 0));
  };
  auto body = [&](const Scope& s,
                  const std::vector<Output>& v) -> std::vector<Output> {
    body_scope = s;
    DiffRequest req;
    req.open_loop = id;
    req.zeros_for_unconnected = false;
    for (size_t j = 0; j < vars.size(); ++j) {
      const int i = vars[j];
      req.ys.push_back(fwd.body_outputs[i]);
      req.grad_ys.push_back(v[1 + j]);
      req.xs.push_back(Output{fwd.identities[i], 0, fwd.inits[i].dtype});
    }
    for (int k : caps) {
      req.xs.push_back(Output{fwd.capture_enters[k], 0, fwd.captures[k].dtype});
    }
    std::vector<Output> g;
    absl::Status st = Differentiate(scope, s, req, &g);
    if (!st.ok()) {
      s.UpdateStatus(st);
      return {};
    }
    Output k = Sub(s, v[0], Const(s, 1));
    decrement = k.node;
    std::vector<Output> next = {k};
    for (size_t j = 0; j < vars.size(); ++j) {
      next.push_back(g[j].valid() ? g[j] : ZerosLike(s, v[1 + j]));
    }
    for (size_t c = 0; c < caps.size(); ++c) {
      const Output& acc = v[1 + vars.size() + c];
      const Output& gc = g[vars.size() + c];
      next.push_back(gc.valid() ? AddV2(s, acc, gc) : acc);
    }
    return next;
  };
  // What the backward body takes from the forward loop: its captured
  // tensors enter the backward frame too; its other values come off stacks.
  // A value from a branch of a cond in the loop was pushed only in the
  // iterations that took the branch, so its pop waits for the same
  // branch of the popped predicate (dead otherwise, as the branch's
  // gradient is).
  absl::flat_hash_map<std::string, Output> from_forward;
  std::function<Output(const Output&, const Output&,
                       const std::function<Output(const Output&)>&)>
      capture;
  capture = [&](const Output& t, const Output& pivot,
                const std::function<Output(const Output&)>& enter) {
    const ControlFlowInfo& info = scope.control_flow();
    if (!body_scope || FrameOf(info, *scope.FindNode(t.node)) != id) {
      return Output();
    }
    auto memo = from_forward.find(t.name());
    if (memo != from_forward.end()) return memo->second;
    for (size_t k = 0; k < fwd.capture_enters.size(); ++k) {
      if (fwd.capture_enters[k] == t.node) {
        return from_forward[t.name()] = enter(fwd.captures[k]);
      }
    }
    Output handle = PushEachIteration(scope, id, t);
    if (!handle.valid()) return Output();
    std::vector<Operation> deps = {pivot.op()};
    BranchId b = BranchOf(info, *scope.FindNode(t.node), t);
    if (b.cond >= 0 &&
        FrameOf(info, *scope.FindNode(info.conds[b.cond].pred.node)) == id) {
      Output pred = capture(info.conds[b.cond].pred, pivot, enter);
      std::vector<Output> sw = AddNode(*body_scope, "Switch", {pred, pred});
      if (sw.size() != 2) return Output();
      deps.push_back(Identity(*body_scope, sw[b.branch]).op());
    }
    Output pop = AddNode1(
        body_scope->WithOpName("StackPop").WithControlDependencies(deps),
        "StackPopV2", {enter(handle)},
        {{"elem_type", Attr(BaseType(t.dtype))}});
    pops.push_back(pop.node);
    return from_forward[t.name()] = pop;
  };
  std::vector<Output> outs;
  int grad_loop = -1;
  WEFT_RETURN_IF_ERROR(BuildWhileLoop(gscope, init, cond, body, "",
                                      fwd.parallel_iterations, capture,
                                      &grad_loop, &outs));
  // The next iteration's count waits for this one's pops, and for the
  // backward loops nested in this one to finish (they pop in order too),
  // through a trigger (a pop in an untaken branch is dead).
  ControlFlowInfo& info = scope.control_flow();
  std::vector<Operation> deps = {
      Operation{info.loops[grad_loop].identities[0]}};
  for (const std::string& pop : pops) deps.push_back(Operation{pop});
  for (const LoopRecord& nested : info.loops) {
    if (nested.parent != grad_loop) continue;
    for (const std::string& e : nested.exits) deps.push_back(Operation{e});
  }
  if (deps.size() > 1) {
    Operation sync = AddNode0(body_scope->WithOpName("pop_sync")
                                  .WithControlDependencies(deps),
                              "ControlTrigger", {});
    WEFT_RETURN_IF_ERROR(scope.status());
    info.loop_of[sync.node] = grad_loop;
    scope.MutableNode(decrement)->add_input(absl::StrCat("^", sync.node));
  }
  for (size_t j = 0; j < vars.size(); ++j) (*dx)[vars[j]] = outs[1 + j];
  for (size_t c = 0; c < caps.size(); ++c) {
    (*dx)[fwd.inits.size() + caps[c]] = outs[1 + vars.size() + c];
  }
  return absl::OkStatus();
}

}  // namespace grad_internal
}  // namespace weft
