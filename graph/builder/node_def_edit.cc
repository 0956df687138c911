#include "graph/builder/node_def_edit.h"

#include <utility>

namespace weft {

tensorflow::NodeDef* AppendNode(tensorflow::GraphDef* graph, std::string name,
                                std::string op, std::string device,
                                std::vector<std::string> inputs) {
  tensorflow::NodeDef* n = graph->add_node();
  n->set_name(std::move(name));
  n->set_op(std::move(op));
  n->set_device(std::move(device));
  for (std::string& in : inputs) n->add_input(std::move(in));
  return n;
}

void SetTypeAttr(tensorflow::NodeDef* node, const char* attr, DataType t) {
  (*node->mutable_attr())[attr].set_type(t);
}

tensorflow::NodeDef* AppendIntConst(tensorflow::GraphDef* graph, std::string name,
                                    std::string device, DataType dtype,
                                    int64_t value) {
  tensorflow::NodeDef* n = AppendNode(graph, std::move(name), "Const", std::move(device));
  SetTypeAttr(n, "dtype", dtype);
  tensorflow::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(dtype);
  t->mutable_tensor_shape();
  if (dtype == DT_INT64) {
    t->add_int64_val(value);
  } else {
    t->add_int_val(static_cast<int32_t>(value));
  }
  return n;
}

}  // namespace weft
