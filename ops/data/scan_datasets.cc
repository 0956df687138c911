// Datasets and ops that carry a state through a function over the elements,
// what TensorFlow 2's autograph makes of a Python `for` loop over a dataset
// inside a tf.function:
//   - ScanDataset: f(state..., element...) returns (new state..., output
//     element...); the dataset's elements are the outputs.
//   - ReduceDataset: f(state..., element...) returns the new state; the op
//     reads its whole input and outputs the last state (the initial state
//     for an empty dataset). It runs in one kernel call, so it is expensive.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/data/captured_function.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

// One step: the new state into *state, the rest of f's results into *out.
absl::Status Step(IteratorContext* ctx, const CapturedFunction& fn,
                  std::vector<Tensor>* state, std::vector<Tensor> element,
                  std::vector<Tensor>* out) {
  std::vector<Tensor> args = *state;
  for (Tensor& t : element) args.push_back(std::move(t));
  std::vector<Tensor> results;
  WEFT_RETURN_IF_ERROR(fn.Run(ctx, std::move(args), &results));
  if (results.size() < state->size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "function ", fn.name(), " returned ", results.size(),
        " values, fewer than the ", state->size(), " state components"));
  }
  for (size_t i = 0; i < state->size(); ++i) {
    if (results[i].dtype() != (*state)[i].dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "function ", fn.name(), " changed state component ", i, " from ",
          DataTypeString((*state)[i].dtype()), " to ",
          DataTypeString(results[i].dtype())));
    }
    (*state)[i] = std::move(results[i]);
  }
  out->assign(std::make_move_iterator(results.begin() + state->size()),
              std::make_move_iterator(results.end()));
  return absl::OkStatus();
}

class ScanDataset : public DatasetBase {
 public:
  ScanDataset(DataTypeVector dtypes, std::vector<PartialShape> shapes, DatasetPtr input,
              std::vector<Tensor> initial, std::shared_ptr<const CapturedFunction> fn)
      : DatasetBase("ScanDataset", std::move(dtypes), std::move(shapes)),
        input_(std::move(input)),
        initial_(std::move(initial)),
        fn_(std::move(fn)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(
        new Iterator(self<ScanDataset>(), std::move(input)));
  }
  int64_t Cardinality() const override { return input_->Cardinality(); }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const ScanDataset> ds, std::unique_ptr<IteratorBase> input)
        : ds_(std::move(ds)), input_(std::move(input)), state_(ds_->initial_) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      std::vector<Tensor> element;
      WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, &element, end_of_sequence));
      out->clear();
      if (*end_of_sequence) return absl::OkStatus();
      const std::string where = absl::StrCat("ScanDataset function ", ds_->fn_->name());
      WEFT_RETURN_IF_ERROR(
          WithContext(Step(ctx, *ds_->fn_, &state_, std::move(element), out), where));
      return CheckElement(*out, ds_->output_dtypes(), ds_->output_shapes(), where);
    }

   private:
    const std::shared_ptr<const ScanDataset> ds_;
    std::unique_ptr<IteratorBase> input_;
    std::vector<Tensor> state_;
  };

  const DatasetPtr input_;
  const std::vector<Tensor> initial_;
  const std::shared_ptr<const CapturedFunction> fn_;
};

// The inputs both ops share: the dataset, the initial state (Tstate) and
// the function with the rest captured.
struct ScanInputs {
  DatasetPtr input;
  std::vector<Tensor> initial;
  std::shared_ptr<const CapturedFunction> fn;
};

absl::StatusOr<ScanInputs> ReadScanInputs(OpKernelContext* c,
                                          const tensorflow::NameAttrList& f,
                                          size_t num_state) {
  ScanInputs in;
  WEFT_ASSIGN_OR_RETURN(in.input, DatasetFromInput(c, 0));
  for (size_t i = 0; i < num_state; ++i) in.initial.push_back(c->input(1 + i));
  WEFT_ASSIGN_OR_RETURN(in.fn,
                        CapturedFunction::Create(c, f, 1 + static_cast<int>(num_state)));
  return in;
}

class ScanDatasetOp : public DatasetOpKernel {
 public:
  explicit ScanDatasetOp(OpKernelConstruction* c) : DatasetOpKernel(c) {
    absl::StatusOr<tensorflow::NameAttrList> f = FuncAttr(c, "f");
    if (f.ok()) fn_ = *std::move(f);
    c->SetStatus(f.status());
    c->SetStatus(c->GetAttr("Tstate", &state_types_));
  }

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    WEFT_ASSIGN_OR_RETURN(ScanInputs in, ReadScanInputs(c, fn_, state_types_.size()));
    return DatasetPtr(std::make_shared<ScanDataset>(
        output_dtypes(), output_shapes(), std::move(in.input), std::move(in.initial),
        std::move(in.fn)));
  }

 private:
  tensorflow::NameAttrList fn_;
  DataTypeVector state_types_;
};

class ReduceDatasetOp : public OpKernel {
 public:
  explicit ReduceDatasetOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(true);
    absl::StatusOr<tensorflow::NameAttrList> f = FuncAttr(c, "f");
    if (f.ok()) fn_ = *std::move(f);
    c->SetStatus(f.status());
    c->SetStatus(c->GetAttr("Tstate", &state_types_));
  }
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<ScanInputs> in = ReadScanInputs(c, fn_, state_types_.size());
    OP_REQUIRES_OK(c, in.status());
    absl::StatusOr<std::unique_ptr<IteratorBase>> it = in->input->MakeIterator();
    OP_REQUIRES_OK(c, it.status());
    IteratorContext ctx{c->cancellation()};
    std::vector<Tensor> state = in->initial;
    const std::string where = absl::StrCat(KernelLabel(c), ": function ", fn_.name());
    while (true) {
      OP_REQUIRES(c, c->cancellation() == nullptr || !c->cancellation()->IsCancelled(),
                  absl::CancelledError(absl::StrCat(where, ": the step was cancelled")));
      std::vector<Tensor> element, rest;
      bool end = false;
      OP_REQUIRES_OK(c, (*it)->GetNext(&ctx, &element, &end));
      if (end) break;
      OP_REQUIRES_OK(c, WithContext(Step(&ctx, *in->fn, &state, std::move(element), &rest),
                                    where));
    }
    OP_REQUIRES_OK(c, SetElementOutputs(c, std::move(state)));
  }

 private:
  tensorflow::NameAttrList fn_;
  DataTypeVector state_types_;
};

}  // namespace

void RegisterScanDatasetKernels(KernelRegistry* r) {
  r->Register(KernelDef("ScanDataset", kDeviceTypeCpu), MakeKernel<ScanDatasetOp>);
  r->Register(KernelDef("ReduceDataset", kDeviceTypeCpu), MakeKernel<ReduceDatasetOp>);
}

}  // namespace data
}  // namespace weft
