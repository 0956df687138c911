// Datasets that call a function per element (ops/data/captured_function.h):
//   - MapDataset, ParallelMapDatasetV2: f(element, captured...) is the new
//     element. The parallel form keeps the input order whatever its
//     `deterministic` attr says (allowed: TensorFlow only may reorder) and
//     computes one element at a time: a parallel implementation is future
//     work, measured first.
//   - FilterDataset: the elements whose predicate is true.
//   - FlatMapDataset: the elements of the dataset f returns for each input
//     element, one dataset after another.
// A function's error is the GetNext's error; the next GetNext goes on with
// the next input element, as TensorFlow's iterators do.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/data/captured_function.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

enum class MapKind { kMap, kFilter, kFlatMap };

class MapDataset : public DatasetBase {
 public:
  MapDataset(std::string op, DataTypeVector dtypes, std::vector<PartialShape> shapes,
             MapKind kind, DatasetPtr input,
             std::shared_ptr<const CapturedFunction> fn)
      : DatasetBase(std::move(op), std::move(dtypes), std::move(shapes)),
        kind_(kind),
        input_(std::move(input)),
        fn_(std::move(fn)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(
        new Iterator(self<MapDataset>(), std::move(input)));
  }
  int64_t Cardinality() const override {
    return kind_ == MapKind::kMap ? input_->Cardinality() : kUnknownCardinality;
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const MapDataset> ds, std::unique_ptr<IteratorBase> input)
        : ds_(std::move(ds)), input_(std::move(input)) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      const MapDataset& ds = *ds_;
      while (true) {
        if (ds.kind_ == MapKind::kFlatMap && current_ != nullptr) {
          WEFT_RETURN_IF_ERROR(current_->GetNext(ctx, out, end_of_sequence));
          if (!*end_of_sequence) {
            return CheckElement(*out, ds.output_dtypes(), ds.output_shapes(),
                                Where());
          }
          current_.reset();
        }
        std::vector<Tensor> element;
        WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, &element, end_of_sequence));
        if (*end_of_sequence) {
          out->clear();
          return absl::OkStatus();
        }
        switch (ds.kind_) {
          case MapKind::kMap:
            WEFT_RETURN_IF_ERROR(
                WithContext(ds.fn_->Run(ctx, std::move(element), out), Where()));
            return CheckElement(*out, ds.output_dtypes(), ds.output_shapes(), Where());
          case MapKind::kFilter: {
            absl::StatusOr<bool> keep = ds.fn_->RunPredicate(ctx, element);
            WEFT_RETURN_IF_ERROR(WithContext(keep.status(), Where()));
            if (*keep) {
              *out = std::move(element);
              return absl::OkStatus();
            }
            break;
          }
          case MapKind::kFlatMap:
            WEFT_RETURN_IF_ERROR(StartInner(ctx, std::move(element)));
            break;
        }
      }
    }

   private:
    std::string Where() const {
      return absl::StrCat(ds_->op(), " function ", ds_->fn_->name());
    }
    absl::Status StartInner(IteratorContext* ctx, std::vector<Tensor> element) {
      std::vector<Tensor> result;
      WEFT_RETURN_IF_ERROR(
          WithContext(ds_->fn_->Run(ctx, std::move(element), &result), Where()));
      DatasetPtr inner;
      if (result.size() == 1 && result[0].dtype() == DT_VARIANT &&
          result[0].NumElements() == 1) {
        inner = std::dynamic_pointer_cast<const DatasetBase>(
            result[0].scalar<Variant>().value);
      }
      if (inner == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(Where(), " must return one dataset"));
      }
      WEFT_ASSIGN_OR_RETURN(current_, inner->MakeIterator());
      return absl::OkStatus();
    }

    const std::shared_ptr<const MapDataset> ds_;
    std::unique_ptr<IteratorBase> input_;
    std::unique_ptr<IteratorBase> current_;  // flat_map: the inner dataset's
  };

  const MapKind kind_;
  const DatasetPtr input_;
  const std::shared_ptr<const CapturedFunction> fn_;
};

class MapDatasetOp : public DatasetOpKernel {
 public:
  MapDatasetOp(OpKernelConstruction* c, MapKind kind, bool count_input)
      : DatasetOpKernel(c), kind_(kind), count_input_(count_input) {
    absl::StatusOr<tensorflow::NameAttrList> f =
        FuncAttr(c, kind == MapKind::kFilter ? "predicate" : "f");
    if (f.ok()) fn_ = *std::move(f);
    c->SetStatus(f.status());
  }

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    WEFT_ASSIGN_OR_RETURN(DatasetPtr input, DatasetFromInput(c, 0));
    int end = c->num_inputs();
    if (count_input_) {
      WEFT_ASSIGN_OR_RETURN(int64_t calls,
                            ScalarInt64Input(c, end - 1, "num_parallel_calls"));
      if (calls <= 0 && calls != -1) {  // -1: AUTOTUNE
        return absl::InvalidArgumentError(absl::StrCat(
            KernelLabel(c), ": num_parallel_calls must be positive or -1 "
                            "(AUTOTUNE), got ", calls));
      }
      --end;
    }
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const CapturedFunction> fn,
                          CapturedFunction::Create(c, fn_, 1, end));
    return DatasetPtr(std::make_shared<MapDataset>(
        type_string(), output_dtypes(), output_shapes(), kind_, std::move(input),
        std::move(fn)));
  }

 private:
  const MapKind kind_;
  const bool count_input_;  // the last input is num_parallel_calls
  tensorflow::NameAttrList fn_;
};

void RegisterMap(KernelRegistry* r, const char* op, MapKind kind, bool count_input) {
  r->Register(KernelDef(op, kDeviceTypeCpu),
              [kind, count_input](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<MapDatasetOp>(c, kind, count_input);
              });
}

}  // namespace

void RegisterMapDatasetKernels(KernelRegistry* r) {
  RegisterMap(r, "MapDataset", MapKind::kMap, false);
  RegisterMap(r, "ParallelMapDatasetV2", MapKind::kMap, true);
  RegisterMap(r, "FilterDataset", MapKind::kFilter, false);
  RegisterMap(r, "FlatMapDataset", MapKind::kFlatMap, false);
}

}  // namespace data
}  // namespace weft
