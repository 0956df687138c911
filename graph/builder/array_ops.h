// Array-op wrappers: constants, placeholders, shapes and rearrangements.
//
//   Output c = Const(scope, {1.f, 2.f, 3.f});          // float [3]
//   Output m = Const(scope, {{1.f, 2.f}, {3.f, 4.f}}); // float [2,2]
//   Output x = Placeholder(scope.WithOpName("x"), DT_FLOAT, {-1, 784});
//   Output r = Reshape(scope, x, Const(scope, {-1, 28, 28}));
//
// Each wrapper is AddNode (scope.h) with the op's input args in OpDef order;
// errors are recorded in the scope and give an invalid Output.
#ifndef WEFT_GRAPH_BUILDER_ARRAY_OPS_H_
#define WEFT_GRAPH_BUILDER_ARRAY_OPS_H_

#include <initializer_list>
#include <vector>

#include "graph/builder/scope.h"

namespace weft {

Output Const(const Scope& scope, const Tensor& value);
template <typename T>
Output Const(const Scope& scope, T value) {
  return Const(scope, Tensor::Scalar<T>(value));
}
template <typename T>
Output Const(const Scope& scope, const std::vector<T>& values,
             const TensorShape& shape) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  if (t.NumElements() != static_cast<int64_t>(values.size())) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        "Const: number of values does not match the shape"));
    return Output();
  }
  for (size_t i = 0; i < values.size(); ++i) t.flat<T>()[i] = values[i];
  return Const(scope, t);
}
template <typename T>
Output Const(const Scope& scope, std::initializer_list<T> values) {
  return Const(scope, std::vector<T>(values),
               TensorShape({static_cast<int64_t>(values.size())}));
}
template <typename T>
Output Const(const Scope& scope,
             std::initializer_list<std::initializer_list<T>> rows) {
  std::vector<T> flat;
  int64_t cols = rows.size() == 0 ? 0 : rows.begin()->size();
  for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  return Const(scope, flat,
               TensorShape({static_cast<int64_t>(rows.size()), cols}));
}

// `shape` may be partial (-1 dims); empty with `unknown_rank` for none.
Output Placeholder(const Scope& scope, DataType dtype,
                   const std::vector<int64_t>& shape = {},
                   bool unknown_rank = true);
Output Identity(const Scope& scope, const Output& x);
Output StopGradient(const Scope& scope, const Output& x);
Output Reshape(const Scope& scope, const Output& x, const Output& shape);
Output Shape(const Scope& scope, const Output& x, DataType out = DT_INT32);
Output Fill(const Scope& scope, const Output& dims, const Output& value);
Output ZerosLike(const Scope& scope, const Output& x);
Output OnesLike(const Scope& scope, const Output& x);
Output Transpose(const Scope& scope, const Output& x, const Output& perm);
Output ConcatV2(const Scope& scope, const std::vector<Output>& values,
                const Output& axis);
Output ExpandDims(const Scope& scope, const Output& x, const Output& axis);
Output Squeeze(const Scope& scope, const Output& x,
               const std::vector<int64_t>& axes = {});
Output Tile(const Scope& scope, const Output& x, const Output& multiples);
// Stacks same-shaped tensors along a new dimension `axis` / splits one into
// its `num` slices along `axis` (num = that dimension's size).
Output Pack(const Scope& scope, const std::vector<Output>& values,
            int64_t axis = 0);
std::vector<Output> Unpack(const Scope& scope, const Output& value,
                           int64_t num, int64_t axis = 0);
// input[begin : begin + size] per dimension (size -1: to the end).
Output Slice(const Scope& scope, const Output& x, const Output& begin,
             const Output& size);
// params gathered at `indices` along `axis`: the result's shape is
// params.shape[:axis] + indices.shape + params.shape[axis + 1:].
Output GatherV2(const Scope& scope, const Output& params, const Output& indices,
                const Output& axis);
// Pads with zeros; `paddings` is int [rank, 2] (before, after) per dimension.
Output Pad(const Scope& scope, const Output& x, const Output& paddings);
// Elementwise choice (condition broadcasts against t and e).
Output SelectV2(const Scope& scope, const Output& condition, const Output& t,
                const Output& e);
// r0, r1: the reduction indices for the gradients of a broadcast binary op.
struct BroadcastArgs {
  Output r0, r1;
};
BroadcastArgs BroadcastGradientArgs(const Scope& scope, const Output& s0,
                                    const Output& s1);
Operation NoOp(const Scope& scope);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_ARRAY_OPS_H_
