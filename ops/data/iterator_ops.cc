// The iterator ops: the kernels that make, initialise, read, name and delete
// iterators (ops/data/iterator_resource.h), and the optionals
// IteratorGetNextAsOptional returns.
//   - IteratorV2 names a shared iterator (shared_name, or a name unique to
//     the kernel, so every session gets its own); MakeIterator starts a
//     pass over a dataset with it; IteratorGetNext(Sync) reads it, failing
//     OUT_OF_RANGE "End of sequence" at the end, as TensorFlow does.
//   - OneShotIterator runs its dataset_factory function once, on first use.
//   - AnonymousIteratorV2/V3 (what traced tf.functions use) live in the
//     step's own container, so one made inside a step goes with it;
//     DeleteIterator drops one earlier.
//   - IteratorToStringHandle / IteratorFromStringHandle(V2): the handle as a
//     serialized ResourceHandleProto, TensorFlow's format.
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/shared_resource.h"
#include "ops/data/captured_function.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "ops/data/iterator_resource.h"
#include "ops/data/optional_value.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/node_def_util.h"
#include "ops/registration.h"
#include "proto/resource_handle.pb.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {

absl::Status IteratorResource::SetDataset(DatasetPtr dataset) {
  if (dataset->output_dtypes() != dtypes_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the iterator's element types (", DataTypeVectorString(dtypes_),
        ") differ from the dataset's (",
        DataTypeVectorString(dataset->output_dtypes()), ")"));
  }
  for (size_t i = 0; i < shapes_.size() && i < dataset->output_shapes().size(); ++i) {
    if (!shapes_[i].IsCompatibleWith(dataset->output_shapes()[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the iterator's component ", i, " has shape ", shapes_[i].DebugString(),
          ", incompatible with the dataset's ",
          dataset->output_shapes()[i].DebugString()));
    }
  }
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, dataset->MakeIterator());
  absl::MutexLock lock(&mu_);
  dataset_ = std::move(dataset);
  iterator_ = std::move(it);
  return absl::OkStatus();
}

bool IteratorResource::initialized() const {
  absl::MutexLock lock(&mu_);
  return iterator_ != nullptr;
}

absl::Status IteratorResource::GetNext(IteratorContext* ctx,
                                       std::vector<Tensor>* out,
                                       bool* end_of_sequence) {
  absl::MutexLock lock(&mu_);
  if (iterator_ == nullptr) {
    return absl::FailedPreconditionError(
        "GetNext() failed because the iterator has not been initialized. "
        "Ensure that you have run the initializer operation for this "
        "iterator before getting the next element.");
  }
  WEFT_RETURN_IF_ERROR(iterator_->GetNext(ctx, out, end_of_sequence));
  if (*end_of_sequence) return absl::OkStatus();
  return CheckElement(*out, dtypes_, shapes_,
                      absl::StrCat("iterator over ", dataset_->op()));
}

namespace {

absl::Status ReadSignature(OpKernelConstruction* c, DataTypeVector* dtypes,
                           std::vector<PartialShape>* shapes) {
  WEFT_RETURN_IF_ERROR(c->GetAttr("output_types", dtypes));
  return c->GetAttr("output_shapes", shapes);
}

absl::StatusOr<std::shared_ptr<IteratorResource>> LookupIterator(
    OpKernelContext* c, int input) {
  WEFT_ASSIGN_OR_RETURN(ResourceHandle h, HandleFromInput(c, input, "iterator"));
  absl::StatusOr<std::shared_ptr<IteratorResource>> it =
      c->resource_manager()->Lookup<IteratorResource>(h.container, h.name);
  if (!it.ok()) return MissingResource(c, h, "iterator", "IteratorV2");
  return it;
}

// IteratorV2 and OneShotIterator: a shared iterator, made on first use.
class IteratorHandleOp : public OpKernel {
 public:
  explicit IteratorHandleOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ReadSignature(c, &dtypes_, &shapes_));
    handle_ = SharedResourceName(c, DT_INVALID);
    std::string shared_name;
    c->SetStatus(c->GetAttr("shared_name", &shared_name));
    if (shared_name.empty()) {
      // TensorFlow gives an unnamed iterator a name of its kernel's own.
      static std::atomic<int64_t> next{0};
      handle_.name = absl::StrCat("_", next.fetch_add(1), "_", c->def().name());
    }
  }
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<IteratorResource>> it = Get(c);
    OP_REQUIRES_OK(c, it.status());
    ResourceHandle h = handle_;
    h.device = c->device()->name();
    c->set_output(0, ResourceHandleTensor(h));
  }

 protected:
  absl::StatusOr<std::shared_ptr<IteratorResource>> Get(OpKernelContext* c) {
    return c->resource_manager()->LookupOrCreate<IteratorResource>(
        handle_.container, handle_.name,
        [&] { return std::make_shared<IteratorResource>(dtypes_, shapes_); });
  }

  DataTypeVector dtypes_;
  std::vector<PartialShape> shapes_;
  ResourceHandle handle_;
};

class OneShotIteratorOp : public IteratorHandleOp {
 public:
  explicit OneShotIteratorOp(OpKernelConstruction* c) : IteratorHandleOp(c) {
    absl::StatusOr<tensorflow::NameAttrList> f = FuncAttr(c, "dataset_factory");
    if (f.ok()) factory_ = *std::move(f);
    c->SetStatus(f.status());
  }
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<IteratorResource>> it = Get(c);
    OP_REQUIRES_OK(c, it.status());
    {
      // One factory run per iterator, however many steps start at once.
      absl::MutexLock lock(&mu_);
      if (!(*it)->initialized()) OP_REQUIRES_OK(c, Initialize(c, **it));
    }
    ResourceHandle h = handle_;
    h.device = c->device()->name();
    c->set_output(0, ResourceHandleTensor(h));
  }

 private:
  absl::Status Initialize(OpKernelContext* c, IteratorResource& it) {
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const CapturedFunction> fn,
                          CapturedFunction::Create(c, factory_, c->num_inputs()));
    IteratorContext ctx{c->cancellation()};
    WEFT_ASSIGN_OR_RETURN(
        DatasetPtr ds,
        fn->RunToDataset(&ctx, {},
                         absl::StrCat(KernelLabel(c), ": dataset_factory ",
                                      factory_.name())));
    return WithContext(it.SetDataset(std::move(ds)), KernelLabel(c));
  }

  tensorflow::NameAttrList factory_;
  absl::Mutex mu_;
};

// AnonymousIteratorV2 (handle and deleter) and V3 (handle only).
class AnonymousIteratorOp : public OpKernel {
 public:
  explicit AnonymousIteratorOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ReadSignature(c, &dtypes_, &shapes_));
  }
  void Compute(OpKernelContext* c) override {
    static std::atomic<int64_t> next{0};
    ResourceHandle h;
    h.device = c->device()->name();
    h.container = StepContainerName(c->step_id());
    h.name = absl::StrCat("_AnonymousIterator", next.fetch_add(1));
    OP_REQUIRES_OK(c, c->resource_manager()->Create<IteratorResource>(
                          h.container, h.name,
                          std::make_shared<IteratorResource>(dtypes_, shapes_)));
    c->set_output(0, ResourceHandleTensor(h));
    if (c->num_outputs() > 1) c->set_output(1, Tensor(DT_VARIANT, TensorShape()));
  }

 private:
  DataTypeVector dtypes_;
  std::vector<PartialShape> shapes_;
};

class DeleteIteratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<ResourceHandle> h = HandleFromInput(c, 0, "iterator");
    OP_REQUIRES_OK(c, h.status());
    OP_REQUIRES_OK(c, c->resource_manager()->Delete<IteratorResource>(
                          h->container, h->name));
  }
};

class MakeIteratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<DatasetPtr> ds = DatasetFromInput(c, 0);
    OP_REQUIRES_OK(c, ds.status());
    absl::StatusOr<std::shared_ptr<IteratorResource>> it = LookupIterator(c, 1);
    OP_REQUIRES_OK(c, it.status());
    OP_REQUIRES_OK(c, WithContext((*it)->SetDataset(*std::move(ds)), KernelLabel(c)));
  }
};

// IteratorGetNext, IteratorGetNextSync, and IteratorGetNextAsOptional (the
// element or, at the end, an empty optional). Reading may wait (a
// prefetch, a map function), so the kernel is expensive: it leaves the
// executor's thread.
class IteratorGetNextOp : public OpKernel {
 public:
  IteratorGetNextOp(OpKernelConstruction* c, bool as_optional)
      : OpKernel(c), as_optional_(as_optional) {
    set_expensive(true);
  }
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<IteratorResource>> it = LookupIterator(c, 0);
    OP_REQUIRES_OK(c, it.status());
    IteratorContext ctx{c->cancellation()};
    std::vector<Tensor> element;
    bool end = false;
    OP_REQUIRES_OK(c, (*it)->GetNext(&ctx, &element, &end));
    if (as_optional_) {
      c->set_output(0, end ? OptionalTensor(std::nullopt)
                           : OptionalTensor(std::move(element)));
      return;
    }
    OP_REQUIRES(c, !end, absl::OutOfRangeError("End of sequence"));
    OP_REQUIRES_OK(c, SetElementOutputs(c, std::move(element)));
  }

 private:
  const bool as_optional_;
};

class IteratorToStringHandleOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<ResourceHandle> h = HandleFromInput(c, 0, "iterator");
    OP_REQUIRES_OK(c, h.status());
    tensorflow::ResourceHandleProto proto;
    proto.set_device(h->device.empty() ? c->device()->name() : h->device);
    proto.set_container(h->container);
    proto.set_name(h->name);
    proto.set_maybe_type_name("tensorflow::data::IteratorResource");
    c->set_output(0, Tensor::Scalar<std::string>(proto.SerializeAsString()));
  }
};

// IteratorFromStringHandle(V2): the handle back, checked against the
// iterator it names when the op declares a signature.
class IteratorFromStringHandleOp : public OpKernel {
 public:
  explicit IteratorFromStringHandleOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("output_types")) c->SetStatus(c->GetAttr("output_types", &dtypes_));
    if (c->HasAttr("output_shapes")) c->SetStatus(c->GetAttr("output_shapes", &shapes_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& s = c->input(0);
    tensorflow::ResourceHandleProto proto;
    OP_REQUIRES(c, s.dtype() == DT_STRING && s.NumElements() == 1 &&
                       proto.ParseFromString(s.scalar<std::string>()),
                absl::InvalidArgumentError(absl::StrCat(
                    KernelLabel(c),
                    ": string_handle must be a scalar made by "
                    "IteratorToStringHandle")));
    ResourceHandle h;
    h.device = proto.device();
    h.container = proto.container();
    h.name = proto.name();
    OP_REQUIRES(c, h.device.empty() || h.device == c->device()->name(),
                absl::InvalidArgumentError(absl::StrCat(
                    KernelLabel(c), ": the iterator lives on ", h.device,
                    ", not on ", c->device()->name(),
                    ": place the op on the iterator's device")));
    if (!dtypes_.empty()) {
      absl::StatusOr<std::shared_ptr<IteratorResource>> it =
          c->resource_manager()->Lookup<IteratorResource>(h.container, h.name);
      OP_REQUIRES(c, it.ok(), absl::NotFoundError(absl::StrCat(
                                  KernelLabel(c), ": no iterator '", h.name,
                                  "' on ", c->device()->name())));
      OP_REQUIRES(c, (*it)->output_dtypes() == dtypes_,
                  absl::InvalidArgumentError(absl::StrCat(
                      KernelLabel(c), ": the iterator yields ",
                      DataTypeVectorString((*it)->output_dtypes()),
                      ", the op expects ", DataTypeVectorString(dtypes_))));
      const std::vector<PartialShape>& have = (*it)->output_shapes();
      for (size_t i = 0; i < shapes_.size() && i < have.size(); ++i) {
        OP_REQUIRES(c, shapes_[i].IsCompatibleWith(have[i]),
                    absl::InvalidArgumentError(absl::StrCat(
                        KernelLabel(c), ": the iterator's component ", i, " has shape ",
                        have[i].DebugString(), ", incompatible with the op's output_shapes ",
                        shapes_[i].DebugString())));
      }
    }
    h.device = c->device()->name();
    c->set_output(0, ResourceHandleTensor(h));
  }

 private:
  DataTypeVector dtypes_;
  std::vector<PartialShape> shapes_;
};

class DatasetCardinalityOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<DatasetPtr> ds = DatasetFromInput(c, 0);
    OP_REQUIRES_OK(c, ds.status());
    c->set_output(0, Tensor::Scalar<int64_t>((*ds)->Cardinality()));
  }
};

}  // namespace

void RegisterIteratorKernels(KernelRegistry* r) {
  r->Register(KernelDef("IteratorV2", kDeviceTypeCpu), MakeKernel<IteratorHandleOp>);
  r->Register(KernelDef("OneShotIterator", kDeviceTypeCpu),
              MakeKernel<OneShotIteratorOp>);
  for (const char* op : {"AnonymousIteratorV2", "AnonymousIteratorV3"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<AnonymousIteratorOp>);
  }
  r->Register(KernelDef("DeleteIterator", kDeviceTypeCpu), MakeKernel<DeleteIteratorOp>);
  r->Register(KernelDef("MakeIterator", kDeviceTypeCpu), MakeKernel<MakeIteratorOp>);
  for (const char* op : {"IteratorGetNext", "IteratorGetNextSync",
                         "IteratorGetNextAsOptional"}) {
    const bool as_optional = absl::string_view(op) == "IteratorGetNextAsOptional";
    r->Register(KernelDef(op, kDeviceTypeCpu),
                [as_optional](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                  return std::make_unique<IteratorGetNextOp>(c, as_optional);
                });
  }
  r->Register(KernelDef("IteratorToStringHandle", kDeviceTypeCpu),
              MakeKernel<IteratorToStringHandleOp>);
  r->Register(KernelDef("IteratorFromStringHandleV2", kDeviceTypeCpu),
              MakeKernel<IteratorFromStringHandleOp>);
  r->Register(KernelDef("DatasetCardinality", kDeviceTypeCpu),
              MakeKernel<DatasetCardinalityOp>);
  RegisterOptionalKernels(r);
}

}  // namespace data
}  // namespace weft
