// Datasets that call a function per element (ops/data/captured_function.h):
//   - MapDataset, ParallelMapDatasetV2: f(element, captured...) is the new
//     element. The parallel form runs num_parallel_calls calls at once on
//     threads of each iterator's own (ops/data/ordered_producer.h; AUTOTUNE:
//     one per core, at most kMaxParallelCalls) and keeps the input order
//     whatever its `deterministic` attr says (allowed: TensorFlow only may
//     reorder); with num_parallel_calls 1 it is MapDataset.
//   - MapAndBatchDataset: the map (num_parallel_calls at once) followed by
//     batch_size-element batches (ops/data/batch_util.h); a map error fails
//     the batch it falls in, after all of that batch's elements were read,
//     as TensorFlow's fused op does.
//   - FilterDataset: the elements whose predicate is true.
//   - FlatMapDataset: the elements of the dataset f returns for each input
//     element, one dataset after another.
// A function's error is the GetNext's error; the next GetNext goes on with
// the next input element, as TensorFlow's iterators do.
#include <memory>
#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/data/batch_util.h"
#include "ops/data/captured_function.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "ops/data/ordered_producer.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

enum class MapKind { kMap, kFilter, kFlatMap };

// A bound on a parallel map's threads, whatever num_parallel_calls asks.
constexpr int64_t kMaxParallelCalls = 64;

class MapDataset : public DatasetBase {
 public:
  MapDataset(std::string op, DataTypeVector dtypes, std::vector<PartialShape> shapes,
             MapKind kind, DatasetPtr input,
             std::shared_ptr<const CapturedFunction> fn, int parallel_calls = 1)
      : DatasetBase(std::move(op), std::move(dtypes), std::move(shapes)),
        kind_(kind),
        input_(std::move(input)),
        fn_(std::move(fn)),
        parallel_calls_(parallel_calls) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    if (kind_ == MapKind::kMap && parallel_calls_ > 1) {
      return std::unique_ptr<IteratorBase>(
          new ParallelIterator(self<MapDataset>(), std::move(input)));
    }
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
      WEFT_ASSIGN_OR_RETURN(current_, ds_->fn_->RunToIterator(ctx, std::move(element),
                                                              Where()));
      return absl::OkStatus();
    }

    const std::shared_ptr<const MapDataset> ds_;
    std::unique_ptr<IteratorBase> input_;
    std::unique_ptr<IteratorBase> current_;  // flat_map: the inner dataset's
  };

  // A map calling f on parallel_calls_ elements at once, in input order.
  class ParallelIterator : public IteratorBase {
   public:
    ParallelIterator(std::shared_ptr<const MapDataset> ds,
                     std::unique_ptr<IteratorBase> input)
        : ds_(std::move(ds)),
          input_(std::move(input)),
          producer_(ds_->parallel_calls_, ds_->parallel_calls_,
                    [in = input_.get()](IteratorContext* ctx, std::vector<Tensor>* out,
                                        bool* end) { return in->GetNext(ctx, out, end); },
                    [ds = ds_.get()](IteratorContext* ctx, std::vector<Tensor> element,
                                     std::vector<Tensor>* out) {
                      const std::string where =
                          absl::StrCat(ds->op(), " function ", ds->fn_->name());
                      WEFT_RETURN_IF_ERROR(
                          WithContext(ds->fn_->Run(ctx, std::move(element), out), where));
                      return CheckElement(*out, ds->output_dtypes(), ds->output_shapes(),
                                          where);
                    }) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      return producer_.GetNext(ctx, out, end_of_sequence);
    }

   private:
    const std::shared_ptr<const MapDataset> ds_;
    const std::unique_ptr<IteratorBase> input_;  // joined before it goes
    OrderedProducer producer_;
  };

  const MapKind kind_;
  const DatasetPtr input_;
  const std::shared_ptr<const CapturedFunction> fn_;
  const int parallel_calls_;
};

class MapAndBatchDataset : public BatchingDataset {
 public:
  MapAndBatchDataset(DataTypeVector dtypes, std::vector<PartialShape> shapes,
                     DatasetPtr mapped, int64_t batch_size, bool drop_remainder)
      : BatchingDataset("MapAndBatchDataset", std::move(dtypes), std::move(shapes),
                        std::move(mapped), batch_size, drop_remainder,
                        /*finish_on_error=*/true) {}

 protected:
  absl::Status Combine(const std::vector<std::vector<Tensor>>& elements,
                       std::vector<Tensor>* out) const override {
    return BatchElements(elements, out);
  }
};

// The number of threads num_parallel_calls asks for (AUTOTUNE: one per
// core), at most kMaxParallelCalls; INVALID_ARGUMENT unless positive or -1.
absl::StatusOr<int> ParallelCalls(OpKernelContext* c, int input) {
  WEFT_ASSIGN_OR_RETURN(int64_t calls, ScalarInt64Input(c, input, "num_parallel_calls"));
  if (calls <= 0 && calls != -1) {  // -1: AUTOTUNE
    return absl::InvalidArgumentError(absl::StrCat(
        KernelLabel(c), ": num_parallel_calls must be positive or -1 "
                        "(AUTOTUNE), got ", calls));
  }
  return static_cast<int>(std::min<int64_t>(
      calls == -1 ? std::max(1u, std::thread::hardware_concurrency()) : calls,
      kMaxParallelCalls));
}

class MapAndBatchDatasetOp : public DatasetOpKernel {
 public:
  explicit MapAndBatchDatasetOp(OpKernelConstruction* c) : DatasetOpKernel(c) {
    absl::StatusOr<tensorflow::NameAttrList> f = FuncAttr(c, "f");
    if (f.ok()) fn_ = *std::move(f);
    c->SetStatus(f.status());
  }

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    WEFT_ASSIGN_OR_RETURN(DatasetPtr input, DatasetFromInput(c, 0));
    const int n = c->num_inputs();
    WEFT_ASSIGN_OR_RETURN(int64_t batch_size, ScalarInt64Input(c, n - 3, "batch_size"));
    if (batch_size <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("batch_size must be greater than zero. (", KernelLabel(c), ")"));
    }
    WEFT_ASSIGN_OR_RETURN(int calls, ParallelCalls(c, n - 2));
    WEFT_ASSIGN_OR_RETURN(bool drop, ScalarBoolInput(c, n - 1, "drop_remainder"));
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const CapturedFunction> fn,
                          CapturedFunction::Create(c, fn_, 1, n - 3));
    // The mapped elements' shapes: the batch's without its first dimension.
    std::vector<PartialShape> element_shapes;
    for (const PartialShape& s : output_shapes()) {
      element_shapes.push_back(!s.known_rank() || s.rank() == 0
                                   ? PartialShape()
                                   : PartialShape(s.dims().subspan(1)));
    }
    auto mapped = std::make_shared<MapDataset>("MapAndBatchDataset", output_dtypes(),
                                               std::move(element_shapes), MapKind::kMap,
                                               std::move(input), std::move(fn), calls);
    return DatasetPtr(std::make_shared<MapAndBatchDataset>(
        output_dtypes(), output_shapes(), std::move(mapped), batch_size, drop));
  }

 private:
  tensorflow::NameAttrList fn_;
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
    int parallel_calls = 1;
    if (count_input_) {
      WEFT_ASSIGN_OR_RETURN(parallel_calls, ParallelCalls(c, end - 1));
      --end;
    }
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const CapturedFunction> fn,
                          CapturedFunction::Create(c, fn_, 1, end));
    return DatasetPtr(std::make_shared<MapDataset>(
        type_string(), output_dtypes(), output_shapes(), kind_, std::move(input),
        std::move(fn), parallel_calls));
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
  r->Register(KernelDef("MapAndBatchDataset", kDeviceTypeCpu),
              MakeKernel<MapAndBatchDatasetOp>);
  RegisterMap(r, "FlatMapDataset", MapKind::kFlatMap, false);
}

}  // namespace data
}  // namespace weft
