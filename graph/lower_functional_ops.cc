#include "graph/lower_functional_ops.h"

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "graph/function_inliner.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using tensorflow::AttrValue;
using tensorflow::NameAttrList;
using tensorflow::NodeDef;

bool IsCallOp(absl::string_view op) {
  return op == "PartitionedCall" || op == "StatefulPartitionedCall";
}
bool IsIfOp(absl::string_view op) { return op == "If" || op == "StatelessIf"; }
bool IsCaseOp(absl::string_view op) {
  return op == "Case" || op == "StatelessCase";
}
bool IsWhileOp(absl::string_view op) {
  return op == "While" || op == "StatelessWhile";
}

// A library function shadows no registered op (TensorFlow forbids both).
bool IsFunctional(absl::string_view op, const OpRegistry& ops,
                  const absl::FunctionRef<bool(absl::string_view)>& in_library) {
  return IsLoweredBeforeRun(op) ||
         (in_library(op) && ops.LookUpOpDef(op) == nullptr);
}

absl::Status NodeError(const NodeDef& n, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(NodeLabel(n), ": ", what));
}

absl::StatusOr<NameAttrList> FuncAttr(const NodeDef& n, absl::string_view name) {
  auto it = n.attr().find(std::string(name));
  if (it == n.attr().end() || it->second.value_case() != AttrValue::kFunc) {
    return NodeError(n, absl::StrCat("needs a function-valued attr '", name, "'"));
  }
  return it->second.func();
}

// A node of the lowered graph, built up field by field.
class NodeBuilder {
 public:
  NodeBuilder(std::string name, std::string op, const std::string& device) {
    def_.set_name(std::move(name));
    def_.set_op(std::move(op));
    def_.set_device(device);
  }
  NodeBuilder& Input(const std::string& tensor) {
    def_.add_input(tensor);
    return *this;
  }
  NodeBuilder& Control(const std::string& node) {
    def_.add_input(absl::StrCat("^", node));
    return *this;
  }
  NodeBuilder& Controls(const std::vector<std::string>& nodes) {
    for (const std::string& n : nodes) Control(n);
    return *this;
  }
  NodeBuilder& Type(const char* attr, DataType t) {
    (*def_.mutable_attr())[attr].set_type(BaseType(t));
    return *this;
  }
  NodeBuilder& Types(const char* attr, const DataTypeVector& ts) {
    auto* list = (*def_.mutable_attr())[attr].mutable_list();
    for (DataType t : ts) list->add_type(static_cast<tensorflow::DataType>(BaseType(t)));
    return *this;
  }
  NodeBuilder& Int(const char* attr, int64_t v) {
    (*def_.mutable_attr())[attr].set_i(v);
    return *this;
  }
  NodeBuilder& Str(const char* attr, const std::string& v) {
    (*def_.mutable_attr())[attr].set_s(v);
    return *this;
  }
  NodeBuilder& Bool(const char* attr, bool v) {
    (*def_.mutable_attr())[attr].set_b(v);
    return *this;
  }
  void AddTo(std::vector<NodeDef>* out) { out->push_back(std::move(def_)); }

 private:
  NodeDef def_;
};

bool SameBaseTypes(const DataTypeVector& a, const DataTypeVector& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (BaseType(a[i]) != BaseType(b[i])) return false;
  }
  return true;
}

class Lowering {
 public:
  Lowering(const OpRegistry& ops, FunctionLibrary lib)
      : ops_(ops), lib_(std::move(lib)) {}

  absl::StatusOr<tensorflow::GraphDef> Run(const tensorflow::GraphDef& in);

 private:
  struct Pending {
    NodeDef def;
    int depth = 0;
  };
  // The lowered form of one node: new nodes plus its replacement (same name).
  absl::Status Lower(const NodeDef& n, const std::string& prefix,
                     std::vector<NodeDef>* gen);
  absl::Status LowerCall(const NodeDef& n, const NameAttrList& fn,
                         const std::string& prefix, std::vector<NodeDef>* gen);
  absl::Status LowerBranches(const NodeDef& n,
                             const std::vector<NameAttrList>& branches,
                             const std::string& prefix,
                             std::vector<NodeDef>* gen);
  absl::Status LowerWhile(const NodeDef& n, const std::string& prefix,
                          std::vector<NodeDef>* gen);
  absl::StatusOr<InlinedBody> Inline(const NodeDef& caller,
                                     const NameAttrList& fn,
                                     std::vector<std::string> inputs,
                                     std::string prefix,
                                     std::vector<std::string> controls,
                                     std::vector<NodeDef>* gen);
  // Outputs (or, with none, only an ordering) under the caller's name.
  void AddReplacement(const NodeDef& n, const std::vector<std::string>& outputs,
                      const DataTypeVector& types,
                      const std::vector<std::string>& controls,
                      std::vector<NodeDef>* gen);

  const OpRegistry& ops_;
  const FunctionLibrary lib_;
  absl::flat_hash_set<std::string> names_;
};

void SplitInputs(const NodeDef& n, std::vector<std::string>* data,
                 std::vector<std::string>* controls) {
  for (const std::string& in : n.input()) {
    if (!in.empty() && in[0] == '^') {
      controls->push_back(in.substr(1));
    } else {
      data->push_back(in);
    }
  }
}

absl::StatusOr<InlinedBody> Lowering::Inline(const NodeDef& caller,
                                             const NameAttrList& fn,
                                             std::vector<std::string> inputs,
                                             std::string prefix,
                                             std::vector<std::string> controls,
                                             std::vector<NodeDef>* gen) {
  InlineRequest req;
  req.function = fn.name();
  req.attrs = fn.attr();
  req.inputs = std::move(inputs);
  req.prefix = std::move(prefix);
  req.device = caller.device();
  req.control_inputs = std::move(controls);
  req.caller = caller.name();
  return InlineFunctionBody(req, lib_, ops_, gen);
}

void Lowering::AddReplacement(const NodeDef& n,
                              const std::vector<std::string>& outputs,
                              const DataTypeVector& types,
                              const std::vector<std::string>& controls,
                              std::vector<NodeDef>* gen) {
  if (outputs.empty()) {
    NodeBuilder(n.name(), "NoOp", n.device()).Controls(controls).AddTo(gen);
    return;
  }
  NodeBuilder b(n.name(), "IdentityN", n.device());
  for (const std::string& o : outputs) b.Input(o);
  b.Controls(controls).Types("T", types).AddTo(gen);
}

absl::Status Lowering::LowerCall(const NodeDef& n, const NameAttrList& fn,
                                 const std::string& prefix,
                                 std::vector<NodeDef>* gen) {
  std::vector<std::string> data, controls;
  SplitInputs(n, &data, &controls);
  std::vector<std::string> gate;
  if (!controls.empty()) {
    const std::string ctl = absl::StrCat(prefix, "/input_control_node");
    NodeBuilder(ctl, "NoOp", n.device()).Controls(controls).AddTo(gen);
    gate.push_back(ctl);
  }
  WEFT_ASSIGN_OR_RETURN(InlinedBody body,
                        Inline(n, fn, std::move(data), prefix, gate, gen));
  auto tout = n.attr().find("Tout");
  if (tout != n.attr().end()) {
    DataTypeVector declared;
    for (int t : tout->second.list().type()) declared.push_back(static_cast<DataType>(t));
    if (!SameBaseTypes(declared, body.output_types)) {
      return NodeError(n, absl::StrCat("Tout is ", DataTypeVectorString(declared),
                                       " but function '", fn.name(), "' returns ",
                                       DataTypeVectorString(body.output_types)));
    }
  }
  std::vector<std::string> after = body.control_outputs;
  if (body.outputs.empty() && after.empty()) after = gate;
  AddReplacement(n, body.outputs, body.output_types, after, gen);
  return absl::OkStatus();
}

// If and Case: one Switch (or _SwitchN) per input, a branch per output port.
absl::Status Lowering::LowerBranches(const NodeDef& n,
                                     const std::vector<NameAttrList>& branches,
                                     const std::string& prefix,
                                     std::vector<NodeDef>* gen) {
  std::vector<std::string> data, controls;
  SplitInputs(n, &data, &controls);
  if (data.empty()) return NodeError(n, "has no condition input");
  const bool is_if = IsIfOp(n.op());
  const int num = static_cast<int>(branches.size());
  std::string selector = data[0];
  DataType selector_type = DT_INT32;
  if (is_if) {
    selector_type = DT_BOOL;
    auto tcond = n.attr().find("Tcond");
    if (tcond != n.attr().end() && tcond->second.type() != tensorflow::DT_BOOL) {
      const std::string to_bool = absl::StrCat(prefix, "/to_bool");
      NodeBuilder(to_bool, "ToBool", n.device())
          .Input(selector)
          .Type("T", static_cast<DataType>(tcond->second.type()))
          .AddTo(gen);
      selector = to_bool;
    }
  }
  // Switch's outputs are (false, true); branch 0 is then_branch.
  auto port = [&](int branch) { return is_if ? 1 - branch : branch; };
  auto add_switch = [&](const std::string& name, const std::string& input,
                        DataType t) {
    NodeBuilder b(name, is_if ? "Switch" : "_SwitchN", n.device());
    b.Input(input).Input(selector).Controls(controls).Type("T", t);
    if (!is_if) b.Int("num_outs", num);
    b.AddTo(gen);
  };
  const std::string pivot_switch = absl::StrCat(prefix, "/switch_pred");
  add_switch(pivot_switch, selector, selector_type);
  DataTypeVector tin;
  auto tin_attr = n.attr().find("Tin");
  if (tin_attr != n.attr().end()) {
    for (int t : tin_attr->second.list().type()) tin.push_back(static_cast<DataType>(t));
  }
  if (tin.size() != data.size() - 1) {
    return NodeError(n, absl::StrCat("has ", data.size() - 1,
                                     " inputs besides the condition but Tin lists ",
                                     tin.size()));
  }
  for (size_t i = 1; i < data.size(); ++i) {
    add_switch(absl::StrCat(prefix, "/input_", i - 1), data[i], tin[i - 1]);
  }
  std::vector<InlinedBody> bodies;
  std::vector<std::string> done;
  for (int b = 0; b < num; ++b) {
    const std::string pivot = absl::StrCat(prefix, "/pivot_", b);
    NodeBuilder(pivot, "Identity", n.device())
        .Input(absl::StrCat(pivot_switch, ":", port(b)))
        .Type("T", selector_type)
        .AddTo(gen);
    std::vector<std::string> inputs;
    for (size_t i = 1; i < data.size(); ++i) {
      inputs.push_back(absl::StrCat(prefix, "/input_", i - 1, ":", port(b)));
    }
    WEFT_ASSIGN_OR_RETURN(
        InlinedBody body,
        Inline(n, branches[b], std::move(inputs), absl::StrCat(prefix, "/branch_", b),
               {pivot}, gen));
    if (!bodies.empty() && !SameBaseTypes(bodies[0].output_types, body.output_types)) {
      return NodeError(n, absl::StrCat("branch '", branches[b].name(), "' returns ",
                                       DataTypeVectorString(body.output_types),
                                       " but branch '", branches[0].name(),
                                       "' returns ",
                                       DataTypeVectorString(bodies[0].output_types)));
    }
    const std::string branch_done = absl::StrCat(prefix, "/branch_done_", b);
    NodeBuilder(branch_done, "Identity", n.device())
        .Input(pivot)
        .Controls(body.control_outputs)
        .Type("T", selector_type)
        .AddTo(gen);
    done.push_back(branch_done);
    bodies.push_back(std::move(body));
  }
  const std::string executed = absl::StrCat(prefix, "/branch_executed");
  NodeBuilder exec(executed, "Merge", n.device());
  for (const std::string& d : done) exec.Input(d);
  exec.Type("T", selector_type).Int("N", num).AddTo(gen);
  std::vector<std::string> outputs;
  for (size_t k = 0; k < bodies[0].outputs.size(); ++k) {
    const std::string merge = absl::StrCat(prefix, "/output_", k);
    NodeBuilder m(merge, "Merge", n.device());
    for (const InlinedBody& body : bodies) m.Input(body.outputs[k]);
    m.Type("T", bodies[0].output_types[k]).Int("N", num).AddTo(gen);
    outputs.push_back(merge);
  }
  AddReplacement(n, outputs, bodies[0].output_types, {executed}, gen);
  return absl::OkStatus();
}

absl::Status Lowering::LowerWhile(const NodeDef& n, const std::string& prefix,
                                  std::vector<NodeDef>* gen) {
  std::vector<std::string> data, controls;
  SplitInputs(n, &data, &controls);
  WEFT_ASSIGN_OR_RETURN(NameAttrList cond, FuncAttr(n, "cond"));
  WEFT_ASSIGN_OR_RETURN(NameAttrList body_fn, FuncAttr(n, "body"));
  DataTypeVector types;
  auto t = n.attr().find("T");
  if (t != n.attr().end()) {
    for (int dt : t->second.list().type()) types.push_back(static_cast<DataType>(dt));
  }
  if (types.size() != data.size()) {
    return NodeError(n, absl::StrCat("has ", data.size(), " inputs but T lists ",
                                     types.size()));
  }
  if (data.empty()) return NodeError(n, "has no loop variables");
  int64_t parallel = 10;
  auto p = n.attr().find("parallel_iterations");
  if (p != n.attr().end() && p->second.i() > 0) parallel = p->second.i();
  const std::string& dev = n.device();
  const size_t k = data.size();
  auto name = [&](absl::string_view what, size_t i) {
    return absl::StrCat(prefix, "/", what, "_", i);
  };
  std::vector<std::string> merges, body_inputs;
  for (size_t i = 0; i < k; ++i) {
    NodeBuilder(name("enter", i), "Enter", dev)
        .Input(data[i])
        .Controls(controls)
        .Type("T", types[i])
        .Str("frame_name", prefix)
        .Bool("is_constant", false)
        .Int("parallel_iterations", parallel)
        .AddTo(gen);
    NodeBuilder(name("merge", i), "Merge", dev)
        .Input(name("enter", i))
        .Input(name("next_iteration", i))
        .Type("T", types[i])
        .Int("N", 2)
        .AddTo(gen);
    merges.push_back(name("merge", i));
  }
  WEFT_ASSIGN_OR_RETURN(InlinedBody c,
                        Inline(n, cond, merges, absl::StrCat(prefix, "/cond"),
                               {merges[0]}, gen));
  if (c.outputs.size() != 1) {
    return NodeError(n, absl::StrCat("cond function '", cond.name(), "' returns ",
                                     c.outputs.size(), " values, not one"));
  }
  std::string pred = c.outputs[0];
  if (BaseType(c.output_types[0]) != DT_BOOL) {
    NodeBuilder(absl::StrCat(prefix, "/cond_to_bool"), "ToBool", dev)
        .Input(pred)
        .Type("T", c.output_types[0])
        .AddTo(gen);
    pred = absl::StrCat(prefix, "/cond_to_bool");
  }
  const std::string loop_cond = absl::StrCat(prefix, "/loop_cond");
  NodeBuilder(loop_cond, "LoopCond", dev).Input(pred).Controls(c.control_outputs).AddTo(gen);
  std::vector<std::string> exits;
  for (size_t i = 0; i < k; ++i) {
    NodeBuilder(name("switch", i), "Switch", dev)
        .Input(merges[i])
        .Input(loop_cond)
        .Type("T", types[i])
        .AddTo(gen);
    NodeBuilder(name("exit", i), "Exit", dev)
        .Input(name("switch", i))
        .Type("T", types[i])
        .AddTo(gen);
    exits.push_back(name("exit", i));
    body_inputs.push_back(absl::StrCat(name("switch", i), ":1"));
  }
  const std::string pivot = absl::StrCat(prefix, "/body_pivot");
  NodeBuilder(pivot, "Identity", dev).Input(body_inputs[0]).Type("T", types[0]).AddTo(gen);
  WEFT_ASSIGN_OR_RETURN(InlinedBody b,
                        Inline(n, body_fn, body_inputs, absl::StrCat(prefix, "/body"),
                               {pivot}, gen));
  if (!SameBaseTypes(b.output_types, types)) {
    return NodeError(n, absl::StrCat("body function '", body_fn.name(), "' returns ",
                                     DataTypeVectorString(b.output_types),
                                     " but the loop variables are ",
                                     DataTypeVectorString(types)));
  }
  for (size_t i = 0; i < k; ++i) {
    NodeBuilder(name("next_iteration", i), "NextIteration", dev)
        .Input(b.outputs[i])
        .Controls(b.control_outputs)
        .Type("T", types[i])
        .AddTo(gen);
  }
  AddReplacement(n, exits, types, {}, gen);
  return absl::OkStatus();
}

absl::Status Lowering::Lower(const NodeDef& n, const std::string& prefix,
                             std::vector<NodeDef>* gen) {
  const std::string& op = n.op();
  if (IsCallOp(op)) {
    WEFT_ASSIGN_OR_RETURN(NameAttrList fn, FuncAttr(n, "f"));
    return LowerCall(n, fn, prefix, gen);
  }
  if (op == "SymbolicGradient") {
    WEFT_ASSIGN_OR_RETURN(NameAttrList f, FuncAttr(n, "f"));
    const std::string grad = lib_.GradientOf(f.name());
    if (grad.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          NodeLabel(n), ": SymbolicGradient of '", absl::CEscape(f.name()),
          "' needs a gradient function registered in the graph's library; "
          "Weft does not differentiate functions itself"));
    }
    f.set_name(grad);
    return LowerCall(n, f, prefix, gen);
  }
  if (IsIfOp(op)) {
    WEFT_ASSIGN_OR_RETURN(NameAttrList then_fn, FuncAttr(n, "then_branch"));
    WEFT_ASSIGN_OR_RETURN(NameAttrList else_fn, FuncAttr(n, "else_branch"));
    return LowerBranches(n, {then_fn, else_fn}, prefix, gen);
  }
  if (IsCaseOp(op)) {
    auto it = n.attr().find("branches");
    if (it == n.attr().end() || it->second.list().func_size() == 0) {
      return NodeError(n, "needs a non-empty list of functions in attr 'branches'");
    }
    std::vector<NameAttrList> branches(it->second.list().func().begin(),
                                       it->second.list().func().end());
    return LowerBranches(n, branches, prefix, gen);
  }
  if (IsWhileOp(op)) return LowerWhile(n, prefix, gen);
  // A node whose op is a library function: its attrs are the function's.
  NameAttrList fn;
  fn.set_name(op);
  for (const auto& [k, v] : n.attr()) (*fn.mutable_attr())[k] = v;
  return LowerCall(n, fn, prefix, gen);
}

absl::StatusOr<tensorflow::GraphDef> Lowering::Run(
    const tensorflow::GraphDef& in) {
  std::deque<Pending> work;
  for (const NodeDef& n : in.node()) {
    names_.insert(n.name());
    work.push_back({n, 0});
  }
  tensorflow::GraphDef out;
  *out.mutable_versions() = in.versions();
  *out.mutable_library() = in.library();
  int64_t added = 0;
  while (!work.empty()) {
    Pending item = std::move(work.front());
    work.pop_front();
    if (!IsFunctional(item.def.op(), ops_, [&](absl::string_view op) {
          return lib_.Find(op) != nullptr;
        })) {
      *out.add_node() = std::move(item.def);
      continue;
    }
    if (item.depth >= kMaxFunctionNesting) {
      // Name the function: the node's own name is 64 prefixes long by now.
      const auto f = item.def.attr().find("f");
      const std::string callee = f != item.def.attr().end() && f->second.has_func()
                                     ? f->second.func().name()
                                     : item.def.op();
      const std::string& name = item.def.name();
      return absl::InvalidArgumentError(absl::StrCat(
          "function '", absl::CEscape(callee), "' (called by node '",
          absl::CEscape(name.substr(0, name.find('/'))),
          "'): function calls nest deeper than ", kMaxFunctionNesting,
          " levels (is the function recursive?)"));
    }
    // Prefer the node's own name as the prefix; find another if a new name
    // would collide with an existing node.
    std::vector<NodeDef> gen;
    for (int attempt = 0;; ++attempt) {
      const std::string prefix =
          attempt == 0 ? item.def.name()
                       : absl::StrCat(item.def.name(), "/_", attempt);
      gen.clear();
      WEFT_RETURN_IF_ERROR(Lower(item.def, prefix, &gen));
      absl::flat_hash_set<absl::string_view> fresh;
      bool clash = false;
      for (const NodeDef& g : gen) {
        if (g.name() == item.def.name()) continue;  // the replacement
        if (names_.contains(g.name()) || !fresh.insert(g.name()).second) {
          clash = true;
          break;
        }
      }
      if (!clash) break;
      if (attempt >= 8) {
        return NodeError(item.def, "cannot find unused names for its lowered nodes");
      }
    }
    added += static_cast<int64_t>(gen.size());
    if (added > kMaxLoweredNodes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "lowering the graph's functions would add more than ", kMaxLoweredNodes,
          " nodes (at ", NodeLabel(item.def), ")"));
    }
    for (NodeDef& g : gen) {
      if (g.name() == item.def.name()) {
        *out.add_node() = std::move(g);  // never functional itself
        continue;
      }
      names_.insert(g.name());
      work.push_back({std::move(g), item.depth + 1});
    }
  }
  return out;
}

}  // namespace

bool IsLoweredBeforeRun(absl::string_view op) {
  return IsCallOp(op) || IsIfOp(op) || IsCaseOp(op) || IsWhileOp(op) ||
         op == "SymbolicGradient";
}

bool HasFunctionalOps(const tensorflow::GraphDef& graph_def,
                      const OpRegistry& ops) {
  absl::flat_hash_set<absl::string_view> fns;
  for (const auto& f : graph_def.library().function()) fns.insert(f.signature().name());
  for (const NodeDef& n : graph_def.node()) {
    if (IsFunctional(n.op(), ops, [&](absl::string_view op) {
          return fns.contains(op);
        })) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<tensorflow::GraphDef> LowerFunctionalOps(
    const tensorflow::GraphDef& graph_def, const OpRegistry& ops) {
  WEFT_ASSIGN_OR_RETURN(FunctionLibrary lib, FunctionLibrary::Create(graph_def.library()));
  Lowering lowering(ops, std::move(lib));
  return lowering.Run(graph_def);
}

}  // namespace weft
