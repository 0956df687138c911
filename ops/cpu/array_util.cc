#include "ops/cpu/array_util.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_kernel.h"

namespace weft {

DataTypeVector PodTypes() {
  return {DT_FLOAT, DT_DOUBLE, DT_INT32,     DT_INT64,     DT_UINT8,
          DT_INT8,  DT_INT16,  DT_UINT16,    DT_UINT32,    DT_UINT64,
          DT_BOOL,  DT_HALF,   DT_BFLOAT16, DT_COMPLEX64, DT_COMPLEX128};
}

DataTypeVector PodAndStringTypes() {
  DataTypeVector v = PodTypes();
  v.push_back(DT_STRING);
  return v;
}

DataTypeVector ArithmeticTypes() {
  return {DT_FLOAT, DT_DOUBLE, DT_INT32,  DT_INT64,  DT_UINT8,
          DT_INT8,  DT_INT16,  DT_UINT16, DT_UINT32, DT_UINT64};
}

absl::Status ReadIntVector(const Tensor& t, absl::string_view what,
                           std::vector<int64_t>* out) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be a vector, but has shape ", t.shape().DebugString()));
  }
  out->clear();
  out->reserve(t.NumElements());
  if (t.dtype() == DT_INT32) {
    for (int32_t v : t.flat<int32_t>()) out->push_back(v);
  } else if (t.dtype() == DT_INT64) {
    for (int64_t v : t.flat<int64_t>()) out->push_back(v);
  } else if (t.dtype() == DT_INT16) {
    for (int16_t v : t.flat<int16_t>()) out->push_back(v);
  } else if (t.dtype() == DT_INT8) {
    for (int8_t v : t.flat<int8_t>()) out->push_back(v);
  } else if (t.dtype() == DT_UINT8) {
    for (uint8_t v : t.flat<uint8_t>()) out->push_back(v);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be int32 or int64, not ", DataTypeString(t.dtype())));
  }
  return absl::OkStatus();
}

absl::Status ReadIntScalar(const Tensor& t, absl::string_view what,
                           int64_t* out) {
  if (t.NumElements() != 1 || t.dims() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be a scalar, but has shape ", t.shape().DebugString()));
  }
  std::vector<int64_t> v;
  absl::Status s = ReadIntVector(t.Reshaped(TensorShape({1})), what, &v);
  if (!s.ok()) return s;
  *out = v[0];
  return absl::OkStatus();
}

absl::Status CanonicalAxis(int64_t axis, int rank, absl::string_view what,
                           int* out) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", axis, " is out of range for rank ", rank,
                     " (must be in [", -rank, ", ", rank, "))"));
  }
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return absl::OkStatus();
}

absl::Status ShapeFromDims(const std::vector<int64_t>& dims,
                           absl::string_view what, TensorShape* out) {
  absl::StatusOr<TensorShape> s = TensorShape::Build(dims);
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", s.status().message()));
  }
  *out = *std::move(s);
  return absl::OkStatus();
}

absl::Status UnsupportedDtype(absl::string_view op, DataType dtype) {
  return absl::UnimplementedError(absl::StrCat(
      op, " does not support tensors of dtype ", DataTypeString(dtype)));
}

bool BroadcastStrides(const TensorShape& in, const TensorShape& out,
                      std::vector<int64_t>* strides) {
  const int rank = out.dims();
  if (in.dims() > rank) return false;
  strides->assign(rank, 0);
  int64_t stride = 1;
  for (int d = rank - 1, k = in.dims() - 1; k >= 0; --d, --k) {
    const int64_t size = in.dim_size(k);
    if (size == out.dim_size(d)) {
      (*strides)[d] = size == 1 ? 0 : stride;
    } else if (size != 1) {
      return false;
    }
    stride *= size;
  }
  return true;
}

bool BroadcastShape(const TensorShape& a, const TensorShape& b,
                    TensorShape* out) {
  const int rank = std::max(a.dims(), b.dims());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.dims() - rank + i;
    const int ib = b.dims() - rank + i;
    const int64_t da = ia >= 0 ? a.dim_size(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim_size(ib) : 1;
    if (da != db && da != 1 && db != 1) return false;
    dims[i] = da == 1 ? db : da;
  }
  *out = TensorShape(dims);
  return true;
}

void CopyElements(const Tensor& src, int64_t src_offset, const Tensor& dst,
                  int64_t dst_offset, int64_t n) {
  if (n <= 0) return;
  VisitStorage(src.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* from = src.data<T>() + src_offset;
    T* to = dst.data<T>() + dst_offset;
    if constexpr (std::is_trivially_copyable_v<T>) {
      std::memcpy(to, from, n * sizeof(T));
    } else {
      std::copy(from, from + n, to);
    }
  });
}

absl::Status OutputInts(OpKernelContext* c, int i,
                        const std::vector<int64_t>& values, bool scalar,
                        absl::string_view what) {
  Tensor* out;
  absl::Status s = c->allocate_output(
      i, scalar ? TensorShape() : TensorShape({static_cast<int64_t>(values.size())}),
      &out);
  if (!s.ok()) return s;
  if (out->dtype() == DT_INT32) {
    for (size_t k = 0; k < values.size(); ++k) {
      if (values[k] > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " ", values[k], " does not fit the int32 output; use out_type int64"));
      }
      out->data<int32_t>()[k] = static_cast<int32_t>(values[k]);
    }
  } else {
    std::copy(values.begin(), values.end(), out->data<int64_t>());
  }
  return absl::OkStatus();
}

}  // namespace weft
