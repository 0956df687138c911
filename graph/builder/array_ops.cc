#include "graph/builder/array_ops.h"

namespace weft {

Output Const(const Scope& scope, const Tensor& value) {
  return AddNode1(scope, "Const", {},
                  {{"value", Attr(value)}, {"dtype", Attr(value.dtype())}});
}

Output Placeholder(const Scope& scope, DataType dtype,
                   const std::vector<int64_t>& shape, bool unknown_rank) {
  tensorflow::AttrValue shape_attr = ShapeAttr(shape);
  if (shape.empty() && unknown_rank) {
    shape_attr.mutable_shape()->set_unknown_rank(true);
  }
  return AddNode1(scope, "Placeholder", {},
                  {{"dtype", Attr(dtype)}, {"shape", shape_attr}});
}

Output Identity(const Scope& scope, const Output& x) {
  return AddNode1(scope, "Identity", {x});
}
Output StopGradient(const Scope& scope, const Output& x) {
  return AddNode1(scope, "StopGradient", {x});
}
Output Reshape(const Scope& scope, const Output& x, const Output& shape) {
  return AddNode1(scope, "Reshape", {x, shape});
}
Output Shape(const Scope& scope, const Output& x, DataType out) {
  return AddNode1(scope, "Shape", {x}, {{"out_type", Attr(out)}});
}
Output Fill(const Scope& scope, const Output& dims, const Output& value) {
  return AddNode1(scope, "Fill", {dims, value});
}
Output ZerosLike(const Scope& scope, const Output& x) {
  return AddNode1(scope, "ZerosLike", {x});
}
Output OnesLike(const Scope& scope, const Output& x) {
  return AddNode1(scope, "OnesLike", {x});
}
Output Transpose(const Scope& scope, const Output& x, const Output& perm) {
  return AddNode1(scope, "Transpose", {x, perm});
}
Output ConcatV2(const Scope& scope, const std::vector<Output>& values,
                const Output& axis) {
  return AddNode1(scope, "ConcatV2", {Input(values), axis});
}
Output ExpandDims(const Scope& scope, const Output& x, const Output& axis) {
  return AddNode1(scope, "ExpandDims", {x, axis});
}
Output Squeeze(const Scope& scope, const Output& x,
               const std::vector<int64_t>& axes) {
  tensorflow::AttrValue dims;
  dims.mutable_list();
  for (int64_t a : axes) dims.mutable_list()->add_i(a);
  return AddNode1(scope, "Squeeze", {x}, {{"squeeze_dims", dims}});
}
Output Tile(const Scope& scope, const Output& x, const Output& multiples) {
  return AddNode1(scope, "Tile", {x, multiples});
}
Output Pack(const Scope& scope, const std::vector<Output>& values,
            int64_t axis) {
  return AddNode1(scope, "Pack", {Input(values)}, {{"axis", Attr(axis)}});
}
std::vector<Output> Unpack(const Scope& scope, const Output& value,
                           int64_t num, int64_t axis) {
  return AddNode(scope, "Unpack", {value},
                 {{"num", Attr(num)}, {"axis", Attr(axis)}});
}
Output Slice(const Scope& scope, const Output& x, const Output& begin,
             const Output& size) {
  return AddNode1(scope, "Slice", {x, begin, size});
}
Output GatherV2(const Scope& scope, const Output& params, const Output& indices,
                const Output& axis) {
  return AddNode1(scope, "GatherV2", {params, indices, axis});
}
Output Pad(const Scope& scope, const Output& x, const Output& paddings) {
  return AddNode1(scope, "Pad", {x, paddings});
}
Output SelectV2(const Scope& scope, const Output& condition, const Output& t,
                const Output& e) {
  return AddNode1(scope, "SelectV2", {condition, t, e});
}
BroadcastArgs BroadcastGradientArgs(const Scope& scope, const Output& s0,
                                    const Output& s1) {
  std::vector<Output> outs = AddNode(scope, "BroadcastGradientArgs", {s0, s1});
  if (outs.size() != 2) return BroadcastArgs();
  return BroadcastArgs{outs[0], outs[1]};
}
Operation NoOp(const Scope& scope) { return AddNode0(scope, "NoOp", {}); }

}  // namespace weft
