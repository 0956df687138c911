// Reading and checking a NodeDef against its OpDef.
//
//   WEFT_RETURN_IF_ERROR(ValidateNodeDef(node, op_def));   // after defaults
//   bool transpose_a;
//   WEFT_RETURN_IF_ERROR(GetNodeAttr(node, "transpose_a", &transpose_a));
//
// Every error names the node, and where it helps the attr and what was
// expected, e.g. "node 'mm': attr 'T' has type string, expected type".
#ifndef WEFT_OPS_FRAMEWORK_NODE_DEF_UTIL_H_
#define WEFT_OPS_FRAMEWORK_NODE_DEF_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_shape.h"
#include "runtime/core/types.h"

namespace weft {

// Adds attrs the node omits that have defaults in `op_def`.
void AddDefaultsToNodeDef(const tensorflow::OpDef& op_def,
                          tensorflow::NodeDef* node);

// Checks attrs (present, right kind, allowed values, minimums; no unknown
// attrs except internal "_" ones) and the number of data inputs.
absl::Status ValidateNodeDef(const tensorflow::NodeDef& node,
                             const tensorflow::OpDef& op_def);

// The dtypes of the node's inputs and outputs, from its attrs; ref args give
// ref dtypes (DT_FLOAT_REF).
absl::Status InOutTypesForNode(const tensorflow::NodeDef& node,
                               const tensorflow::OpDef& op_def,
                               DataTypeVector* inputs, DataTypeVector* outputs);

// The dtypes of one input or output arg of `node` (its number, type and
// type-list attrs resolved), appended to `types`. INVALID_ARGUMENT naming the
// node when an attr is missing, mistyped or a count is out of range.
absl::Status ArgTypesForNode(const tensorflow::NodeDef& node,
                             const tensorflow::OpDef::ArgDef& arg,
                             DataTypeVector* types);

// Number of data inputs and control inputs ("^name") listed in the node.
int NumDataInputs(const tensorflow::NodeDef& node);

// Attr getters: NOT_FOUND or INVALID_ARGUMENT naming node and attr.
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         int64_t* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         int32_t* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         float* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         bool* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         std::string* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         DataType* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         PartialShape* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         Tensor* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         std::vector<int64_t>* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         std::vector<int32_t>* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         std::vector<float>* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         std::vector<std::string>* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         DataTypeVector* value);
absl::Status GetNodeAttr(const tensorflow::NodeDef& node, absl::string_view name,
                         std::vector<PartialShape>* value);
bool HasNodeAttr(const tensorflow::NodeDef& node, absl::string_view name);

// "node 'name' (Op)": the prefix used in error messages, with the name and
// op C-escaped (absl::CEscape) so that any bytes print as one line.
std::string NodeLabel(const tensorflow::NodeDef& node);
std::string NodeLabel(absl::string_view name, absl::string_view op);

// Parses "node", "node:3", "^node" (control). Returns false if malformed.
struct TensorId {
  std::string node;
  int index = 0;  // -1 for control
  bool is_control() const { return index < 0; }
};
absl::StatusOr<TensorId> ParseTensorName(absl::string_view name);

// The node an input string names, without validating it: "node", "node:3"
// and "^node" all name "node", and so does a function body's "node:out:0".
// The view points into `input`.
absl::string_view InputNodeName(absl::string_view input);

}  // namespace weft

#endif  // WEFT_OPS_FRAMEWORK_NODE_DEF_UTIL_H_
