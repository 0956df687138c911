// MatMul: product = op(a) * op(b), op = transpose or not; and _FusedMatMul,
// the same then the epilogue TensorFlow's remapper fused after it
// (fused_epilogue.h). This file checks shapes; the arithmetic is Gemm()
// (matmul_gemm.h).
#include <algorithm>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ops/cpu/fused_epilogue.h"
#include "ops/cpu/matmul_gemm.h"
#include "ops/registration.h"

namespace weft {
namespace {

template <typename T>
class MatMulOp : public OpKernel {
 public:
  MatMulOp(OpKernelConstruction* c, bool fused) : OpKernel(c), fused_(fused) {
    c->SetStatus(c->GetAttr("transpose_a", &transpose_a_));
    c->SetStatus(c->GetAttr("transpose_b", &transpose_b_));
    if (fused_) c->SetStatus(ParseFusedEpilogue(c, /*allow_batch_norm=*/false, &epilogue_));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    OP_REQUIRES(c, a.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "In[0] is not a matrix. Instead it has shape ",
                    a.shape().DebugString())));
    OP_REQUIRES(c, b.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "In[1] is not a matrix. Instead it has shape ",
                    b.shape().DebugString())));
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t k2 = b.dim_size(transpose_b_ ? 1 : 0);
    const int64_t n = b.dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(c, k == k2,
                absl::InvalidArgumentError(absl::StrCat(
                    "Matrix size-incompatible: In[0]: ",
                    a.shape().DebugString(), ", In[1]: ",
                    b.shape().DebugString(),
                    transpose_a_ || transpose_b_
                        ? absl::StrCat(" (transpose_a=", transpose_a_,
                                       ", transpose_b=", transpose_b_, ")")
                        : "")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({m, n}), &out));
    if (m == 0 || n == 0) return;
    T* o = out->data<T>();
    if (k == 0) {
      std::fill(o, o + m * n, T(0));
    } else {
      OP_REQUIRES_OK(c, Gemm(c, transpose_a_, transpose_b_, m, n, k, a.data<T>(),
                             b.data<T>(), o));
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (fused_) {
        OP_REQUIRES_OK(c, ApplyFusedEpilogue<T>(c, epilogue_, /*first_arg=*/2, m, n, o));
      }
    }
  }

 private:
  const bool fused_;
  bool transpose_a_ = false;
  bool transpose_b_ = false;
  FusedEpilogue epilogue_;
};

template <typename T>
void RegisterMatMul(KernelRegistry* r) {
  r->Register(KernelDef("MatMul", kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<MatMulOp<T>>(c, /*fused=*/false);
              });
  if constexpr (std::is_same_v<T, float>) {
    r->Register(KernelDef("_FusedMatMul", kDeviceTypeCpu)
                    .TypeConstraint("T", DataTypeToEnum<T>::value),
                [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                  return std::make_unique<MatMulOp<T>>(c, /*fused=*/true);
                });
  }
}

}  // namespace

void RegisterMatMulKernels(KernelRegistry* r) {
  RegisterMatMul<float>(r);
  RegisterMatMul<double>(r);
  RegisterMatMul<int32_t>(r);
  RegisterMatMul<int64_t>(r);
  RegisterMatMul<Complex64>(r);
  RegisterMatMul<Complex128>(r);
}

}  // namespace weft
