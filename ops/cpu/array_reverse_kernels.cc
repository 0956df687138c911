// ReverseV2: the elements of `tensor` in reverse order along each dim in
// `axis` (Bidirectional RNNs reverse the time axis with it); Reverse (v1)
// names the dims by a bool per dim instead. Rows of the
// innermost dim are copied whole when that dim is not reversed.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// The dims Reverse's bool vector `dims` marks, one per dim of `x`.
absl::Status FlipsFromBools(const Tensor& x, const Tensor& dims, std::vector<bool>* flip) {
  if (dims.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'dims' must be 1-dimension, not ", dims.dims()));
  }
  if (dims.dim_size(0) != x.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'dims' must have the same number of values as 'input' has "
        "dimensions. 'input' has ", x.dims(), "'dims' has ", dims.dim_size(0),
        " values"));
  }
  for (int d = 0; d < x.dims(); ++d) (*flip)[d] = dims.data<bool>()[d];
  return absl::OkStatus();
}

// The dims ReverseV2's `axis` names (each at most once).
absl::Status FlipsFromAxes(const Tensor& x, const Tensor& axis, std::vector<bool>* flip) {
  std::vector<int64_t> axes;
  WEFT_RETURN_IF_ERROR(ReadIntVector(axis, "axis", &axes));
  for (int64_t a : axes) {
    int d = 0;
    WEFT_RETURN_IF_ERROR(CanonicalAxis(a, x.dims(), "axis", &d));
    if ((*flip)[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("ReverseV2: axis ", a, " is given more than once"));
    }
    (*flip)[d] = true;
  }
  return absl::OkStatus();
}

template <bool kBoolDims>
class ReverseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const int rank = x.dims();
    std::vector<bool> flip(rank, false);
    OP_REQUIRES_OK(c, kBoolDims ? FlipsFromBools(x, c->input(1), &flip)
                                : FlipsFromAxes(x, c->input(1), &flip));
    if (std::none_of(flip.begin(), flip.end(), [](bool b) { return b; }) ||
        x.NumElements() == 0) {
      c->set_output(0, x);
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &out));
    const int64_t inner = rank == 0 ? 1 : x.dim_size(rank - 1);
    const int64_t rows = x.NumElements() / inner;
    const bool flip_inner = flip[rank - 1];
    const bool ok = VisitStorage(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = out->data<T>();
      for (int64_t row = 0; row < rows; ++row) {
        // The source row: each reversed outer dim's index mirrored.
        int64_t rest = row, from = 0, stride = 1;
        for (int d = rank - 2; d >= 0; --d) {
          const int64_t n = x.dim_size(d);
          const int64_t i = rest % n;
          rest /= n;
          from += (flip[d] ? n - 1 - i : i) * stride;
          stride *= n;
        }
        const T* s = src + from * inner;
        T* o = dst + row * inner;
        if (flip_inner) {
          std::reverse_copy(s, s + inner, o);
        } else {
          std::copy_n(s, inner, o);
        }
      }
    });
    OP_REQUIRES(c, ok, UnsupportedDtype("ReverseV2", x.dtype()));
  }
};

}  // namespace

void RegisterArrayReverseKernels(KernelRegistry* r) {
  r->Register(KernelDef("ReverseV2", kDeviceTypeCpu), MakeKernel<ReverseOp<false>>);
  r->Register(KernelDef("Reverse", kDeviceTypeCpu), MakeKernel<ReverseOp<true>>);
}

}  // namespace weft
