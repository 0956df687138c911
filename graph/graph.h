// Graph: the in-memory form of a TensorFlow GraphDef that Weft prunes,
// places and runs.
//
// A Graph holds Nodes (one per NodeDef, with its OpDef and resolved input and
// output dtypes) joined by Edges. A data edge carries output `src_output` of
// `src` to input `dst_input` of `dst`; a control edge (both slots
// kControlSlot) only orders `dst` after `src`.
//
//   Graph g;                                    // ops from GlobalOpRegistry()
//   WEFT_ASSIGN_OR_RETURN(Node* a, g.AddNode(const_def));
//   WEFT_ASSIGN_OR_RETURN(Node* b, g.AddNode(neg_def));
//   g.AddEdge(a, 0, b, 0);
//   tensorflow::GraphDef out;
//   g.ToGraphDef(&out);                         // inputs rewritten from edges
//
// Most graphs come from ConvertGraphDefToGraph() (graph/graph_def_loader.h),
// which checks every node and edge; AddNode/AddEdge check only what is cheap
// (the op exists, the attrs are valid, slot numbers are in range).
//
// Node ids are dense, stable and never reused within one Graph: removing a
// node leaves a hole, so arrays indexed by id stay valid. A NodeDef's `input`
// list is not kept in sync with the edges; edges are the truth and
// ToGraphDef() writes inputs from them.
//
// Ownership: the Graph owns its nodes and edges. It keeps a pointer to the
// OpRegistry it was built with, which must outlive it (the global registry
// always does).
//
// Thread safety: a Graph is not thread-safe to mutate. Once built it is
// read-only in practice and may then be read from many threads.
#ifndef WEFT_GRAPH_GRAPH_H_
#define WEFT_GRAPH_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ops/framework/op_registry.h"
#include "proto/function.pb.h"
#include "proto/graph.pb.h"
#include "proto/node_def.pb.h"
#include "proto/versions.pb.h"
#include "runtime/core/types.h"

namespace weft {

class Graph;
class Node;

// The slot number of both ends of a control edge.
inline constexpr int kControlSlot = -1;

// One edge. Owned by its Graph; pointers stay valid until it is removed.
struct Edge {
  int id = -1;
  Node* src = nullptr;
  int src_output = 0;  // kControlSlot for a control edge
  Node* dst = nullptr;
  int dst_input = 0;  // kControlSlot for a control edge

  bool IsControlEdge() const { return src_output == kControlSlot; }
};

class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  // The op name ("MatMul").
  const std::string& type_string() const { return def_.op(); }
  // Attrs include defaults. `input` may be stale: see the file comment.
  const tensorflow::NodeDef& def() const { return def_; }
  const tensorflow::OpDef& op_def() const { return *op_def_; }

  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  // Ref args have ref types (DT_FLOAT_REF).
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }

  // The device the NodeDef asks for (may be partial or empty) and the one the
  // placer chose (a full device name; empty before placement).
  const std::string& requested_device() const { return def_.device(); }
  const std::string& assigned_device() const { return assigned_device_; }
  void set_assigned_device(std::string name) {
    assigned_device_ = std::move(name);
  }

  // Edges in insertion order; data and control edges mixed.
  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  // The data edge feeding input `i`, or nullptr if none was added yet.
  const Edge* input_edge(int i) const { return input_edges_[i]; }

  // Op-kind predicates used by the loader, pruner and executor.
  bool IsMerge() const;          // Merge, RefMerge
  bool IsSwitch() const;         // Switch, RefSwitch, _SwitchN
  bool IsEnter() const;          // Enter, RefEnter
  bool IsExit() const;           // Exit, RefExit
  bool IsNextIteration() const;  // NextIteration, RefNextIteration
  bool IsLoopOp() const {        // any of the three above
    return IsEnter() || IsExit() || IsNextIteration();
  }
  bool IsConstant() const;     // Const, HostConst
  bool IsPlaceholder() const;  // Placeholder, PlaceholderV2
  bool IsArg() const;          // _Arg
  bool IsRetval() const;       // _Retval
  // Send/Recv style nodes that must run even when dead, to forward deadness.
  bool IsTransfer() const;

 private:
  friend class Graph;
  Node() = default;

  int id_ = -1;
  tensorflow::NodeDef def_;
  const tensorflow::OpDef* op_def_ = nullptr;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  std::string assigned_device_;
  std::vector<const Edge*> in_edges_;
  std::vector<const Edge*> out_edges_;
  std::vector<const Edge*> input_edges_;  // by input slot; null if unfed
};

class Graph {
 public:
  // `ops` must outlive the graph.
  explicit Graph(const OpRegistry* ops = &GlobalOpRegistry());
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Adds a node: looks up its op (UNIMPLEMENTED naming op and node if
  // unknown), fills default attrs, validates the attrs and input count
  // against the OpDef, and resolves the dtypes. Fails with ALREADY_EXISTS if
  // the name is taken. The NodeDef's inputs are not turned into edges.
  absl::StatusOr<Node*> AddNode(tensorflow::NodeDef def);

  // Adds a data edge. Slots must be in range and the input not yet fed
  // (checked by the caller; a violation is a bug and returns nullptr).
  const Edge* AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  // Adds a control edge unless the same one exists; returns it either way.
  const Edge* AddControlEdge(Node* src, Node* dst);
  void RemoveEdge(const Edge* edge);
  // Removes the node and every edge touching it.
  void RemoveNode(Node* node);

  Node* FindNode(absl::string_view name) const;
  // nullptr for ids of removed nodes.
  Node* FindNodeId(int id) const { return nodes_[id].get(); }
  int num_nodes() const { return num_nodes_; }
  int num_edges() const { return num_edges_; }
  // One past the largest node id ever used: the size for id-indexed arrays.
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  // The live nodes in id order.
  std::vector<Node*> nodes() const;

  const tensorflow::VersionDef& versions() const { return versions_; }
  void set_versions(const tensorflow::VersionDef& v) { versions_ = v; }
  // Functions are kept and written back; ConvertGraphDefToGraph lowers the
  // nodes that call them before building the Graph.
  const tensorflow::FunctionDefLibrary& library() const { return library_; }
  tensorflow::FunctionDefLibrary* mutable_library() { return &library_; }
  const OpRegistry& op_registry() const { return *ops_; }

  // Writes every node in id order with `input` rebuilt from the edges: data
  // inputs in slot order ("a", "a:1"), then control inputs ("^c"); `device`
  // is the assigned device once there is one.
  void ToGraphDef(tensorflow::GraphDef* out) const;

 private:
  const OpRegistry* ops_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Edge>> edges_;
  absl::flat_hash_map<std::string, Node*> by_name_;
  int num_nodes_ = 0;
  int num_edges_ = 0;
  tensorflow::VersionDef versions_;
  tensorflow::FunctionDefLibrary library_;
};

}  // namespace weft

#endif  // WEFT_GRAPH_GRAPH_H_
