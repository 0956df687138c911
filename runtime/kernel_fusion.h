// Kernel fusion: a convolution or product followed by per-channel affine
// nodes and an activation becomes one _FusedConv2D / _FusedMatMul, as
// TensorFlow's remapper does for the graphs it runs. Keras writes batch
// normalisation in an inference graph as a Mul and an Add by per-channel
// constants (after constant_folding.h); with the convolution's BiasAdd and
// the Relu after it that is four passes over every activation, where the
// fused kernel makes one (ResNet50 inference spends a fifth of its kernel
// time in those passes unfused).
//
//   WEFT_RETURN_IF_ERROR(FuseKernels(graph));   // after FoldConstants
//
// Patterns, float and double (MatMul: float), NHWC:
//   Conv2D(x, W) | MatMul(x, W) | DepthwiseConv2dNative(x, W)
//     then any run of BiasAdd(., b), Add/AddV2(., c), Sub(., c), Mul(., s),
//     RealDiv(., s), FusedBatchNorm/V2/V3 (inference, only `y` read), where
//     b, c, s and the batch norm's parameters are Const nodes holding one
//     value or one per output channel,
//     then at most one of Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid
//     (not after a depthwise convolution that stays, below).
// The run's scales are multiplied into a copy of W (W must then be a Const
// node; without one the run stops before the first scale), its shifts
// summed into one bias: Conv2D, MatMul and a float depthwise convolution
// with SAME or VALID padding become _FusedConv2D / _FusedMatMul /
// _FusedDepthwiseConv2dNative with fused_ops [BiasAdd(, activation)];
// another depthwise convolution keeps its node, reads the scaled filter,
// and the run becomes one BiasAdd. Every node of a run but its last must have the run's next
// node as its only reader, on the same device. The fused node takes the
// last node's name, so errors and fetches still name it. Values change
// only by rounding (W*s is rounded once, where the graph rounded conv*s).
//
// First, a Pad by constant rows and columns read only by a VALID Conv2D or
// DepthwiseConv2dNative becomes the convolution's own padding (EXPLICIT),
// as Keras' ZeroPadding2D before a strided convolution.
//
// Errors: only what rewriting the graph itself reports (a bug). Thread
// safety: mutates `graph`; the caller owns it exclusively.
#ifndef WEFT_RUNTIME_KERNEL_FUSION_H_
#define WEFT_RUNTIME_KERNEL_FUSION_H_

#include "absl/status/status.h"
#include "graph/graph.h"

namespace weft {

absl::Status FuseKernels(Graph* graph);

}  // namespace weft

#endif  // WEFT_RUNTIME_KERNEL_FUSION_H_
