// The kernels of ops/array_index_ops.cc and ops/array_layout_ops.cc, one
// file per theme; RegisterArrayIndexKernels (array_index_kernels.cc) calls
// each file's registration below. Also the dtype lists they share.
#ifndef WEFT_OPS_CPU_ARRAY_INDEX_KERNELS_H_
#define WEFT_OPS_CPU_ARRAY_INDEX_KERNELS_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "ops/framework/kernel_registry.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_shape.h"
#include "runtime/core/types.h"

namespace weft {

// TopKV2 (topk_kernels.cc).
void RegisterTopKKernels(KernelRegistry* r);
// MatrixBandPart, Diag, DiagPart (matrix_band_kernels.cc).
void RegisterMatrixBandKernels(KernelRegistry* r);
// MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3 (matrix_diag_kernels.cc).
void RegisterMatrixDiagKernels(KernelRegistry* r);
// MirrorPad, MirrorPadGrad (mirror_pad_kernels.cc).
void RegisterMirrorPadKernels(KernelRegistry* r);
// SpaceToBatchND, BatchToSpaceND, SpaceToDepth, DepthToSpace
// (space_batch_kernels.cc).
void RegisterSpaceBatchKernels(KernelRegistry* r);
// Roll, ReverseSequence (roll_kernels.cc).
void RegisterRollKernels(KernelRegistry* r);
// CheckNumerics, CheckNumericsV2 (check_numerics_kernels.cc).
void RegisterCheckNumericsKernels(KernelRegistry* r);

// TensorFlow's "real number types" that Weft holds: PodTypes() less bool.
DataTypeVector RealNumberTypes();

// True for the C++ types of RealNumberTypes(): the ones kernels that
// compare or add (TopKV2, MirrorPadGrad) instantiate for.
template <typename T>
constexpr bool IsRealNumber() {
  return (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
         std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
}

// INVALID_ARGUMENT unless `in` has rank >= 2 (a batch of matrices).
absl::Status RequireMatrices(const Tensor& in);

// Elements between consecutive indices of each dim, row-major.
std::vector<int64_t> ShapeStrides(const TensorShape& s);

}  // namespace weft

#endif  // WEFT_OPS_CPU_ARRAY_INDEX_KERNELS_H_
