// BatchMatMulV2: [..., m, k] x [..., k, n] -> [..., m, n], the batch dims
// broadcast as in NumPy; adj_x/adj_y transpose the last two dims, and for
// complex types also conjugate them. BatchMatMulV3 runs the same kernel
// when x, y and the output share a dtype; int8 / uint8 inputs to an int32
// output (quantized models) are widened to int32 first.
//
// Large matrices go one at a time through Gemm() (matmul_gemm.h), which
// shards each product over the intra-op pool; many small ones (attention
// heads) are instead sharded by batch, each product a short loop of
// vectorised row updates (no GEMM instantiation: cheap to compile).
#include <algorithm>
#include <complex>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/math_extra_register.h"
#include "ops/cpu/matmul_gemm.h"
#include "ops/cpu/wrapping.h"
#include "ops/framework/op_kernel.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

namespace weft {
namespace {

// Below this many multiply-adds a product is too small to shard by itself.
constexpr int64_t kSmallProduct = int64_t{1} << 15;

template <typename T>
using Row = Eigen::Array<T, Eigen::Dynamic, 1>;

// Row-major [rows, cols] copy of the [cols, rows] matrix src.
template <typename T>
const T* Transposed(const T* src, int64_t rows, int64_t cols,
                    std::vector<T>* scratch) {
  scratch->resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) (*scratch)[r * cols + c] = src[c * rows + r];
  }
  return scratch->data();
}

template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  explicit BatchMatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("adj_x", &adj_x_));
    c->SetStatus(c->GetAttr("adj_y", &adj_y_));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const Tensor& y = c->input(1);
    if constexpr (kIsComplex<T>) {
      Multiply(c, adj_x_ ? Conjugated(x) : x, adj_y_ ? Conjugated(y) : y);
    } else if (x.dtype() == DataTypeToEnum<T>::value &&
               y.dtype() == DataTypeToEnum<T>::value) {
      Multiply(c, x, y);
    } else {
      Multiply(c, Widened(x), Widened(y));
    }
  }

 private:
  // The complex conjugate of `t` (an adjoint's conjugation; the GEMM then
  // transposes).
  static Tensor Conjugated(const Tensor& t) {
    Tensor out(t.dtype(), t.shape());
    const T* in = t.data<T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < t.NumElements(); ++i) o[i] = std::conj(in[i]);
    return out;
  }

  // `t` as a T tensor (the 8-bit inputs of BatchMatMulV3's mixed forms).
  static Tensor Widened(const Tensor& t) {
    if (t.dtype() == DataTypeToEnum<T>::value) return t;
    static_assert(!kIsComplex<T>);
    Tensor w(DataTypeToEnum<T>::value, t.shape());
    T* o = w.data<T>();
    if (t.dtype() == DT_INT8) {
      std::copy_n(t.data<int8_t>(), t.NumElements(), o);
    } else {
      std::copy_n(t.data<uint8_t>(), t.NumElements(), o);
    }
    return w;
  }

  void Multiply(OpKernelContext* c, const Tensor& x, const Tensor& y) {
    OP_REQUIRES(c, x.dims() >= 2 && y.dims() >= 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "In[0] and In[1] must have rank >= 2, got ",
                    x.shape().DebugString(), " and ", y.shape().DebugString())));
    const int rx = x.dims(), ry = y.dims();
    const int64_t m = x.dim_size(adj_x_ ? rx - 1 : rx - 2);
    const int64_t k = x.dim_size(adj_x_ ? rx - 2 : rx - 1);
    const int64_t k2 = y.dim_size(adj_y_ ? ry - 1 : ry - 2);
    const int64_t n = y.dim_size(adj_y_ ? ry - 2 : ry - 1);
    OP_REQUIRES(c, k == k2,
                absl::InvalidArgumentError(absl::StrCat(
                    "Matrix size-incompatible: In[0]: ", x.shape().DebugString(),
                    ", In[1]: ", y.shape().DebugString())));
    TensorShape xb, yb, batch;
    for (int d = 0; d < rx - 2; ++d) xb.AddDim(x.dim_size(d));
    for (int d = 0; d < ry - 2; ++d) yb.AddDim(y.dim_size(d));
    OP_REQUIRES(c, BroadcastShape(xb, yb, &batch),
                absl::InvalidArgumentError(absl::StrCat(
                    "In[0] and In[1] must have compatible batch dimensions: ",
                    x.shape().DebugString(), " vs. ", y.shape().DebugString())));
    TensorShape out_shape = batch;
    out_shape.AddDim(m);
    out_shape.AddDim(n);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    T* o = out->data<T>();
    if (k == 0) {
      std::fill(o, o + out->NumElements(), T(0));
      return;
    }
    // Element offsets of each batch's matrix in x and y.
    const int64_t nb = batch.num_elements();
    std::vector<int64_t> x_off(nb), y_off(nb);
    std::vector<int64_t> xs, ys;
    BroadcastStrides(xb, batch, &xs);
    BroadcastStrides(yb, batch, &ys);
    ForEachBroadcast<2>(batch, {xs, ys}, [&](int64_t i, const auto& off) {
      x_off[i] = off[0] * m * k;
      y_off[i] = off[1] * k * n;
    });
    const T* xp = x.data<T>();
    const T* yp = y.data<T>();
    if (m * n * k >= kSmallProduct || nb == 1) {
      for (int64_t i = 0; i < nb; ++i) {
        OP_REQUIRES_OK(c, Gemm(c, adj_x_, adj_y_, m, n, k, xp + x_off[i],
                               yp + y_off[i], o + i * m * n));
      }
      return;
    }
    ParallelRange(c, nb, m * n * k * 2, [&](int64_t b, int64_t e) {
      std::vector<T> at, bt;
      for (int64_t i = b; i < e; ++i) {
        SmallProduct(xp + x_off[i], yp + y_off[i], m, n, k, &at, &bt,
                     o + i * m * n);
      }
    });
  }

  // out[m, n] = op(a) op(b) for a small product: each output row is a sum
  // of scaled rows of op(b), vectorised along n.
  void SmallProduct(const T* a, const T* b, int64_t m, int64_t n, int64_t k,
                    std::vector<T>* at, std::vector<T>* bt, T* out) const {
    if (adj_x_) a = Transposed(a, m, k, at);
    if (adj_y_) b = Transposed(b, k, n, bt);
    for (int64_t i = 0; i < m; ++i) {
      Eigen::Map<Row<T>> row(out + i * n, n);
      row.setZero();
      for (int64_t p = 0; p < k; ++p) {
        const Eigen::Map<const Row<T>> b_row(b + p * n, n);
        if constexpr (kWrapsSigned<T>) {  // wraps, as TensorFlow's (wrapping.h)
          row = WrapAdd(row, WrapMul(Row<T>::Constant(n, a[i * k + p]), b_row));
        } else {
          row += a[i * k + p] * b_row;
        }
      }
    }
  }

  bool adj_x_ = false;
  bool adj_y_ = false;
};

template <typename T>
void Register(KernelRegistry* r) {
  r->Register(KernelDef("BatchMatMulV2", kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value),
              MakeKernel<BatchMatMulOp<T>>);
  const DataType t = DataTypeToEnum<T>::value;
  r->Register(KernelDef("BatchMatMulV3", kDeviceTypeCpu)
                  .TypeConstraint("Ta", t)
                  .TypeConstraint("Tb", t)
                  .TypeConstraint("Tout", t),
              MakeKernel<BatchMatMulOp<T>>);
}

}  // namespace

void RegisterBatchMatMulKernels(KernelRegistry* r) {
  Register<float>(r);
  Register<double>(r);
  Register<int32_t>(r);
  Register<int64_t>(r);
  Register<Complex64>(r);
  Register<Complex128>(r);
  for (DataType a : {DT_INT8, DT_UINT8}) {
    r->Register(KernelDef("BatchMatMulV3", kDeviceTypeCpu)
                    .TypeConstraint("Ta", a)
                    .TypeConstraint("Tb", DT_INT8)
                    .TypeConstraint("Tout", DT_INT32),
                MakeKernel<BatchMatMulOp<int32_t>>);
  }
}

}  // namespace weft
