// Bincount, DenseBincount and SparseBincount: how often each value in
// [0, size) occurs (or the sum of its weights, or 1 when binary_output),
// per row for 2-D inputs. Values >= size are dropped and negative ones
// refused, as TensorFlow does; weights add in input order (as TensorFlow's
// CPU loop), so float sums match it exactly.
#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// Adds values[0, n) into out[0, size): weights (w, or 1 when null), or 1
// flags when binary.
template <typename T, typename I>
void CountRow(const I* values, const T* w, int64_t n, int64_t size, bool binary, T* out) {
  for (int64_t i = 0; i < n; ++i) {
    const I v = values[i];
    if (static_cast<int64_t>(v) >= size) continue;
    if (binary) {
      out[v] = T(1);
    } else {
      out[v] += w != nullptr ? w[i] : T(1);
    }
  }
}

template <typename I>
absl::Status NonNegative(const I* values, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (values[i] < 0) return absl::InvalidArgumentError("Input arr must be non-negative!");
  }
  return absl::OkStatus();
}

// size (input `i`): a non-negative scalar.
template <typename I>
absl::Status ReadSize(OpKernelContext* c, int i, int64_t* size) {
  const Tensor& t = c->input(i);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shape must be rank 0 but is rank ", t.dims()));
  }
  *size = t.data<I>()[0];
  if (*size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("size (", *size, ") must be non-negative"));
  }
  return absl::OkStatus();
}

// weights: shaped as `values` or empty (each weight 1); null when empty.
template <typename T>
absl::Status ReadWeights(const Tensor& weights, const TensorShape& values, const T** w) {
  if (weights.NumElements() == 0) {
    *w = nullptr;
    return absl::OkStatus();
  }
  if (weights.shape() != values) {
    return absl::InvalidArgumentError(absl::StrCat(
        "`weights` must be the same shape as `arr` or a length-0 `Tensor`, in "
        "which case it acts as all weights equal to 1. Received ",
        weights.shape().DebugString()));
  }
  *w = weights.data<T>();
  return absl::OkStatus();
}

// Bincount (arr: int32) and DenseBincount (input: Tidx, 1-D or 2-D).
template <typename T, typename I>
class DenseBincountOp : public OpKernel {
 public:
  explicit DenseBincountOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("binary_output")) c->SetStatus(c->GetAttr("binary_output", &binary_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    int64_t size = 0;
    OP_REQUIRES_OK(c, ReadSize<I>(c, 1, &size));
    const T* w = nullptr;
    OP_REQUIRES_OK(c, ReadWeights<T>(c->input(2), in.shape(), &w));
    const bool rows = in.dims() == 2 && type_string() == "DenseBincount";
    OP_REQUIRES(c, in.dims() <= 1 || rows,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input must be a 1 or 2-dimensional tensor. Got: ",
                    in.shape().DebugString())));
    const I* values = in.data<I>();
    OP_REQUIRES_OK(c, NonNegative(values, in.NumElements()));
    const int64_t num_rows = rows ? in.dim_size(0) : 1;
    const int64_t n = rows ? in.dim_size(1) : in.NumElements();
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, rows ? TensorShape({num_rows, size}) : TensorShape({size}), &out));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    for (int64_t r = 0; r < num_rows; ++r) {
      CountRow<T, I>(values + r * n, w == nullptr ? nullptr : w + r * n, n, size, binary_,
                     o + r * size);
    }
  }

 private:
  bool binary_ = false;
};

template <typename T, typename I>
class SparseBincountOp : public OpKernel {
 public:
  explicit SparseBincountOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("binary_output", &binary_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& indices = c->input(0);
    const Tensor& values = c->input(1);
    const Tensor& dense_shape = c->input(2);
    int64_t size = 0;
    OP_REQUIRES_OK(c, ReadSize<I>(c, 3, &size));
    const T* w = nullptr;
    OP_REQUIRES_OK(c, ReadWeights<T>(c->input(4), values.shape(), &w));
    const int64_t rank = dense_shape.NumElements();
    OP_REQUIRES(c, dense_shape.dims() == 1 && (rank == 1 || rank == 2),
                absl::InvalidArgumentError(absl::StrCat(
                    "dense_shape must be a vector of 1 or 2 elements, got shape ",
                    dense_shape.shape().DebugString())));
    const int64_t nnz = values.NumElements();
    OP_REQUIRES(c, values.dims() == 1 && indices.dims() == 2 && indices.dim_size(0) == nnz &&
                       indices.dim_size(1) == rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "indices must be [nnz, rank] for values [nnz]; got indices ",
                    indices.shape().DebugString(), ", values ", values.shape().DebugString(),
                    ", dense_shape of ", rank, " elements")));
    const I* v = values.data<I>();
    OP_REQUIRES_OK(c, NonNegative(v, nnz));
    const int64_t num_rows = rank == 2 ? dense_shape.data<int64_t>()[0] : 1;
    OP_REQUIRES(c, num_rows >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "dense_shape must be non-negative, got ", num_rows)));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, rank == 2 ? TensorShape({num_rows, size}) : TensorShape({size}),
                          &out));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    const int64_t* idx = indices.data<int64_t>();
    for (int64_t i = 0; i < nnz; ++i) {
      const int64_t row = rank == 2 ? idx[i * 2] : 0;
      OP_REQUIRES(c, row >= 0 && row < num_rows,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Index out of bound. `batch` (", row,
                      ") must be less than the dimension size (", num_rows, ").")));
      CountRow<T, I>(v + i, w == nullptr ? nullptr : w + i, 1, size, binary_, o + row * size);
    }
  }

 private:
  bool binary_ = false;
};

template <typename T>
void RegisterFor(KernelRegistry* r) {
  const DataType t = DataTypeToEnum<T>::value;
  r->Register(KernelDef("Bincount", kDeviceTypeCpu).TypeConstraint("T", t),
              MakeKernel<DenseBincountOp<T, int32_t>>);
  auto def = [t](const char* op, DataType idx) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", t).TypeConstraint("Tidx", idx);
  };
  r->Register(def("DenseBincount", DT_INT32), MakeKernel<DenseBincountOp<T, int32_t>>);
  r->Register(def("DenseBincount", DT_INT64), MakeKernel<DenseBincountOp<T, int64_t>>);
  r->Register(def("SparseBincount", DT_INT32), MakeKernel<SparseBincountOp<T, int32_t>>);
  r->Register(def("SparseBincount", DT_INT64), MakeKernel<SparseBincountOp<T, int64_t>>);
}

}  // namespace

void RegisterBincountKernels(KernelRegistry* r) {
  RegisterFor<int32_t>(r);
  RegisterFor<int64_t>(r);
  RegisterFor<float>(r);
  RegisterFor<double>(r);
}

}  // namespace weft
