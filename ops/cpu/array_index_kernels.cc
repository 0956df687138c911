// Registers the kernels of ops/array_index_ops.cc and
// ops/array_layout_ops.cc (see array_index_kernels.h), and the helpers
// those kernel files share.
#include "ops/cpu/array_index_kernels.h"

#include "absl/strings/str_cat.h"
#include "ops/registration.h"

namespace weft {

DataTypeVector RealNumberTypes() {
  return {DT_FLOAT, DT_DOUBLE, DT_INT32,  DT_INT64,  DT_UINT8,  DT_INT8,
          DT_INT16, DT_UINT16, DT_UINT32, DT_UINT64, DT_HALF,   DT_BFLOAT16};
}

std::vector<int64_t> ShapeStrides(const TensorShape& s) {
  std::vector<int64_t> strides(s.dims(), 1);
  for (int d = s.dims() - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * s.dim_size(d + 1);
  }
  return strides;
}

absl::Status RequireMatrices(const Tensor& in) {
  if (in.dims() >= 2) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "input must be at least 2-dim, received shape: ", in.shape().DebugString()));
}

void RegisterArrayIndexKernels(KernelRegistry* r) {
  RegisterTopKKernels(r);
  RegisterMatrixBandKernels(r);
  RegisterMatrixDiagKernels(r);
  RegisterMirrorPadKernels(r);
  RegisterSpaceBatchKernels(r);
  RegisterRollKernels(r);
  RegisterCheckNumericsKernels(r);
}

}  // namespace weft
