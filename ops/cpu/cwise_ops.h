// Element-wise kernels: one template per arity, one functor per op.
//
// A functor says what an op computes on Eigen array expressions; the
// kernels here say how to walk tensors (same shape, scalar against tensor,
// NumPy broadcasting of any rank) and when to use threads:
//
//   struct AddFunctor : BinaryFunctorBase {
//     static constexpr int kCost = 1;  // ~cycles per element
//     template <typename X, typename Y>
//     static auto Apply(const X& x, const Y& y) { return x + y; }
//   };
//   r->Register(KernelDef("AddV2", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
//               MakeKernel<BinaryOp<AddFunctor, float, float>>);
//
// `x` and `y` are Eigen array expressions of equal length: a mapped slice
// of an input, or a constant standing for a broadcast scalar. The result is
// assigned through Eigen, so the inner loops are vectorised.
//
// Work is split into rows of contiguous elements (BroadcastPlan); below
// kParallelMinCost it runs on the calling thread, else over the device's
// intra-op pool. Outputs reuse an input buffer when it is free (same shape,
// same dtype, no other holder).
//
// Include this header only from ops/cpu/*.cc: it pulls in Eigen.
#ifndef WEFT_OPS_CPU_CWISE_OPS_H_
#define WEFT_OPS_CPU_CWISE_OPS_H_

#include <cstdint>
#include <initializer_list>

// GCC 12 warns inside its own AVX-512 intrinsics headers (the deliberately
// uninitialised _mm512_undefined_*); silence that, not our code's warnings.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ops/cpu/broadcast.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"

namespace weft {

template <typename T>
using EigenArray = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T>
using ConstArrayMap = Eigen::Map<const EigenArray<T>>;
template <typename T>
using ArrayMap = Eigen::Map<EigenArray<T>>;

// Defaults for binary functors: no input checks.
struct BinaryFunctorBase {
  // Checks a kernel must make before computing (integer division by zero,
  // say). `y` is the second input, whole.
  template <typename T>
  static absl::Status CheckInputs(const Tensor& y) {
    return absl::OkStatus();
  }
};

// Output 0 of `c` with `shape`: the buffer of the first candidate input that
// has that shape and dtype and no other holder, else a new one.
inline absl::Status ForwardOrAllocateOutput(
    OpKernelContext* c, std::initializer_list<int> candidates,
    const TensorShape& shape, Tensor** out) {
  const DataType dtype = BaseType(c->expected_output_dtype(0));
  for (int i : candidates) {
    if (c->input_is_ref(i)) continue;
    const Tensor& t = c->input(i);
    if (t.dtype() == dtype && t.shape() == shape && t.BufferIsUnique()) {
      return c->forward_input_or_allocate_output(i, 0, shape, out);
    }
  }
  return c->allocate_output(0, shape, out);
}

// out[i] = F(x[i], y[i]) for i < n; a non-vector operand is one element
// repeated. At least one operand is a vector unless n == 1.
template <typename F, typename T, typename Tout>
inline void BinaryInner(const T* x, bool x_vec, const T* y, bool y_vec,
                        Tout* out, int64_t n) {
  ArrayMap<Tout> o(out, n);
  if (x_vec == y_vec) {
    o = F::Apply(ConstArrayMap<T>(x, n), ConstArrayMap<T>(y, n));
  } else if (x_vec) {
    o = F::Apply(ConstArrayMap<T>(x, n), EigenArray<T>::Constant(n, *y));
  } else {
    o = F::Apply(EigenArray<T>::Constant(n, *x), ConstArrayMap<T>(y, n));
  }
}

// Flat case: x and y are vectors of n or single elements.
template <typename F, typename T, typename Tout>
void BinaryFlat(OpKernelContext* c, const T* x, bool x_vec, const T* y,
                bool y_vec, Tout* out, int64_t n) {
  ParallelRange(c, n, F::kCost, [&](int64_t b, int64_t e) {
    BinaryInner<F>(x_vec ? x + b : x, x_vec, y_vec ? y + b : y, y_vec,
                   out + b, e - b);
  });
}

// General case: rows of the broadcast plan.
template <typename F, typename T, typename Tout>
void BinaryBroadcast(OpKernelContext* c, const BroadcastPlan& plan,
                     const T* x, const T* y, Tout* out) {
  const int64_t inner = plan.inner();
  const bool x_vec = plan.x_inner_contiguous();
  const bool y_vec = plan.y_inner_contiguous();
  ParallelRange(c, plan.rows(), inner * F::kCost + 4,
                [&](int64_t begin, int64_t end) {
                  BroadcastRowIterator it(plan, begin);
                  for (int64_t r = begin; r < end; ++r, it.Next()) {
                    BinaryInner<F>(x + it.x_offset(), x_vec,
                                   y + it.y_offset(), y_vec,
                                   out + r * inner, inner);
                  }
                });
}

// Computes F over two inputs with NumPy broadcasting into output 0.
template <typename F, typename T, typename Tout>
void ComputeBinary(OpKernelContext* c, const Tensor& x, const Tensor& y) {
  OP_REQUIRES_OK(c, F::template CheckInputs<T>(y));
  Tensor* out = nullptr;
  if (x.shape() == y.shape()) {
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0, 1}, x.shape(), &out));
    BinaryFlat<F>(c, x.data<T>(), true, y.data<T>(), true, out->data<Tout>(),
                  x.NumElements());
  } else if (y.NumElements() == 1 && y.dims() <= x.dims()) {
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0}, x.shape(), &out));
    BinaryFlat<F>(c, x.data<T>(), true, y.data<T>(), false,
                  out->data<Tout>(), x.NumElements());
  } else if (x.NumElements() == 1 && x.dims() <= y.dims()) {
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {1}, y.shape(), &out));
    BinaryFlat<F>(c, x.data<T>(), false, y.data<T>(), true,
                  out->data<Tout>(), y.NumElements());
  } else {
    absl::StatusOr<BroadcastPlan> plan = MakeBroadcastPlan(x.shape(), y.shape());
    OP_REQUIRES_OK(c, plan.status());
    OP_REQUIRES_OK(c,
                   ForwardOrAllocateOutput(c, {0, 1}, plan->out_shape, &out));
    if (plan->out_shape.num_elements() == 0) return;
    BinaryBroadcast<F>(c, *plan, x.data<T>(), y.data<T>(), out->data<Tout>());
  }
}

// z = F(x, y) with broadcasting (AddV2, Mul, Less, ...).
template <typename F, typename T, typename Tout>
class BinaryOp : public OpKernel {
 public:
  explicit BinaryOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    ComputeBinary<F, T, Tout>(c, c->input(0), c->input(1));
  }
};

// Binary ops on two inputs of equal element count, element by element; the
// output has input 0's shape (TanhGrad and the other gradient ops, as in
// TensorFlow).
template <typename F, typename T>
class SameSizeBinaryOp : public OpKernel {
 public:
  explicit SameSizeBinaryOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const Tensor& y = c->input(1);
    OP_REQUIRES(c, x.NumElements() == y.NumElements(),
                absl::InvalidArgumentError(absl::StrCat(
                    "The two arguments to a cwise op must have same number of "
                    "elements, got ",
                    x.NumElements(), " and ", y.NumElements())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0, 1}, x.shape(), &out));
    BinaryFlat<F>(c, x.data<T>(), true, y.data<T>(), true, out->data<T>(),
                  x.NumElements());
  }
};

// Equal / NotEqual: with incompatible_shape_error=false, shapes that do not
// broadcast give a scalar F::kIncompatible instead of an error.
template <typename F, typename T>
class EqualityOp : public OpKernel {
 public:
  explicit EqualityOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("incompatible_shape_error", &shape_error_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const Tensor& y = c->input(1);
    if (!shape_error_ && !ShapesBroadcast(x.shape(), y.shape())) {
      Tensor* out = nullptr;
      OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
      out->scalar<bool>() = F::kIncompatible;
      return;
    }
    ComputeBinary<F, T, bool>(c, x, y);
  }

 private:
  bool shape_error_ = true;
};

// Output 0 (input 0's buffer where it can be forwarded) as map(in, out, n)
// of input 0, over chunks run in parallel; `cost` per element as kCost.
template <typename T, typename Tout, typename Map>
void ComputeUnary(OpKernelContext* c, int cost, Map map) {
  const Tensor& x = c->input(0);
  Tensor* out = nullptr;
  OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0}, x.shape(), &out));
  const T* in = x.data<T>();
  Tout* o = out->data<Tout>();
  ParallelRange(c, x.NumElements(), cost,
                [&](int64_t b, int64_t e) { map(in + b, o + b, e - b); });
}

// y = F(x), same shape (Neg, Exp, Relu, ...).
template <typename F, typename T, typename Tout = T>
class UnaryOp : public OpKernel {
 public:
  explicit UnaryOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    ComputeUnary<T, Tout>(c, F::kCost, [](const T* in, Tout* o, int64_t n) {
      ArrayMap<Tout>(o, n) = F::Apply(ConstArrayMap<T>(in, n));
    });
  }
};

// Registration shorthands: a CPU kernel for attr T = T.
template <typename Kernel, typename T>
void RegisterCpuKernel(KernelRegistry* r, const char* op) {
  r->Register(KernelDef(op, kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value),
              MakeKernel<Kernel>);
}
template <typename F, typename T>
void RegisterBinary(KernelRegistry* r, const char* op) {
  RegisterCpuKernel<BinaryOp<F, T, T>, T>(r, op);
}
template <typename F, typename T>
void RegisterComparison(KernelRegistry* r, const char* op) {
  RegisterCpuKernel<BinaryOp<F, T, bool>, T>(r, op);
}
template <typename F, typename T>
void RegisterUnary(KernelRegistry* r, const char* op) {
  RegisterCpuKernel<UnaryOp<F, T>, T>(r, op);
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_CWISE_OPS_H_
