// The gradient registry: a gradient function per op type.
//
// Gradient functions are registered by plain functions, one per op family,
// called in order by GlobalGradRegistry() (like the op registry):
//
//   void RegisterMathGrads(GradRegistry* r) {
//     r->Register("Neg", [](const Scope& s, const GradInputs& in,
//                           std::vector<Output>* dx) {
//       (*dx)[0] = Neg(s, in.dy[0]);
//       return absl::OkStatus();
//     });
//   }
//
// A function sees the forward node, its data inputs and outputs (with
// dtypes) and the gradient of each output (an invalid Output where none
// flows), and sets the gradient of each data input (left invalid for none).
// Every gradient it sets must have exactly its input's shape and dtype.
//
// Thread safety: GlobalGradRegistry() is built once and then read-only.
#ifndef WEFT_GRAPH_BUILDER_GRAD_REGISTRY_H_
#define WEFT_GRAPH_BUILDER_GRAD_REGISTRY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "graph/builder/scope.h"
#include "proto/node_def.pb.h"

namespace weft {

struct GradInputs {
  const tensorflow::NodeDef* node;
  std::vector<Output> x;   // the node's data inputs
  std::vector<Output> y;   // the node's outputs
  std::vector<Output> dy;  // gradient per output; invalid = none
};

using GradFn = std::function<absl::Status(
    const Scope& scope, const GradInputs& in, std::vector<Output>* dx)>;

class GradRegistry {
 public:
  GradRegistry() = default;
  GradRegistry(const GradRegistry&) = delete;
  GradRegistry& operator=(const GradRegistry&) = delete;

  void Register(const std::string& op, GradFn fn);
  // Ops that have no gradient (StopGradient, Shape, comparisons, ...):
  // nothing flows through them to their inputs.
  void RegisterNoGradient(const std::string& op);

  // NOT_FOUND naming the op if it has no entry. *fn is null for ops
  // registered with RegisterNoGradient.
  absl::Status LookUp(const std::string& op, const GradFn** fn) const;
  std::vector<std::string> OpNames() const;  // sorted

 private:
  absl::flat_hash_map<std::string, GradFn> fns_;  // null fn: no gradient
};

// Every gradient Weft has.
const GradRegistry& GlobalGradRegistry();

void RegisterArrayGrads(GradRegistry* r);
void RegisterIndexGrads(GradRegistry* r);
void RegisterMathGrads(GradRegistry* r);
// Sin, Erf, Lgamma, Atan2, Xlogy, ... (math_func_grad.cc).
void RegisterMathFuncGrads(GradRegistry* r);
void RegisterMatMulGrads(GradRegistry* r);
void RegisterReductionGrads(GradRegistry* r);
void RegisterNnGrads(GradRegistry* r);
void RegisterConvGrads(GradRegistry* r);
// MaxPool3D, AvgPool3D, LRN, MaxPoolWithArgmax (nn3d_grad.cc).
void RegisterNn3dGrads(GradRegistry* r);
// SpaceToBatchND, MirrorPad, TopKV2, Roll, ... (array_index_grad.cc).
void RegisterArrayIndexGrads(GradRegistry* r);
// FusedBatchNorm* and the image resizes (norm_resize_grad.cc).
void RegisterNormResizeGrads(GradRegistry* r);
// MatrixInverse, Cholesky, MatrixSolve, SelfAdjointEigV2, ... (linalg_grad.cc).
void RegisterLinalgGrads(GradRegistry* r);
// CropAndResize, ResizeBicubic, ScaleAndTranslate, ExtractImagePatches
// and the image ops' no-gradient
// entries (image_grad.cc).
void RegisterImageGrads(GradRegistry* r);
// Gradients of gradient ops (second derivatives).
void RegisterGradGrads(GradRegistry* r);
// Cond (Switch/Merge) and the parts of builder while loops (control_flow.h).
void RegisterControlFlowGrads(GradRegistry* r);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_GRAD_REGISTRY_H_
