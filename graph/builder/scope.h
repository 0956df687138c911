// Scope: building a TensorFlow GraphDef from C++, in the style of model code.
//
//   Scope root = Scope::NewRoot();
//   Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
//   Scope layer = root.NewSubScope("layer1");
//   Output w = Const(layer.WithOpName("w"), {{1.f, 2.f}, {3.f, 4.f}});
//   Output y = Relu(layer, MatMul(layer, x, w));      // "layer1/MatMul", ...
//   absl::StatusOr<tensorflow::GraphDef> graph = root.ToGraphDef();
//
// Every Scope made from one root shares one GraphDef under construction and
// one status. Adding a node never throws or aborts: the first error (unknown
// op, bad attr, wrong input dtype, an input that is itself the result of a
// failed node) is recorded, names the node, and is returned by status() and
// ToGraphDef(); later nodes are still accepted but return invalid Outputs.
//
// Names follow TensorFlow: a node is named "<scope>/<op name or op type>",
// and a name already taken gets "_1", "_2", ... appended; sub-scope names are
// made unique the same way.
//
// Thread safety: a Scope is a cheap value (copy it freely), but all Scopes of
// one root share mutable state, so build a graph from one thread at a time.
#ifndef WEFT_GRAPH_BUILDER_SCOPE_H_
#define WEFT_GRAPH_BUILDER_SCOPE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/attr_value.pb.h"
#include "proto/graph.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/core/types.h"

namespace weft {

struct ControlFlowInfo;  // control_flow_info.h

// A node in the graph being built. Invalid (empty name) when adding it failed.
struct Operation {
  std::string node;
  bool valid() const { return !node.empty(); }
};

// One output of a node: "node:index" with its dtype. Invalid when the node
// could not be added.
struct Output {
  std::string node;
  int index = 0;
  DataType dtype = DT_INVALID;

  bool valid() const { return !node.empty(); }
  Operation op() const { return Operation{node}; }
  // "node:index", as fed and fetched by Session::Run.
  std::string name() const;
};

// One input argument of an op: a single tensor, or a list (for args such as
// AddN's "inputs: N * T" or ConcatV2's "values").
class Input {
 public:
  Input(const Output& output) : outputs_{output} {}  // NOLINT: implicit
  Input(std::vector<Output> list)                      // NOLINT: implicit
      : outputs_(std::move(list)), is_list_(true) {}
  const std::vector<Output>& outputs() const { return outputs_; }
  bool is_list() const { return is_list_; }

 private:
  std::vector<Output> outputs_;
  bool is_list_ = false;
};

// Attrs given by name; see the Attr() helpers below.
using AttrList = std::vector<std::pair<std::string, tensorflow::AttrValue>>;
tensorflow::AttrValue Attr(int64_t v);
inline tensorflow::AttrValue Attr(int v) { return Attr(int64_t{v}); }
tensorflow::AttrValue Attr(float v);
tensorflow::AttrValue Attr(bool v);
tensorflow::AttrValue Attr(DataType v);
tensorflow::AttrValue Attr(absl::string_view v);
inline tensorflow::AttrValue Attr(const char* v) {
  return Attr(absl::string_view(v));
}
tensorflow::AttrValue Attr(const Tensor& v);
tensorflow::AttrValue Attr(const std::vector<int64_t>& v);
// A (possibly partial) shape; -1 for unknown dimensions.
tensorflow::AttrValue ShapeAttr(const std::vector<int64_t>& dims);

class Scope {
 public:
  // A new, empty graph.
  static Scope NewRoot();

  Scope(const Scope&) = default;
  Scope& operator=(const Scope&) = default;

  // The next node added through the returned scope is named `name` (made
  // unique within the graph, inside this scope's name scope).
  Scope WithOpName(absl::string_view name) const;
  // A nested name scope "<this>/<name>" (made unique).
  Scope NewSubScope(absl::string_view name) const;
  // Internal, for composite wrappers: a scope whose name scope is exactly
  // `prefix` (not nested), and one whose next node is named exactly `name`
  // (a name the caller already reserved with UniqueNodeName).
  Scope WithAbsoluteNameScope(absl::string_view prefix) const;
  Scope WithExactName(absl::string_view name) const;
  // This scope's name scope: "" at the root, else "a/b" (no trailing /).
  const std::string& name_scope() const { return prefix_; }
  // The device nodes built through this scope request ("" for none).
  const std::string& device() const { return device_; }

  // Nodes get this requested device.
  Scope WithDevice(absl::string_view device) const;
  // Nodes get control inputs on `ops` (added to this scope's).
  Scope WithControlDependencies(const std::vector<Operation>& ops) const;
  // Internal, for control-flow wrappers: a scope that adds no control
  // inputs (a loop's body must not depend on nodes outside its frame).
  Scope WithoutControlDependencies() const;
  // Nodes are colocated with `op` (attr _class: ["loc:@op"]).
  Scope ColocateWith(const Operation& op) const;

  // The first error recorded while building, or OK.
  absl::Status status() const;
  bool ok() const { return status().ok(); }
  // Records `status` if it is an error and none was recorded yet.
  void UpdateStatus(const absl::Status& status) const;

  // The graph so far, or the first error.
  absl::StatusOr<tensorflow::GraphDef> ToGraphDef() const;
  // The graph so far, even when an error was recorded.
  const tensorflow::GraphDef& graph() const { return shared_->graph; }
  // The node called `name`, or null.
  const tensorflow::NodeDef* FindNode(absl::string_view name) const;
  // Appends every node of `graph` under its own name (no name scope, device
  // or control dependencies of this scope apply), and its function library
  // and versions: a graph the user brings, to build on. Nodes are not
  // validated here (the session does that). ALREADY_EXISTS naming the node
  // when a name is taken or repeated, and INVALID_ARGUMENT when the scope
  // already has a function library; nothing is appended then.
  absl::Status Import(const tensorflow::GraphDef& graph) const;

  // Internal, for AddNode: the name for a node of type `op_type`, made
  // unique; and the NodeDef fields (device, control inputs, colocation) this
  // scope applies.
  std::string UniqueNodeName(absl::string_view op_type) const;
  void ApplyTo(tensorflow::NodeDef* node) const;
  // Appends `node` (already validated) to the graph.
  void AppendNode(tensorflow::NodeDef node) const;
  // Internal, for control-flow wrappers, which close a loop's back edge and
  // rewire a branch's or body's inputs after building it: the node called
  // `name` (null if none), and the node at `index` (0 <= index <
  // graph().node_size()), both mutable. Pointers stay valid while nodes are
  // appended.
  tensorflow::NodeDef* MutableNode(absl::string_view name) const;
  tensorflow::NodeDef* MutableNodeAt(int index) const;
  // The graph index of the node called `name`, or -1.
  int NodeIndex(absl::string_view name) const;
  // Internal: what the control-flow wrappers recorded about the conds and
  // loops of this graph, for AddGradients (never part of the GraphDef).
  ControlFlowInfo& control_flow() const;

 private:
  struct Shared {
    tensorflow::GraphDef graph;
    absl::Status status;
    absl::flat_hash_map<std::string, int> name_counts;  // name -> times used
    absl::flat_hash_map<std::string, int> node_index;   // name -> graph index
    std::shared_ptr<ControlFlowInfo> control_flow;     // made when first used
  };
  Scope() = default;
  std::string MakeUnique(const std::string& name) const;

  std::shared_ptr<Shared> shared_;
  std::string prefix_;   // "" or "a/b"
  std::string op_name_;  // from WithOpName
  bool exact_name_ = false;
  std::string device_;
  std::vector<std::string> control_deps_;
  std::string colocate_with_;
};

// Adds a node of type `op_type` with one Input per input arg of its OpDef and
// the given attrs. Type attrs (such as T, N, Tidx) missing from `attrs` are
// inferred from the inputs; defaults are filled in; the node is validated and
// every input's dtype checked. Returns the node's outputs (one per output
// tensor), or an empty vector after recording an error in the scope.
std::vector<Output> AddNode(const Scope& scope, absl::string_view op_type,
                            const std::vector<Input>& inputs,
                            const AttrList& attrs = {});

// As AddNode, for ops with exactly one output; invalid Output on error.
Output AddNode1(const Scope& scope, absl::string_view op_type,
                const std::vector<Input>& inputs, const AttrList& attrs = {});

// As AddNode, for ops with no outputs (NoOp, AssignVariableOp, ...).
Operation AddNode0(const Scope& scope, absl::string_view op_type,
                   const std::vector<Input>& inputs,
                   const AttrList& attrs = {});

// The dtypes of every output of node `node` in the scope's graph.
absl::StatusOr<DataTypeVector> NodeOutputTypes(const Scope& scope,
                                               const tensorflow::NodeDef& node);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_SCOPE_H_
