// Gradients of control-flow ops. Through a Cond (control_flow.h): a
// Merge's gradient is switched on the cond's predicate back into the branch
// that produced the value, and a Switch's gradient merges what flows back
// from either branch (zeros from the taken branch when it did not use the
// value). A builder while loop is differentiated as a whole
// (while_grad.cc); AddGradients sees only its Exits, which pass their
// gradient to the loop. Conds and loops not built by control_flow.h (a
// loaded GraphDef's) have no record of their structure: UNIMPLEMENTED.
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/control_flow_info.h"
#include "graph/builder/grad_registry.h"
#include "ops/framework/node_def_util.h"

namespace weft {
namespace {

absl::Status NotBuilt(const tensorflow::NodeDef& node, const char* what) {
  return absl::UnimplementedError(absl::StrCat(
      "node '", node.name(), "' (", node.op(), ") is part of a ", what,
      " not built with Cond/WhileLoop (graph/builder/control_flow.h), e.g. "
      "one loaded from a GraphDef; AddGradients cannot differentiate "
      "through it"));
}

int CondOf(const Scope& s, const tensorflow::NodeDef& node) {
  const ControlFlowInfo& info = s.control_flow();
  auto it = info.cond_of.find(node.name());
  return it == info.cond_of.end() ? -1 : it->second;
}

bool IsBuilderLoopExit(const Scope& s, const tensorflow::NodeDef& node) {
  const ControlFlowInfo& info = s.control_flow();
  auto it = info.loop_of.find(node.name());
  if (it == info.loop_of.end() || it->second < 0) return false;
  for (const std::string& e : info.loops[it->second].exits) {
    if (e == node.name()) return true;
  }
  return false;
}

}  // namespace

void RegisterControlFlowGrads(GradRegistry* r) {
  r->Register("Merge", [](const Scope& s, const GradInputs& in,
                          std::vector<Output>* dx) {
    const int cond = CondOf(s, *in.node);
    if (cond < 0 || in.x.size() != 2) return NotBuilt(*in.node, "cond or loop");
    if (!in.dy[0].valid()) return absl::OkStatus();  // only value_index's
    // Input 0 came from the false branch, input 1 from the true one.
    std::vector<Output> sw =
        AddNode(s, "Switch", {in.dy[0], s.control_flow().conds[cond].pred});
    if (sw.size() != 2) return s.status();
    (*dx)[0] = sw[0];
    (*dx)[1] = sw[1];
    return absl::OkStatus();
  });
  r->Register("Switch", [](const Scope& s, const GradInputs& in,
                           std::vector<Output>* dx) {
    if (CondOf(s, *in.node) < 0) return NotBuilt(*in.node, "cond or loop");
    // Exactly one branch ran, so exactly one input of the Merge is live;
    // a branch that did not use its value contributes zeros (dead when it
    // did not run, as its Switch output is).
    std::vector<Output> branch_grads;
    for (int k = 0; k < 2; ++k) {
      branch_grads.push_back(in.dy[k].valid() ? in.dy[k]
                                              : ZerosLike(s, in.y[k]));
    }
    std::vector<Output> merge = AddNode(s, "Merge", {Input(branch_grads)});
    if (merge.empty()) return s.status();
    (*dx)[0] = merge[0];
    return absl::OkStatus();
  });
  r->Register("Exit", [](const Scope& s, const GradInputs& in,
                         std::vector<Output>* dx) {
    if (!IsBuilderLoopExit(s, *in.node)) return NotBuilt(*in.node, "loop");
    (*dx)[0] = in.dy[0];  // to the loop, which AddGradients sees as a node
    return absl::OkStatus();
  });
  // AddGradients meets these only in loops it has no record of: a builder
  // loop's Enters and NextIterations are inside the node it folds the loop
  // into.
  for (const char* op : {"Enter", "NextIteration"}) {
    r->Register(op, [](const Scope&, const GradInputs& in,
                       std::vector<Output>*) {
      return NotBuilt(*in.node, "loop");
    });
  }
  r->RegisterNoGradient("LoopCond");
  r->RegisterNoGradient("ControlTrigger");
  // Booleans and checks: nothing to differentiate.
  r->RegisterNoGradient("ToBool");
  r->RegisterNoGradient("Assert");
}

}  // namespace weft
