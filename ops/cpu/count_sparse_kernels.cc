// DenseCountSparseOutput, SparseCountSparseOutput and
// RaggedCountSparseOutput: per batch row, how often each value occurs (the
// sum of its weights when weights are given, 1 when binary_output), as a
// sparse triple sorted by row then value. Rows are the leading dim of a
// dense matrix (a vector is one row and gives 1-D indices), the first index
// of a sparse entry, or the rows of a ragged tensor. Values at or past
// maxlength (when it is >= 0; 0 drops them all) are dropped; the counted
// width is maxlength, else max(largest value + 1, minlength). Weights are
// summed in input order from zero, as TensorFlow does, so float results
// match it bit for bit.
//
// Every input is checked before anything is counted: shapes, sparse indices
// inside dense_shape, ragged splits starting at 0, never decreasing and
// ending at the number of values, weights shaped as the values (or empty),
// values non-negative. Memory grows with the number of values, never with
// the batch count a peer claims.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// One counted value: its row, the value, and where it (and its weight) is.
struct Entry {
  int64_t row, value, index;
};

// What an op's inputs give the counting.
struct Counted {
  std::vector<Entry> entries;  // those maxlength keeps
  int64_t rows = 1;
  bool one_d = false;  // a single row: indices [n, 1], dense_shape [width]
  const Tensor* weights = nullptr;
  int64_t maxlength = -1;

  // Adds values[i] of `row` unless maxlength drops it.
  template <typename T>
  void Add(int64_t row, const T* values, int64_t i) {
    const int64_t v = values[i];
    if (maxlength < 0 || v < maxlength) entries.push_back({row, v, i});
  }
};

// OK when `weights` is empty or shaped as `values`.
absl::Status CheckWeights(const Tensor& weights, const Tensor& values,
                          absl::string_view values_name) {
  if (weights.NumElements() == 0 || weights.shape() == values.shape()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "Weights and ", values_name, " must have the same shape. Weight shape: ",
      weights.shape().DebugString(), "; ", values_name, " shape: ",
      values.shape().DebugString(), " (weights)"));
}

template <typename T>
absl::Status CheckNonNegative(const T* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (v[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input values must all be non-negative, got values[", i, "] = ", v[i]));
    }
  }
  return absl::OkStatus();
}

// DenseCountSparseOutput: values a vector (one row) or a matrix (a row per
// leading index).
template <typename T>
absl::Status ReadDense(OpKernelContext* c, Counted* out) {
  const Tensor& data = c->input(0);
  const Tensor& weights = c->input(1);
  if (data.dims() != 1 && data.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input must be a 1 or 2-dimensional tensor. Got: ", data.shape().DebugString(),
        " (values)"));
  }
  const T* v = data.data<T>();
  WEFT_RETURN_IF_ERROR(CheckNonNegative(v, data.NumElements()));
  WEFT_RETURN_IF_ERROR(CheckWeights(weights, data, "data"));
  out->one_d = data.dims() == 1;
  if (!out->one_d && data.dim_size(0) == 0) {
    return absl::InvalidArgumentError(
        "Invalid input: Shapes dimension cannot be 0. (values has no rows)");
  }
  out->rows = out->one_d ? 1 : data.dim_size(0);
  out->weights = &weights;
  // By value, not by row: a [2**40, 0] input is no work.
  const int64_t cols = out->one_d ? data.NumElements() : data.dim_size(1);
  for (int64_t i = 0; i < data.NumElements(); ++i) out->Add(out->one_d ? 0 : i / cols, v, i);
  return absl::OkStatus();
}

// SparseCountSparseOutput: indices [n, rank] inside dense_shape [rank]; the
// row of an entry is its first index (all in one row when rank is 1).
template <typename T>
absl::Status ReadSparse(OpKernelContext* c, Counted* out) {
  const Tensor& indices = c->input(0);
  const Tensor& values = c->input(1);
  const Tensor& shape = c->input(2);
  const Tensor& weights = c->input(3);
  if (indices.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input indices must be a 2-dimensional tensor. Got: ", indices.shape().DebugString(),
        " (indices)"));
  }
  if (values.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input values must be a vector. Got: ", values.shape().DebugString(), " (values)"));
  }
  if (shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input shape must be a vector. Got: ", shape.shape().DebugString(), " (dense_shape)"));
  }
  const int64_t n = values.dim_size(0);
  const int64_t rank = indices.dim_size(1);
  if (n != indices.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Number of values must match first dimension of indices. Got ", n,
        " values, indices shape: ", indices.shape().DebugString()));
  }
  if (shape.dim_size(0) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Number of dimensions must match second dimension of indices. Got ",
        shape.dim_size(0), " dimensions, indices shape: ", indices.shape().DebugString(),
        " (dense_shape)"));
  }
  if (rank == 0) {
    return absl::InvalidArgumentError(
        "The shape argument requires at least one element. (dense_shape)");
  }
  const int64_t* ix = indices.data<int64_t>();
  const int64_t* dense = shape.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < rank; ++j) {
      const int64_t x = ix[i * rank + j];
      if (x < 0 || x >= dense[j]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Invalid index value at ", i, ": dimension ", j, " has value ", x,
            " which is not in [0, ", dense[j], ") (indices, dense_shape)"));
      }
    }
  }
  WEFT_RETURN_IF_ERROR(CheckWeights(weights, values, "values"));
  const T* v = values.data<T>();
  WEFT_RETURN_IF_ERROR(CheckNonNegative(v, n));
  out->one_d = rank == 1;
  out->rows = out->one_d ? 1 : dense[0];
  if (out->rows <= 0 || out->rows >= std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot allocate ", out->rows,
        " batches, is the dense shape too wide? (dense_shape[0])"));
  }
  out->weights = &weights;
  for (int64_t i = 0; i < n; ++i) out->Add(out->one_d ? 0 : ix[i * rank], v, i);
  return absl::OkStatus();
}

// RaggedCountSparseOutput: row r holds values[splits[r]:splits[r + 1]].
template <typename T>
absl::Status ReadRagged(OpKernelContext* c, Counted* out) {
  const Tensor& splits = c->input(0);
  const Tensor& values = c->input(1);
  const Tensor& weights = c->input(2);
  WEFT_RETURN_IF_ERROR(CheckWeights(weights, values, "values"));
  const int64_t n = values.NumElements();
  const int64_t rows = splits.NumElements() - 1;
  const int64_t* s = splits.data<int64_t>();
  if (rows <= 0) {
    return absl::InvalidArgumentError(
        "Must provide at least 2 elements for the splits argument (splits)");
  }
  if (s[0] != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Splits must start with 0, not with ", s[0], " (splits)"));
  }
  if (s[rows] != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Splits must end with the number of values, got ", s[rows], " instead of ", n,
        " (splits)"));
  }
  for (int64_t r = 0; r < rows; ++r) {
    if (s[r + 1] < s[r]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Splits must not decrease, got ", s[r], " then ", s[r + 1], " at index ", r + 1,
          " (splits)"));
    }
  }
  const T* v = values.data<T>();
  WEFT_RETURN_IF_ERROR(CheckNonNegative(v, n));
  out->rows = rows;
  out->weights = &weights;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = s[r]; i < s[r + 1]; ++i) out->Add(r, v, i);
  }
  return absl::OkStatus();
}

// The three ops: `Read` checks the inputs and gathers the entries; the
// counting and the sparse triple are shared.
template <typename W, absl::Status (*Read)(OpKernelContext*, Counted*)>
class CountSparseOutputOp : public OpKernel {
 public:
  explicit CountSparseOutputOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("minlength", &minlength_));
    c->SetStatus(c->GetAttr("maxlength", &maxlength_));
    c->SetStatus(c->GetAttr("binary_output", &binary_));
  }

  void Compute(OpKernelContext* c) override {
    Counted in;
    in.maxlength = maxlength_;
    OP_REQUIRES_OK(c, Read(c, &in));
    Emit(c, &in);
  }

 private:
  // Writes the sparse triple of in->entries, sorted by row then value.
  void Emit(OpKernelContext* c, Counted* in) const {
    std::vector<Entry>& entries = in->entries;
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      if (a.row != b.row) return a.row < b.row;
      if (a.value != b.value) return a.value < b.value;
      return a.index < b.index;
    });
    const auto starts_group = [&](size_t k) {
      return k == 0 || entries[k].row != entries[k - 1].row ||
             entries[k].value != entries[k - 1].value;
    };
    int64_t largest = 0, distinct = 0;
    for (size_t k = 0; k < entries.size(); ++k) {
      largest = std::max(largest, entries[k].value);
      if (starts_group(k)) ++distinct;
    }
    // (A value of 2**63 - 1 saturates rather than overflows.)
    const int64_t past = largest < std::numeric_limits<int64_t>::max() ? largest + 1 : largest;
    const int64_t width = maxlength_ >= 0 ? maxlength_ : std::max(past, minlength_);
    const int64_t dims = in->one_d ? 1 : 2;
    Tensor *indices = nullptr, *values = nullptr, *shape = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({distinct, dims}), &indices));
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({distinct}), &values));
    OP_REQUIRES_OK(c, c->allocate_output(2, TensorShape({dims}), &shape));
    const W* w = in->weights->NumElements() > 0 ? in->weights->data<W>() : nullptr;
    int64_t* ix = indices->data<int64_t>();
    W* out = values->data<W>();
    int64_t at = -1;
    for (size_t k = 0; k < entries.size(); ++k) {
      const Entry& e = entries[k];
      if (starts_group(k)) {
        ++at;
        out[at] = W(0);
        ix[dims * at] = in->one_d ? e.value : e.row;
        if (!in->one_d) ix[dims * at + 1] = e.value;
      }
      if (binary_) {
        out[at] = W(1);
      } else {
        out[at] += w != nullptr ? w[e.index] : W(1);
      }
    }
    int64_t* sh = shape->data<int64_t>();
    sh[0] = in->one_d ? width : in->rows;
    if (!in->one_d) sh[1] = width;
  }

  int64_t minlength_ = -1, maxlength_ = -1;
  bool binary_ = false;
};

template <typename T, typename W>
void RegisterFor(KernelRegistry* r) {
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value)
        .TypeConstraint("output_type", DataTypeToEnum<W>::value);
  };
  r->Register(def("DenseCountSparseOutput"), MakeKernel<CountSparseOutputOp<W, ReadDense<T>>>);
  r->Register(def("SparseCountSparseOutput"),
              MakeKernel<CountSparseOutputOp<W, ReadSparse<T>>>);
  r->Register(def("RaggedCountSparseOutput"),
              MakeKernel<CountSparseOutputOp<W, ReadRagged<T>>>);
}

template <typename T>
void RegisterForValues(KernelRegistry* r) {
  RegisterFor<T, int32_t>(r);
  RegisterFor<T, int64_t>(r);
  RegisterFor<T, float>(r);
  RegisterFor<T, double>(r);
}

}  // namespace

// Called by RegisterRaggedKernels (ragged_to_tensor_kernels.cc).
void RegisterCountSparseKernels(KernelRegistry* r) {
  RegisterForValues<int32_t>(r);
  RegisterForValues<int64_t>(r);
}

}  // namespace weft
