// Datasets made from tensors: TensorDataset (one element), TensorSliceDataset
// (the rows of its components) and RangeDataset (start, stop, step, in the
// output dtype). Elements share the component tensors' buffers: a slice is
// a view, not a copy.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

class TensorsDataset : public DatasetBase {
 public:
  // slices: elements are the rows of `components`; otherwise the one
  // element is `components`.
  TensorsDataset(std::string op, DataTypeVector dtypes,
                 std::vector<PartialShape> shapes, std::vector<Tensor> components,
                 bool slices)
      : DatasetBase(std::move(op), std::move(dtypes), std::move(shapes)),
        components_(std::move(components)),
        slices_(slices) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self<TensorsDataset>()));
  }
  int64_t Cardinality() const override {
    return slices_ ? components_[0].dim_size(0) : 1;
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const TensorsDataset> ds) : ds_(std::move(ds)) {}
    absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      *end_of_sequence = next_ >= ds_->Cardinality();
      if (*end_of_sequence) return absl::OkStatus();
      for (const Tensor& t : ds_->components_) {
        if (!ds_->slices_) {
          out->push_back(t);
          continue;
        }
        TensorShape row = t.shape();
        row.RemoveDim(0);
        out->push_back(t.Slice(next_, next_ + 1).Reshaped(row));
      }
      ++next_;
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const TensorsDataset> ds_;
    int64_t next_ = 0;
  };

  const std::vector<Tensor> components_;
  const bool slices_;
};

class TensorDatasetOp : public DatasetOpKernel {
 public:
  explicit TensorDatasetOp(OpKernelConstruction* c, bool slices)
      : DatasetOpKernel(c), slices_(slices) {}

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    std::vector<Tensor> components;
    for (int i = 0; i < c->num_inputs(); ++i) {
      const Tensor& t = c->input(i);
      if (slices_) {
        if (t.dims() == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              KernelLabel(c), ": component ", i,
              " is a scalar; slicing needs at least one dimension"));
        }
        if (t.dim_size(0) != c->input(0).dim_size(0)) {
          return absl::InvalidArgumentError(absl::StrCat(
              KernelLabel(c),
              ": all components must have the same size in the 0th dimension: "
              "component 0 has ", c->input(0).dim_size(0), ", component ", i,
              " has ", t.dim_size(0)));
        }
      }
      components.push_back(t);
    }
    if (components.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(KernelLabel(c), ": needs at least one component"));
    }
    return DatasetPtr(std::make_shared<TensorsDataset>(
        type_string(), output_dtypes(), output_shapes(), std::move(components),
        slices_));
  }

 private:
  const bool slices_;
};

class RangeDataset : public DatasetBase {
 public:
  RangeDataset(DataTypeVector dtypes, std::vector<PartialShape> shapes,
               int64_t start, int64_t stop, int64_t step)
      : DatasetBase("RangeDataset", std::move(dtypes), std::move(shapes)),
        start_(start),
        stop_(stop),
        step_(step) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self<RangeDataset>()));
  }
  int64_t Cardinality() const override {
    // In unsigned arithmetic: the span of int64 does not fit in an int64.
    const bool up = step_ > 0;
    if (up ? stop_ <= start_ : start_ <= stop_) return 0;
    const uint64_t span = up ? uint64_t(stop_) - uint64_t(start_)
                             : uint64_t(start_) - uint64_t(stop_);
    const uint64_t stride = up ? uint64_t(step_) : 0 - uint64_t(step_);
    return static_cast<int64_t>((span - 1) / stride + 1);
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const RangeDataset> ds)
        : ds_(std::move(ds)), next_(ds_->start_) {}
    absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      const int64_t step = ds_->step_;
      *end_of_sequence =
          done_ || (step > 0 ? next_ >= ds_->stop_ : next_ <= ds_->stop_);
      if (*end_of_sequence) return absl::OkStatus();
      Tensor value(ds_->output_dtypes()[0], TensorShape());
      switch (value.dtype()) {
        case DT_INT32: value.scalar<int32_t>() = static_cast<int32_t>(next_); break;
        case DT_FLOAT: value.scalar<float>() = static_cast<float>(next_); break;
        case DT_DOUBLE: value.scalar<double>() = static_cast<double>(next_); break;
        default: value.scalar<int64_t>() = next_; break;
      }
      out->push_back(std::move(value));
      done_ = __builtin_add_overflow(next_, step, &next_);
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const RangeDataset> ds_;
    int64_t next_;
    bool done_ = false;  // the next value would overflow
  };

  const int64_t start_, stop_, step_;
};

class RangeDatasetOp : public DatasetOpKernel {
 public:
  explicit RangeDatasetOp(OpKernelConstruction* c) : DatasetOpKernel(c) {
    const DataTypeVector& t = output_dtypes();
    if (t.size() != 1 || (t[0] != DT_INT64 && t[0] != DT_INT32 &&
                          t[0] != DT_FLOAT && t[0] != DT_DOUBLE)) {
      c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
          "RangeDataset '", c->def().name(),
          "': output_types must be one of int64, int32, float, double, got ",
          DataTypeVectorString(t))));
    }
  }

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    WEFT_ASSIGN_OR_RETURN(int64_t start, ScalarInt64Input(c, 0, "start"));
    WEFT_ASSIGN_OR_RETURN(int64_t stop, ScalarInt64Input(c, 1, "stop"));
    WEFT_ASSIGN_OR_RETURN(int64_t step, ScalarInt64Input(c, 2, "step"));
    if (step == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(KernelLabel(c), ": step must be a non-zero integer."));
    }
    return DatasetPtr(std::make_shared<RangeDataset>(output_dtypes(), output_shapes(),
                                                     start, stop, step));
  }
};

}  // namespace

void RegisterSourceDatasetKernels(KernelRegistry* r) {
  r->Register(KernelDef("TensorDataset", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<TensorDatasetOp>(c, false);
              });
  r->Register(KernelDef("TensorSliceDataset", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<TensorDatasetOp>(c, true);
              });
  r->Register(KernelDef("RangeDataset", kDeviceTypeCpu), MakeKernel<RangeDatasetOp>);
}

}  // namespace data
}  // namespace weft
