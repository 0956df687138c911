// AddN: the element-wise sum of N tensors of one shape.
#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/cwise_register.h"
#include "ops/cpu/wrapping.h"

namespace weft {
namespace {

// Elements summed per pass: the partial sum stays in L1 while the inputs
// stream past.
constexpr int64_t kAddNChunk = 4096;

template <typename T>
class AddNOp : public OpKernel {
 public:
  explicit AddNOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* c) override {
    const int n = c->num_inputs();
    const Tensor& x0 = c->input(0);
    for (int i = 1; i < n; ++i) {
      const Tensor& xi = c->input(i);
      OP_REQUIRES(c, xi.shape() == x0.shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Inputs to operation AddN must have the same size and "
                      "shape.  Input 0: ",
                      x0.shape().DebugString(), " != input ", i, ": ",
                      xi.shape().DebugString())));
    }
    if (n == 1) {
      c->set_output(0, x0);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0}, x0.shape(), &out));
    absl::InlinedVector<const T*, 8> in(n);
    for (int i = 0; i < n; ++i) in[i] = c->input(i).template data<T>();
    T* o = out->data<T>();
    ParallelRange(c, x0.NumElements(), n, [&](int64_t b, int64_t e) {
      for (int64_t cb = b; cb < e; cb += kAddNChunk) {
        const int64_t len = std::min(kAddNChunk, e - cb);
        ArrayMap<T> acc(o + cb, len);
        acc = WrapAdd(ConstArrayMap<T>(in[0] + cb, len),
                      ConstArrayMap<T>(in[1] + cb, len));
        for (int i = 2; i < n; ++i) {
          acc = WrapAdd(acc, ConstArrayMap<T>(in[i] + cb, len));
        }
      }
    });
  }
};

}  // namespace

void RegisterAddNKernels(KernelRegistry* r) {
  RegisterCpuKernel<AddNOp<float>, float>(r, "AddN");
  RegisterCpuKernel<AddNOp<double>, double>(r, "AddN");
  RegisterCpuKernel<AddNOp<int32_t>, int32_t>(r, "AddN");
  RegisterCpuKernel<AddNOp<int64_t>, int64_t>(r, "AddN");
  RegisterCpuKernel<AddNOp<int8_t>, int8_t>(r, "AddN");
  RegisterCpuKernel<AddNOp<int16_t>, int16_t>(r, "AddN");
  RegisterCpuKernel<AddNOp<uint8_t>, uint8_t>(r, "AddN");
  RegisterCpuKernel<AddNOp<uint16_t>, uint16_t>(r, "AddN");
  RegisterCpuKernel<AddNOp<uint32_t>, uint32_t>(r, "AddN");
  RegisterCpuKernel<AddNOp<uint64_t>, uint64_t>(r, "AddN");
  RegisterCpuKernel<AddNOp<Complex64>, Complex64>(r, "AddN");
  RegisterCpuKernel<AddNOp<Complex128>, Complex128>(r, "AddN");
}

}  // namespace weft
