// Builds TensorFlow v1 while loops (Enter/Merge/Switch/LoopCond/NextIteration/
// Exit) with GraphDefBuilder, for the executor's loop tests and the
// multi-device loop tests.
#ifndef WEFT_TESTS_RUNTIME_LOOP_BUILDER_H_
#define WEFT_TESTS_RUNTIME_LOOP_BUILDER_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace testing {

// The loop variables as the body sees them.
struct LoopVars {
  std::string i;      // this iteration's counter (also the loop's pivot)
  std::string acc;    // the accumulator
  std::string pivot;  // "^i": a control input for the body's constants
};
// Adds the body's nodes; returns the name of the next accumulator value.
using Body = std::function<std::string(GraphDefBuilder&, const LoopVars&)>;

struct LoopOutputs {
  std::string i, acc;  // Exit nodes
};

// A scalar int32 constant, ordered after `ctrl` when it is not empty (a
// constant inside a loop must hang off the loop's pivot, as TensorFlow
// builds them, or it would sit in the enclosing frame).
inline void Const(GraphDefBuilder& b, const std::string& name, int32_t value,
           const std::string& ctrl) {
  b.Const(name, value);
  if (!ctrl.empty()) {
    tensorflow::GraphDef* def = b.mutable_def();
    def->mutable_node(def->node_size() - 1)->add_input(ctrl);
  }
}

// Adds the loop   i = 0; acc = acc_init; while (i < n) { acc = body(i, acc);
// ++i; }   as TensorFlow's v1 while_loop builds it, with `p` as its frame
// name and node prefix. `n` and `acc_init` are int32 producers in the
// enclosing frame; `ctrl` orders the loop's constants ("^outer_pivot" for a
// loop inside another loop's body, empty at top level).
inline LoopOutputs AddLoop(GraphDefBuilder& b, const std::string& p,
                    const std::string& n, const std::string& acc_init,
                    int parallel, const std::string& ctrl, const Body& body) {
  auto name = [&](const char* s) { return p + "/" + s; };
  const std::vector<std::pair<std::string, testing::Attr>> enter_attrs = {
      {"T", DT_INT32},
      {"frame_name", p.c_str()},
      {"parallel_iterations", parallel}};
  auto constant_attrs = enter_attrs;
  constant_attrs.push_back({"is_constant", true});
  Const(b, name("zero"), 0, ctrl);
  b.Op(name("enter_i"), "Enter", {name("zero")}, enter_attrs);
  b.Op(name("enter_acc"), "Enter", {acc_init}, enter_attrs);
  b.Op(name("enter_n"), "Enter", {n}, constant_attrs);
  b.Op(name("merge_i"), "Merge", {name("enter_i"), name("next_i")},
       {{"T", DT_INT32}, {"N", 2}});
  b.Op(name("merge_acc"), "Merge", {name("enter_acc"), name("next_acc")},
       {{"T", DT_INT32}, {"N", 2}});
  b.Op(name("less"), "Less", {name("merge_i"), name("enter_n")});
  b.Op(name("cond"), "LoopCond", {name("less")});
  b.Op(name("switch_i"), "Switch", {name("merge_i"), name("cond")},
       {{"T", DT_INT32}});
  b.Op(name("switch_acc"), "Switch", {name("merge_acc"), name("cond")},
       {{"T", DT_INT32}});
  b.Op(name("exit_i"), "Exit", {name("switch_i")}, {{"T", DT_INT32}});
  b.Op(name("exit_acc"), "Exit", {name("switch_acc")}, {{"T", DT_INT32}});
  b.Op(name("i"), "Identity", {name("switch_i") + ":1"}, {{"T", DT_INT32}});
  b.Op(name("acc"), "Identity", {name("switch_acc") + ":1"},
       {{"T", DT_INT32}});
  Const(b, name("one"), 1, "^" + name("i"));
  b.Op(name("inc"), "AddV2", {name("i"), name("one")}, {{"T", DT_INT32}});
  const std::string acc_next =
      body(b, LoopVars{name("i"), name("acc"), "^" + name("i")});
  b.Op(name("next_i"), "NextIteration", {name("inc")}, {{"T", DT_INT32}});
  b.Op(name("next_acc"), "NextIteration", {acc_next}, {{"T", DT_INT32}});
  return LoopOutputs{name("exit_i"), name("exit_acc")};
}


// AddLoop writes Less as the test ops declare it (int32 only, no attrs); the
// real op library's Less wants its dtype.
inline tensorflow::GraphDef WithRealOps(tensorflow::GraphDef def) {
  for (auto& n : *def.mutable_node()) {
    if (n.op() == "Less") {
      (*n.mutable_attr())["T"].set_type(tensorflow::DT_INT32);
    }
  }
  return def;
}

}  // namespace testing
}  // namespace weft

#endif  // WEFT_TESTS_RUNTIME_LOOP_BUILDER_H_
