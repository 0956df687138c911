#include "graph/builder/nn_ops.h"

#include <vector>

namespace weft {

Output Relu(const Scope& scope, const Output& x) {
  return AddNode1(scope, "Relu", {x});
}
Output ReluGrad(const Scope& scope, const Output& gradients,
                const Output& features) {
  return AddNode1(scope, "ReluGrad", {gradients, features});
}
Output BiasAdd(const Scope& scope, const Output& value, const Output& bias) {
  return AddNode1(scope, "BiasAdd", {value, bias});
}
Output BiasAddGrad(const Scope& scope, const Output& out_backprop) {
  return AddNode1(scope, "BiasAddGrad", {out_backprop});
}
Output Softmax(const Scope& scope, const Output& logits) {
  return AddNode1(scope, "Softmax", {logits});
}
Output LogSoftmax(const Scope& scope, const Output& logits) {
  return AddNode1(scope, "LogSoftmax", {logits});
}
Output Conv2D(const Scope& scope, const Output& input, const Output& filter,
              const std::vector<int64_t>& strides, absl::string_view padding) {
  return AddNode1(scope, "Conv2D", {input, filter},
                  {{"strides", Attr(strides)}, {"padding", Attr(padding)}});
}
Output DepthwiseConv2D(const Scope& scope, const Output& input,
                       const Output& filter, const std::vector<int64_t>& strides,
                       absl::string_view padding) {
  return AddNode1(scope, "DepthwiseConv2dNative", {input, filter},
                  {{"strides", Attr(strides)}, {"padding", Attr(padding)}});
}
namespace {
Output Pool(const Scope& scope, const char* op, const Output& input,
            const std::vector<int64_t>& ksize,
            const std::vector<int64_t>& strides, absl::string_view padding) {
  return AddNode1(scope, op, {input},
                  {{"ksize", Attr(ksize)},
                   {"strides", Attr(strides)},
                   {"padding", Attr(padding)}});
}
}  // namespace

Output MaxPool(const Scope& scope, const Output& input,
               const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, absl::string_view padding) {
  return Pool(scope, "MaxPool", input, ksize, strides, padding);
}
Output AvgPool(const Scope& scope, const Output& input,
               const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, absl::string_view padding) {
  return Pool(scope, "AvgPool", input, ksize, strides, padding);
}
SoftmaxXent SparseSoftmaxCrossEntropyWithLogits(const Scope& scope,
                                                const Output& logits,
                                                const Output& labels) {
  std::vector<Output> outs =
      AddNode(scope, "SparseSoftmaxCrossEntropyWithLogits", {logits, labels});
  if (outs.size() != 2) return SoftmaxXent();
  return SoftmaxXent{outs[0], outs[1]};
}

}  // namespace weft
