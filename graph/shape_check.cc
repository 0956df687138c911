#include "graph/shape_check.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/algorithm.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/shape_inference.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

// Constants larger than this are never shape arguments; skip decoding them.
constexpr int64_t kMaxConstElements = 1024;

// The value of a small Const node, or null.
std::unique_ptr<Tensor> SmallConstValue(const Node& node) {
  if (!node.IsConstant()) return nullptr;
  auto it = node.def().attr().find("value");
  if (it == node.def().attr().end() || !it->second.has_tensor()) return nullptr;
  const tensorflow::TensorProto& proto = it->second.tensor();
  int64_t elements = 1;
  for (const auto& d : proto.tensor_shape().dim()) {
    // Checked before multiplying: a claimed dim may be near 2^63.
    if (d.size() < 0) return nullptr;
    if (d.size() > 0 && elements > kMaxConstElements / d.size()) return nullptr;
    elements *= d.size();
  }
  absl::StatusOr<Tensor> t = TensorFromProto(proto);
  if (!t.ok()) return nullptr;  // the kernel reports bad values when it runs
  return std::make_unique<Tensor>(*std::move(t));
}

}  // namespace

absl::StatusOr<GraphShapes> CheckShapes(const Graph& graph) {
  WEFT_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  return CheckShapes(graph, order);
}

absl::StatusOr<GraphShapes> CheckShapes(const Graph& graph,
                                        const std::vector<Node*>& order) {
  GraphShapes shapes;
  shapes.outputs.resize(graph.num_node_ids());
  std::vector<std::unique_ptr<Tensor>> constants(graph.num_node_ids());
  for (Node* node : order) {
    const int n = node->num_inputs();
    std::vector<PartialShape> in_shapes(n);
    std::vector<const Tensor*> in_tensors(n, nullptr);
    DataTypeVector in_types;
    for (DataType t : node->input_types()) in_types.push_back(BaseType(t));
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge() || IsBackEdge(*e)) continue;
      const auto& produced = shapes.outputs[e->src->id()];
      if (e->src_output < static_cast<int>(produced.size())) {
        in_shapes[e->dst_input] = produced[e->src_output];
      }
      // A shape function reads a constant input as the type the op takes
      // there; a Const whose value holds another dtype than it claims is
      // unknown here (its kernel reports the mismatch when it runs).
      const Tensor* value = constants[e->src->id()].get();
      if (value != nullptr && e->dst_input < static_cast<int>(in_types.size()) &&
          value->dtype() == in_types[e->dst_input]) {
        in_tensors[e->dst_input] = value;
      }
    }
    InferenceContext ctx(node->def(), in_shapes, in_tensors, in_types,
                         node->num_outputs());
    WEFT_ASSIGN_OR_RETURN(const OpRegistration* reg,
                          graph.op_registry().LookUp(node->type_string()));
    absl::Status s = reg->shape_fn(&ctx);
    if (!s.ok()) {
      std::vector<std::string> described;
      for (const PartialShape& p : in_shapes) {
        described.push_back(p.DebugString());
      }
      return absl::Status(
          s.code(),
          absl::StrCat(NodeLabel(node->def()), ": ", s.message(),
                       n == 0 ? "" : " (input shapes: ",
                       absl::StrJoin(described, ", "), n == 0 ? "" : ")"));
    }
    auto& out = shapes.outputs[node->id()];
    out.reserve(node->num_outputs());
    for (int i = 0; i < node->num_outputs(); ++i) out.push_back(ctx.output(i));
    constants[node->id()] = SmallConstValue(*node);
  }
  return shapes;
}

}  // namespace weft
