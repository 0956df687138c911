// The epilogue of _FusedConv2D and _FusedMatMul: what TensorFlow's grappler
// (its remapper) fuses into a convolution or a product that comes first,
// applied in one pass over the [rows, n] output, channel j = column j.
//
//   fused_ops              args                         per output value
//   BiasAdd                bias[n]                      y + bias[j]
//   FusedBatchNorm         scale, offset, mean, var[n]  (y - mean) * scale *
//                                                       rsqrt(var + epsilon) + offset
//   BiasAdd, Add           bias[n], side[rows, n]       y + bias[j] + side
// each optionally followed by one activation: Relu, Relu6, Elu,
// LeakyRelu (leakyrelu_alpha), Tanh, Sigmoid, GeluApproximate, GeluExact.
// (FusedBatchNorm only for the convolution, as TensorFlow has it.)
//
//   FusedEpilogue e;  // in the kernel's constructor
//   c->SetStatus(ParseFusedEpilogue(c, /*allow_batch_norm=*/true, &e));
//   ...                // after the product into out:
//   OP_REQUIRES_OK(c, ApplyFusedEpilogue<float>(c, e, /*first_arg=*/2, rows, n, out));
//
// Errors: INVALID_ARGUMENT naming fused_ops for a sequence not above, or
// num_args not what it needs; naming the arg for a wrong shape.
// Thread safety: ApplyFusedEpilogue splits the rows over the context's
// intra-op pool.
#ifndef WEFT_OPS_CPU_FUSED_EPILOGUE_H_
#define WEFT_OPS_CPU_FUSED_EPILOGUE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ops/framework/op_kernel.h"

namespace weft {

struct FusedEpilogue {
  enum class Kind { kBias, kBatchNorm, kBiasAndAdd };
  enum class Activation {
    kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid, kGeluApproximate, kGeluExact
  };
  Kind kind = Kind::kBias;
  Activation activation = Activation::kNone;
  float epsilon = 1e-4f;
  float leakyrelu_alpha = 0.2f;
  int num_args = 1;  // inputs the epilogue reads
};

// Reads fused_ops, num_args, epsilon and leakyrelu_alpha.
absl::Status ParseFusedEpilogue(OpKernelConstruction* c, bool allow_batch_norm,
                                FusedEpilogue* out);

// out[rows, n] in place; the args are inputs first_arg... of c. T: float
// or double.
template <typename T>
absl::Status ApplyFusedEpilogue(OpKernelContext* c, const FusedEpilogue& e,
                                int first_arg, int64_t rows, int64_t n, T* out);

}  // namespace weft

#endif  // WEFT_OPS_CPU_FUSED_EPILOGUE_H_
