// Shape inference: each op says what output shapes follow from its inputs.
//
//   absl::Status MatMulShape(InferenceContext* c) {
//     bool ta, tb;
//     WEFT_RETURN_IF_ERROR(c->GetAttr("transpose_a", &ta));
//     ...
//     c->set_output(0, PartialShape({m, n}));
//     return absl::OkStatus();
//   }
//
// Unknown dims (-1) and unknown ranks are normal: a shape function narrows
// what it can and leaves the rest unknown. It returns INVALID_ARGUMENT only
// for inputs that can never work (inner dims 3 and 4, say); the graph loader
// adds the node's name.
#ifndef WEFT_OPS_FRAMEWORK_SHAPE_INFERENCE_H_
#define WEFT_OPS_FRAMEWORK_SHAPE_INFERENCE_H_

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "ops/framework/node_def_util.h"
#include "proto/node_def.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_shape.h"

namespace weft {

class InferenceContext {
 public:
  // `input_tensors[i]` is the constant value of input i when known (from a
  // Const producer), else nullptr. Pointers must outlive the context.
  InferenceContext(const tensorflow::NodeDef& node,
                   std::vector<PartialShape> input_shapes,
                   std::vector<const Tensor*> input_tensors,
                   DataTypeVector input_types, int num_outputs);

  const tensorflow::NodeDef& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const PartialShape& input(int i) const { return inputs_[i]; }
  const Tensor* input_tensor(int i) const { return input_tensors_[i]; }
  DataType input_type(int i) const { return input_types_[i]; }

  void set_output(int i, PartialShape shape) { outputs_[i] = std::move(shape); }
  const PartialShape& output(int i) const { return outputs_[i]; }

  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const {
    return GetNodeAttr(node_, name, value);
  }

  // Checks input i has the given rank (if its rank is known).
  absl::Status WithRank(int i, int rank) const;
  absl::Status WithRankAtLeast(int i, int rank) const;
  // Reads input i as a shape vector (e.g. Reshape's `shape`), if constant;
  // otherwise returns a partial shape of the right rank or unknown.
  PartialShape InputAsShape(int i) const;

 private:
  const tensorflow::NodeDef& node_;
  std::vector<PartialShape> inputs_;
  std::vector<const Tensor*> input_tensors_;
  DataTypeVector input_types_;
  std::vector<PartialShape> outputs_;
};

using ShapeFn = std::function<absl::Status(InferenceContext*)>;

// Common shape functions.
absl::Status UnknownShape(InferenceContext* c);    // every output unknown
absl::Status UnchangedShape(InferenceContext* c);  // output 0 = input 0
absl::Status ScalarShape(InferenceContext* c);     // every output a scalar
// NumPy broadcasting of inputs 0 and 1; error if the known dims clash.
absl::Status BroadcastBinaryOpShape(InferenceContext* c);

// Broadcasts two shapes (NumPy rules). INVALID_ARGUMENT if they cannot.
absl::StatusOr<PartialShape> BroadcastShapes(const PartialShape& a,
                                             const PartialShape& b);

}  // namespace weft

#endif  // WEFT_OPS_FRAMEWORK_SHAPE_INFERENCE_H_
