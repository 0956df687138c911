// ReverseV2: the elements of `tensor` in reverse order along each dim in
// `axis` (Bidirectional RNNs reverse the time axis with it). Rows of the
// innermost dim are copied whole when that dim is not reversed.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

class ReverseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    std::vector<int64_t> axes;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "axis", &axes));
    const int rank = x.dims();
    std::vector<bool> flip(rank, false);
    for (int64_t a : axes) {
      int axis = 0;
      OP_REQUIRES_OK(c, CanonicalAxis(a, rank, "axis", &axis));
      OP_REQUIRES(c, !flip[axis],
                  absl::InvalidArgumentError(absl::StrCat(
                      "ReverseV2: axis ", a, " is given more than once")));
      flip[axis] = true;
    }
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
  r->Register(KernelDef("ReverseV2", kDeviceTypeCpu), MakeKernel<ReverseOp>);
}

}  // namespace weft
