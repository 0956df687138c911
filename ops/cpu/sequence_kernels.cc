// LinSpace (num evenly spaced values from start to stop) and UnravelIndex
// (flat indices to coordinates in a shape). LinSpace computes as
// TensorFlow does, so its values match to the bit: step = (stop - start) /
// (num - 1) in T, value i = start + step * i, the first value start and the
// last stop themselves (start alone when num is 1).
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// Reads input i, a scalar of the int32/int64 dtype `Tidx`.
int64_t IndexScalar(const Tensor& t) {
  return t.dtype() == DT_INT32 ? t.data<int32_t>()[0] : t.data<int64_t>()[0];
}

template <typename T>
void FillLinSpace(T start, T stop, int64_t num, T* out) {
  if (num == 1) {
    out[0] = start;
    return;
  }
  const T step = (stop - start) / static_cast<T>(num - 1);
  out[0] = start;  // start itself, also where step is inf (0 * inf is nan)
  for (int64_t i = 1; i < num - 1; ++i) out[i] = start + step * static_cast<T>(i);
  out[num - 1] = stop;
}

class LinSpaceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const char* names[] = {"start", "stop", "num"};
    for (int i = 0; i < 3; ++i) {
      OP_REQUIRES(c, c->input(i).dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      names[i], " must be a scalar, not shape ",
                      c->input(i).shape().DebugString())));
    }
    const int64_t num = IndexScalar(c->input(2));
    OP_REQUIRES(c, num > 0,
                absl::InvalidArgumentError(absl::StrCat("Requires num > 0: ", num)));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({num}), &out));
    const Tensor& start = c->input(0);
    const Tensor& stop = c->input(1);
    auto run = [&](auto tag) {
      using T = decltype(tag);
      FillLinSpace<T>(start.data<T>()[0], stop.data<T>()[0], num, out->data<T>());
    };
    if (start.dtype() == DT_FLOAT) {
      run(float{});
    } else {
      run(double{});
    }
  }
};

template <typename I>
class UnravelIndexOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& indices = c->input(0);
    const Tensor& dims = c->input(1);
    OP_REQUIRES(c, indices.dims() <= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "The indices can only be scalar or vector, got \"",
                    indices.shape().DebugString(), "\"")));
    OP_REQUIRES(c, dims.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "The indices can only be 1-D, got \"", dims.shape().DebugString(),
                    "\"")));
    const int64_t n = dims.NumElements();
    const I* d = dims.data<I>();
    const double limit = static_cast<double>(std::numeric_limits<I>::max());
    double prod = 1;
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(c, d[i] != 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input dims cannot contain a dim of zero, but dims contains "
                      "zero at index ", i)));
      OP_REQUIRES(c, d[i] > 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input dims cannot be negative. Got dim = ", d[i],
                      " at index ", i)));
      OP_REQUIRES(c, prod <= limit / static_cast<double>(d[i]),
                  absl::InvalidArgumentError(
                      "Input dims product is causing integer overflow"));
      prod *= static_cast<double>(d[i]);
    }
    const I total = static_cast<I>(prod);
    const I* idx = indices.data<I>();
    const int64_t count = indices.NumElements();
    OP_REQUIRES(c, count > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "received empty tensor indices: shape ",
                    indices.shape().DebugString())));
    for (int64_t j = 0; j < count; ++j) {
      OP_REQUIRES(c, idx[j] < total,
                  absl::InvalidArgumentError("index is out of bound as with dims"));
    }
    TensorShape shape({n});
    if (indices.dims() == 1) shape.AddDim(count);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    // Row i: (index / stride_i) % dims_i, stride_i the product of the dims
    // after i (C++ division, as TensorFlow's Eigen expression).
    I* o = out->data<I>();
    I stride = 1;
    for (int64_t i = n - 1; i >= 0; --i) {
      for (int64_t j = 0; j < count; ++j) o[i * count + j] = (idx[j] / stride) % d[i];
      stride *= d[i];
    }
  }
};

}  // namespace

void RegisterSequenceKernels(KernelRegistry* r) {
  // TensorFlow's CPU kernels: float and double only (its OpDef also
  // allows half and bfloat16).
  r->Register(KernelDef("LinSpace", kDeviceTypeCpu).TypeConstraint("T", {DT_FLOAT, DT_DOUBLE}),
              MakeKernel<LinSpaceOp>);
  r->Register(KernelDef("UnravelIndex", kDeviceTypeCpu).TypeConstraint("Tidx", DT_INT32),
              MakeKernel<UnravelIndexOp<int32_t>>);
  r->Register(KernelDef("UnravelIndex", kDeviceTypeCpu).TypeConstraint("Tidx", DT_INT64),
              MakeKernel<UnravelIndexOp<int64_t>>);
}

}  // namespace weft
