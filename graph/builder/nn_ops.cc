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
SoftmaxXent SparseSoftmaxCrossEntropyWithLogits(const Scope& scope,
                                                const Output& logits,
                                                const Output& labels) {
  std::vector<Output> outs =
      AddNode(scope, "SparseSoftmaxCrossEntropyWithLogits", {logits, labels});
  if (outs.size() != 2) return SoftmaxXent();
  return SoftmaxXent{outs[0], outs[1]};
}

}  // namespace weft
