// Neural-network op wrappers: activations, BiasAdd, softmax and losses.
//
//   Output h = Relu(scope, BiasAdd(scope, MatMul(scope, x, w), b));
//   SoftmaxXent xent = SparseSoftmaxCrossEntropyWithLogits(scope, h, labels);
//   Output loss = Mean(scope, xent.loss, Const(scope, 0));
//
// Errors are recorded in the scope and give an invalid Output (scope.h).
#ifndef WEFT_GRAPH_BUILDER_NN_OPS_H_
#define WEFT_GRAPH_BUILDER_NN_OPS_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/builder/scope.h"

namespace weft {

Output Relu(const Scope& scope, const Output& x);
Output ReluGrad(const Scope& scope, const Output& gradients,
                const Output& features);
Output BiasAdd(const Scope& scope, const Output& value, const Output& bias);
Output BiasAddGrad(const Scope& scope, const Output& out_backprop);
Output Softmax(const Scope& scope, const Output& logits);
Output LogSoftmax(const Scope& scope, const Output& logits);

// 2-D convolution and pooling, NHWC. `strides`/`ksize` have 4 entries (batch,
// rows, cols, channels); `padding` is "SAME" or "VALID". filter: [fh, fw,
// in_channels, out_channels].
Output Conv2D(const Scope& scope, const Output& input, const Output& filter,
              const std::vector<int64_t>& strides, absl::string_view padding);
// Depthwise convolution (DepthwiseConv2dNative), NHWC: filter
// [rows, cols, in_depth, multiplier]; the output has in_depth * multiplier
// channels.
Output DepthwiseConv2D(const Scope& scope, const Output& input,
                       const Output& filter, const std::vector<int64_t>& strides,
                       absl::string_view padding);
Output MaxPool(const Scope& scope, const Output& input,
               const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, absl::string_view padding);
Output AvgPool(const Scope& scope, const Output& input,
               const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, absl::string_view padding);

// Per-example loss [batch] and its gradient w.r.t. the logits [batch, classes].
struct SoftmaxXent {
  Output loss, backprop;
};
SoftmaxXent SparseSoftmaxCrossEntropyWithLogits(const Scope& scope,
                                                const Output& logits,
                                                const Output& labels);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_NN_OPS_H_
