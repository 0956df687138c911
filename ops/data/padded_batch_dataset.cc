// Batching elements of different shapes, and undoing a batch:
//   - PaddedBatchDatasetV2: batch_size consecutive elements, each component
//     padded with its padding value to the component's padded shape (a -1
//     dim: the largest of the batch's elements in that dim), then stacked
//     along a new dimension 0; the last, short batch is kept unless
//     drop_remainder. TensorFlow's errors: an element larger than its
//     padded shape (DATA_LOSS, as TensorFlow reports it), an element of
//     another rank. A batch whose padded size
//     passes kMaxBatchBytes is refused (INVALID_ARGUMENT naming
//     padded_shapes) before anything is allocated.
//   - UnbatchDataset: each element's components sliced along dimension 0,
//     one element per row; the components must agree on that size.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/data/batch_util.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/core/allocator.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

constexpr int64_t kMaxBatchBytes = int64_t{1} << 32;

class PaddedBatchDataset : public BatchingDataset {
 public:
  PaddedBatchDataset(DataTypeVector dtypes, std::vector<PartialShape> shapes,
                     DatasetPtr input, int64_t batch_size,
                     std::vector<std::vector<int64_t>> padded_shapes,
                     std::vector<Tensor> padding_values, bool drop_remainder)
      : BatchingDataset("PaddedBatchDatasetV2", std::move(dtypes), std::move(shapes),
                        std::move(input), batch_size, drop_remainder,
                        /*finish_on_error=*/false),
        padded_shapes_(std::move(padded_shapes)),
        padding_values_(std::move(padding_values)) {}

 protected:
  absl::Status Combine(const std::vector<std::vector<Tensor>>& elements,
                       std::vector<Tensor>* out) const override {
    for (size_t k = 0; k < padded_shapes_.size(); ++k) {
      Tensor batch;
      WEFT_RETURN_IF_ERROR(PadComponent(elements, k, &batch));
      out->push_back(std::move(batch));
    }
    return absl::OkStatus();
  }

 private:
  // Component k of `elements`, padded and stacked.
  absl::Status PadComponent(const std::vector<std::vector<Tensor>>& elements,
                            size_t k, Tensor* out) const {
    std::vector<int64_t> dims = padded_shapes_[k];
    for (const std::vector<Tensor>& element : elements) {
      if (k >= element.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "PaddedBatchDatasetV2: an element has ", element.size(),
            " components, expected ", padded_shapes_.size()));
      }
      const TensorShape& shape = element[k].shape();
      if (shape.dims() != static_cast<int>(dims.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "All elements in a batch must have the same rank as the padded "
            "shape for component", k, ": expected rank ", dims.size(),
            " but got element with rank ", shape.dims()));
      }
      for (int d = 0; d < shape.dims(); ++d) {
        if (padded_shapes_[k][d] == -1) {
          dims[d] = std::max(dims[d], shape.dim_size(d));
        } else if (shape.dim_size(d) > padded_shapes_[k][d]) {
          return absl::DataLossError(absl::StrCat(  // TensorFlow's code
              "Attempted to pad to a smaller size than the input element. "
              "(component ", k, ": element shape ", shape.DebugString(),
              ", padded shape dimension ", d, " is ", padded_shapes_[k][d], ")"));
        }
      }
    }
    for (int64_t& d : dims) d = std::max<int64_t>(d, 0);  // -1 over no elements
    const Tensor& pad = padding_values_[k];
    TensorShape shape;
    shape.AddDim(static_cast<int64_t>(elements.size()));
    int64_t row = 1;
    const int64_t elem_bytes = std::max<int64_t>(1, DataTypeSize(pad.dtype()));
    for (int64_t d : dims) {
      if (d != 0 && row > kMaxBatchBytes / elem_bytes / d) {
        return absl::InvalidArgumentError(absl::StrCat(
            "PaddedBatchDatasetV2: padded_shapes component ", k,
            " asks for a batch larger than ", kMaxBatchBytes, " bytes"));
      }
      row *= d;
      shape.AddDim(d);
    }
    if (row > kMaxBatchBytes / elem_bytes / static_cast<int64_t>(elements.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PaddedBatchDatasetV2: padded_shapes component ", k,
          " asks for a batch larger than ", kMaxBatchBytes, " bytes"));
    }
    WEFT_ASSIGN_OR_RETURN(*out, Tensor::Allocate(CpuAllocator(), pad.dtype(), shape));
    Tensor& batch = *out;
    VisitStorage(pad.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(batch.data<T>(), batch.NumElements(), pad.scalar<T>());
    });
    for (size_t e = 0; e < elements.size(); ++e) {
      CopyPadded(elements[e][k], dims, batch, static_cast<int64_t>(e) * row);
    }
    return absl::OkStatus();
  }

  // Copies `src` into the region [0, src.shape) of a row-major block of
  // shape `dims` starting at element `offset` of `dst`.
  static void CopyPadded(const Tensor& src, const std::vector<int64_t>& dims,
                         const Tensor& dst, int64_t offset) {
    const int rank = src.dims();
    if (src.NumElements() == 0) return;
    if (rank == 0) {
      CopyElements(src, 0, dst, offset, 1);
      return;
    }
    const int64_t inner = src.dim_size(rank - 1);
    std::vector<int64_t> stride(rank, 1);  // of the padded block
    for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * dims[d + 1];
    std::vector<int64_t> index(rank, 0);   // over src's outer dims
    const int64_t rows = src.NumElements() / inner;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t at = offset;
      for (int d = 0; d + 1 < rank; ++d) at += index[d] * stride[d];
      CopyElements(src, r * inner, dst, at, inner);
      for (int d = rank - 2; d >= 0; --d) {
        if (++index[d] < src.dim_size(d)) break;
        index[d] = 0;
      }
    }
  }

  const std::vector<std::vector<int64_t>> padded_shapes_;
  const std::vector<Tensor> padding_values_;
};

class PaddedBatchDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    WEFT_ASSIGN_OR_RETURN(DatasetPtr input, DatasetFromInput(c, 0));
    WEFT_ASSIGN_OR_RETURN(int64_t batch_size, ScalarInt64Input(c, 1, "batch_size"));
    if (batch_size <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Batch size must be greater than zero. (", KernelLabel(c), ")"));
    }
    const int n = (c->num_inputs() - 3) / 2;
    const size_t components = input->output_dtypes().size();
    if (static_cast<size_t>(n) != components) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Number of padded shapes (", n,
          ") must match the number of components in the input dataset's "
          "elements (", components, ")"));
    }
    std::vector<std::vector<int64_t>> padded(n);
    std::vector<Tensor> values(n);
    for (int k = 0; k < n; ++k) {
      const Tensor& s = c->input(2 + k);
      if (s.dims() != 1 || s.dtype() != DT_INT64) {
        return absl::InvalidArgumentError(absl::StrCat(
            "All padded shapes must be vectors (", KernelLabel(c), " padded_shapes[",
            k, "] is ", s.shape().DebugString(), ")"));
      }
      for (int64_t i = 0; i < s.NumElements(); ++i) {
        const int64_t d = s.flat<int64_t>()[i];
        if (d < -1) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Dimension ", d, " must be >= -1 (", KernelLabel(c), " padded_shapes[",
              k, "])"));
        }
        padded[k].push_back(d);
      }
      values[k] = c->input(2 + n + k);
      if (values[k].dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "All padding values must be scalars (", KernelLabel(c), " padding_values[",
            k, "] is ", values[k].shape().DebugString(), ")"));
      }
      if (values[k].dtype() != input->output_dtypes()[k]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Mismatched type between padding value ", k, " and input dataset's "
            "component ", k, ": ", DataTypeString(values[k].dtype()), " vs. ",
            DataTypeString(input->output_dtypes()[k])));
      }
    }
    WEFT_ASSIGN_OR_RETURN(bool drop, ScalarBoolInput(c, 2 + 2 * n, "drop_remainder"));
    return DatasetPtr(std::make_shared<PaddedBatchDataset>(
        output_dtypes(), output_shapes(), std::move(input), batch_size,
        std::move(padded), std::move(values), drop));
  }
};

class UnbatchDataset : public DatasetBase {
 public:
  UnbatchDataset(DataTypeVector dtypes, std::vector<PartialShape> shapes,
                 DatasetPtr input)
      : DatasetBase("UnbatchDataset", std::move(dtypes), std::move(shapes)),
        input_(std::move(input)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new Iterator(std::move(input)));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::unique_ptr<IteratorBase> input) : input_(std::move(input)) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      while (row_ >= rows_) {
        bool end = false;
        WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, &batch_, &end));
        if (end) {
          *end_of_sequence = true;
          return absl::OkStatus();
        }
        row_ = 0;
        rows_ = 0;
        for (size_t k = 0; k < batch_.size(); ++k) {
          if (batch_[k].dims() == 0) {
            return absl::InvalidArgumentError(
                "Input element must have a non-scalar value in each component.");
          }
          if (k > 0 && batch_[k].dim_size(0) != batch_[0].dim_size(0)) {
            return absl::InvalidArgumentError(absl::StrCat(
                "Input element must have the same batch size in each component. "
                "Component 0 had size ", batch_[0].dim_size(0), " but component ",
                k, " had size, ", batch_[k].dim_size(0), "."));
          }
        }
        if (!batch_.empty()) rows_ = batch_[0].dim_size(0);
      }
      *end_of_sequence = false;
      for (const Tensor& t : batch_) {
        TensorShape shape = t.shape();
        shape.RemoveDim(0);
        WEFT_ASSIGN_OR_RETURN(Tensor slice, Tensor::Allocate(CpuAllocator(), t.dtype(), shape));
        const int64_t n = slice.NumElements();
        if (n > 0) CopyElements(t, row_ * n, slice, 0, n);
        out->push_back(std::move(slice));
      }
      ++row_;
      return absl::OkStatus();
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    std::vector<Tensor> batch_;
    int64_t row_ = 0;
    int64_t rows_ = 0;
  };

  const DatasetPtr input_;
};

class UnbatchDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    WEFT_ASSIGN_OR_RETURN(DatasetPtr input, DatasetFromInput(c, 0));
    return DatasetPtr(std::make_shared<UnbatchDataset>(output_dtypes(), output_shapes(),
                                                       std::move(input)));
  }
};

}  // namespace

void RegisterPaddedBatchDatasetKernels(KernelRegistry* r) {
  r->Register(KernelDef("PaddedBatchDatasetV2", kDeviceTypeCpu),
              MakeKernel<PaddedBatchDatasetOp>);
  r->Register(KernelDef("UnbatchDataset", kDeviceTypeCpu), MakeKernel<UnbatchDatasetOp>);
}

}  // namespace data
}  // namespace weft
