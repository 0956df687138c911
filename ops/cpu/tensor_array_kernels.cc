// TensorArrayV3 kernels: the v1 TensorArray that tf.compat.v1 graphs with v1
// control flow (dynamic_rnn, while_loop over a TensorArray) build, and its
// Read, Write, Scatter, Gather, Concat, Split, Size, Grad and Close ops.
//
// A TensorArray lives in the device's ResourceMgr in the step's container
// (StepContainerName), as the StackV2 stacks do: it is private to its step
// and dropped when the step ends, closed or not. The float "flow" tensors
// carry no data; they only order the ops. A gradient array (TensorArrayGradV3)
// sums repeated writes to one index and reads unwritten indices as zeros,
// as TensorFlow's does.
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/tensor_list.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

struct TensorArrayOptions {
  DataType dtype = DT_INVALID;
  PartialShape element_shape;
  bool dynamic_size = false;
  bool clear_after_read = true;
  bool is_grad = false;  // sums repeated writes; unwritten reads are zeros
};

class TensorArray : public ResourceBase {
 public:
  TensorArray(std::string name, TensorArrayOptions options, int64_t size)
      : name_(std::move(name)), opt_(std::move(options)), entries_(size) {}

  const std::string& name() const { return name_; }
  DataType dtype() const { return opt_.dtype; }

  absl::Status Write(int64_t index, const Tensor& value) {
    absl::MutexLock lock(&mu_);
    return LockedWrite(index, value);
  }
  // Rows of `value` (dim 0 split by `lengths`, or one row per index when
  // `lengths` is empty) written to `indices`.
  absl::Status WriteRows(const std::vector<int64_t>& indices,
                         const std::vector<int64_t>& lengths,
                         const Tensor& value) {
    if (value.dims() < 1) {
      return Error(absl::StrCat("needs a value of rank >= 1, got ",
                                value.shape().DebugString()));
    }
    absl::MutexLock lock(&mu_);
    int64_t begin = 0;
    for (size_t i = 0; i < indices.size(); ++i) {
      const int64_t n = lengths.empty() ? 1 : lengths[i];
      if (n < 0 || n > value.dim_size(0) - begin) {
        return Error(absl::StrCat("the value's dim 0 (", value.dim_size(0),
                                  ") does not cover the rows written"));
      }
      WEFT_ASSIGN_OR_RETURN(Tensor rows, RowsOf(value, begin, n));
      if (lengths.empty()) {
        TensorShape row = value.shape();
        row.RemoveDim(0);
        rows = rows.Reshaped(row);
      }
      WEFT_RETURN_IF_ERROR(LockedWrite(indices[i], rows));
      begin += n;
    }
    if (begin != value.dim_size(0)) {
      return Error(absl::StrCat("the rows written (", begin,
                                ") do not match the value's dim 0 (",
                                value.dim_size(0), ")"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> Read(int64_t index) {
    absl::MutexLock lock(&mu_);
    return LockedRead(index);
  }
  // Every element (indices empty: all, in order), read as Read reads them.
  absl::StatusOr<std::vector<Tensor>> ReadMany(
      const std::vector<int64_t>* indices) {
    absl::MutexLock lock(&mu_);
    std::vector<Tensor> out;
    const int64_t n = indices != nullptr
                          ? static_cast<int64_t>(indices->size())
                          : static_cast<int64_t>(entries_.size());
    out.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      WEFT_ASSIGN_OR_RETURN(Tensor t,
                            LockedRead(indices ? (*indices)[i] : i));
      out.push_back(std::move(t));
    }
    return out;
  }

  int64_t Size() {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(entries_.size());
  }
  PartialShape ElementShape() {
    absl::MutexLock lock(&mu_);
    return opt_.element_shape;
  }
  TensorArrayOptions GradOptions() {
    absl::MutexLock lock(&mu_);
    TensorArrayOptions g = opt_;
    g.dynamic_size = false;
    g.is_grad = true;
    return g;
  }

  std::string DebugString() const override {
    return absl::StrCat("TensorArray ", name_);
  }

 private:
  struct Entry {
    Tensor value;
    bool written = false;
    bool cleared = false;
  };

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("TensorArray ", name_, ": ", what));
  }

  absl::Status LockedWrite(int64_t index, const Tensor& value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (value.dtype() != opt_.dtype) {
      return Error(absl::StrCat("holds ", DataTypeString(opt_.dtype),
                                " but was written ",
                                DataTypeString(value.dtype())));
    }
    if (index < 0) return Error(absl::StrCat("index ", index, " is negative"));
    if (index >= static_cast<int64_t>(entries_.size())) {
      if (!opt_.dynamic_size) {
        return Error(absl::StrCat("index ", index,
                                  " is out of range for its size of ",
                                  entries_.size(),
                                  " (it was not made with dynamic_size)"));
      }
      if (index >= kMaxListElements) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "TensorArray ", name_, ": index ", index,
            " would grow it past ", kMaxListElements, " elements"));
      }
      entries_.resize(index + 1);
    }
    if (!opt_.element_shape.IsCompatibleWith(value.shape())) {
      return Error(absl::StrCat("value of shape ", value.shape().DebugString(),
                                " does not match its element shape ",
                                opt_.element_shape.DebugString()));
    }
    if (!opt_.element_shape.IsFullyDefined() ||
        !opt_.element_shape.known_rank()) {
      opt_.element_shape = PartialShape::FromShape(value.shape());
    }
    Entry& e = entries_[index];
    if (e.written) {
      if (!opt_.is_grad) {
        return Error(absl::StrCat("index ", index,
                                  " was written already; a TensorArray "
                                  "takes one write per index"));
      }
      if (e.cleared) {
        return Error(absl::StrCat("index ", index,
                                  " was read and cleared before this write"));
      }
      WEFT_ASSIGN_OR_RETURN(e.value,
                            AddTensors(e.value, value, "TensorArray gradient"));
      return absl::OkStatus();
    }
    e.value = value;
    e.written = true;
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> LockedRead(int64_t index)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (index < 0 || index >= static_cast<int64_t>(entries_.size())) {
      return Error(absl::StrCat("index ", index, " is out of range for size ",
                                entries_.size()));
    }
    Entry& e = entries_[index];
    if (e.cleared) {
      return Error(absl::StrCat(
          "index ", index,
          " was read already and cleared (clear_after_read is true)"));
    }
    if (!e.written) {
      if (!opt_.is_grad) {
        return Error(absl::StrCat("index ", index, " was never written"));
      }
      std::vector<Tensor> none(1);
      return ElementOrZeros(none, 0, opt_.dtype, opt_.element_shape,
                            absl::StrCat("TensorArray ", name_));
    }
    Tensor value = e.value;
    if (opt_.clear_after_read && !opt_.is_grad) {
      e.value = Tensor();
      e.cleared = true;
    }
    return value;
  }

  const std::string name_;
  absl::Mutex mu_;
  TensorArrayOptions opt_ ABSL_GUARDED_BY(mu_);
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

Tensor HandleTensor(OpKernelContext* c, const std::string& name, DataType dt) {
  Tensor handle(DT_RESOURCE, TensorShape());
  ResourceHandle& h = handle.scalar<ResourceHandle>();
  h.device = c->device()->name();
  h.container = StepContainerName(c->step_id());
  h.name = name;
  h.dtype = dt;
  return handle;
}

Tensor Flow() { return Tensor::Scalar<float>(0.0f); }

absl::StatusOr<std::shared_ptr<TensorArray>> LookupArray(OpKernelContext* c) {
  const Tensor& t = c->input(0);
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a scalar TensorArray handle, got ", t.DebugString()));
  }
  const ResourceHandle& h = t.data<ResourceHandle>()[0];
  absl::StatusOr<std::shared_ptr<TensorArray>> ta =
      c->resource_manager()->Lookup<TensorArray>(h.container, h.name);
  if (!ta.ok()) {
    return absl::NotFoundError(absl::StrCat(
        "TensorArray '", h.name, "' does not exist in step ", c->step_id(),
        " (TensorArrays live for one step; was it closed already?)"));
  }
  return ta;
}

class TensorArrayOp : public OpKernel {
 public:
  explicit TensorArrayOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("dtype", &opt_.dtype);
    if (s.ok()) s = c->GetAttr("element_shape", &opt_.element_shape);
    if (s.ok()) s = c->GetAttr("dynamic_size", &opt_.dynamic_size);
    if (s.ok()) s = c->GetAttr("clear_after_read", &opt_.clear_after_read);
    if (s.ok()) s = c->GetAttr("tensor_array_name", &name_);
    c->SetStatus(s);
    if (name_.empty()) name_ = c->def().name();
  }
  void Compute(OpKernelContext* c) override {
    int64_t size = 0;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(0), "size", &size));
    OP_REQUIRES(c, size >= 0 && size <= kMaxListElements,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorArrayV3: size must be in [0, ", kMaxListElements,
                    "], got ", size)));
    // One array per run of the node (a loop may create one per iteration).
    static std::atomic<int64_t> counter{0};
    const std::string name = absl::StrCat(
        name_, "_", counter.fetch_add(1, std::memory_order_relaxed));
    Tensor handle = HandleTensor(c, name, opt_.dtype);
    OP_REQUIRES_OK(c, c->resource_manager()->Create<TensorArray>(
                          StepContainerName(c->step_id()), name,
                          std::make_shared<TensorArray>(name, opt_, size)));
    c->set_output(0, std::move(handle));
    c->set_output(1, Flow());
  }

 private:
  TensorArrayOptions opt_;
  std::string name_;
};

class GradOp : public OpKernel {
 public:
  explicit GradOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("source", &source_));
  }
  void Compute(OpKernelContext* c) override {
    auto ta = LookupArray(c);
    OP_REQUIRES_OK(c, ta.status());
    // One gradient array per (forward array, source), shared by every
    // GradV3 node that asks for it.
    const std::string name = absl::StrCat((*ta)->name(), "@", source_);
    TensorArray* forward = ta->get();
    TensorArrayOptions options = forward->GradOptions();
    if (c->num_inputs() == 3) {
      // TensorArrayGradWithShape: every gradient element has
      // shape_to_prepend in front of the forward element's shape.
      const Tensor& prepend = c->input(2);
      OP_REQUIRES(c, prepend.dtype() == DT_INT32 && prepend.dims() == 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorArrayGradWithShape: shape_to_prepend must be an "
                      "int32 vector, got ", prepend.DebugString())));
      std::vector<int64_t> dims;
      for (int64_t i = 0; i < prepend.NumElements(); ++i) {
        const int32_t d = prepend.data<int32_t>()[i];
        OP_REQUIRES(c, d >= -1, absl::InvalidArgumentError(absl::StrCat(
                                    "TensorArrayGradWithShape: shape_to_prepend has "
                                    "dimension ", d)));
        dims.push_back(d);
      }
      if (options.element_shape.known_rank()) {
        for (int64_t d : options.element_shape.dims()) dims.push_back(d);
        OP_REQUIRES(c, dims.size() <= 254,
                    absl::InvalidArgumentError(
                        "TensorArrayGradWithShape: the gradient's rank exceeds 254"));
        options.element_shape = PartialShape(dims);
      }
    }
    auto grad = c->resource_manager()->LookupOrCreate<TensorArray>(
        StepContainerName(c->step_id()), name, [&] {
          return std::make_shared<TensorArray>(name, options, forward->Size());
        });
    OP_REQUIRES_OK(c, grad.status());
    c->set_output(0, HandleTensor(c, name, forward->dtype()));
    c->set_output(1, c->input(1));
  }

 private:
  std::string source_;
};

class WriteOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    auto ta = LookupArray(c);
    OP_REQUIRES_OK(c, ta.status());
    int64_t index = 0;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(1), "index", &index));
    OP_REQUIRES_OK(c, (*ta)->Write(index, c->input(2)));
    c->set_output(0, c->input(3));
  }
};

class ReadOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    auto ta = LookupArray(c);
    OP_REQUIRES_OK(c, ta.status());
    int64_t index = 0;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(1), "index", &index));
    auto value = (*ta)->Read(index);
    OP_REQUIRES_OK(c, value.status());
    c->set_output(0, *std::move(value));
  }
};

// ScatterV3 (one row per index) and SplitV3 (rows by lengths, in order).
template <bool kSplit>
class WriteRowsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    auto ta = LookupArray(c);
    OP_REQUIRES_OK(c, ta.status());
    std::vector<int64_t> indices, lengths;
    if (kSplit) {
      OP_REQUIRES_OK(c, ReadIntVector(c->input(2), "lengths", &lengths));
      OP_REQUIRES(c, static_cast<int64_t>(lengths.size()) <= kMaxListElements,
                  absl::InvalidArgumentError("TensorArraySplitV3: too many "
                                             "lengths"));
      for (size_t i = 0; i < lengths.size(); ++i) indices.push_back(i);
    } else {
      OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "indices", &indices));
    }
    const Tensor& value = c->input(kSplit ? 1 : 2);
    OP_REQUIRES(c, kSplit || (value.dims() >= 1 &&
                              value.dim_size(0) ==
                                  static_cast<int64_t>(indices.size())),
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorArrayScatterV3: the value of shape ",
                    value.shape().DebugString(), " needs one row per index (",
                    indices.size(), ")")));
    OP_REQUIRES_OK(c, (*ta)->WriteRows(indices, lengths, value));
    c->set_output(0, c->input(3));
  }
};

class GatherOp : public OpKernel {
 public:
  explicit GatherOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("element_shape", &element_shape_));
  }
  void Compute(OpKernelContext* c) override {
    auto ta = LookupArray(c);
    OP_REQUIRES_OK(c, ta.status());
    std::vector<int64_t> indices;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "indices", &indices));
    auto values = (*ta)->ReadMany(&indices);
    OP_REQUIRES_OK(c, values.status());
    auto shape = MergeShapes((*ta)->ElementShape(), element_shape_,
                             "TensorArrayGatherV3");
    OP_REQUIRES_OK(c, shape.status());
    OP_REQUIRES_OK(c, StackIntoOutput(c, 0, *values, (*ta)->dtype(), *shape,
                                      "TensorArrayGatherV3"));
  }

 private:
  PartialShape element_shape_;
};

class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("element_shape_except0", &except0_));
  }
  void Compute(OpKernelContext* c) override {
    auto ta = LookupArray(c);
    OP_REQUIRES_OK(c, ta.status());
    auto values = (*ta)->ReadMany(nullptr);
    OP_REQUIRES_OK(c, values.status());
    PartialShape shape;
    if (except0_.known_rank()) {
      std::vector<int64_t> dims{-1};
      dims.insert(dims.end(), except0_.dims().begin(), except0_.dims().end());
      shape = PartialShape(dims);
    }
    OP_REQUIRES_OK(c, ConcatIntoOutputs(c, 0, 1, *values, (*ta)->dtype(),
                                        shape, "TensorArrayConcatV3"));
  }

 private:
  PartialShape except0_;
};

class SizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    auto ta = LookupArray(c);
    OP_REQUIRES_OK(c, ta.status());
    c->set_output(0,
                  Tensor::Scalar<int32_t>(static_cast<int32_t>((*ta)->Size())));
  }
};

class CloseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& t = c->input(0);
    OP_REQUIRES(c, t.dtype() == DT_RESOURCE && t.NumElements() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "expected a scalar TensorArray handle, got ",
                    t.DebugString())));
    const ResourceHandle& h = t.data<ResourceHandle>()[0];
    // Closing twice, or an array its step dropped, is not an error.
    c->resource_manager()->Delete<TensorArray>(h.container, h.name).IgnoreError();
  }
};

}  // namespace

void RegisterTensorArrayKernels(KernelRegistry* r) {
  auto reg = [r](const char* op, KernelFactory f) {
    r->Register(KernelDef(op, kDeviceTypeCpu), std::move(f));
  };
  reg("TensorArrayV3", MakeKernel<TensorArrayOp>);
  reg("TensorArrayGradV3", MakeKernel<GradOp>);
  reg("TensorArrayGradWithShape", MakeKernel<GradOp>);
  reg("TensorArrayWriteV3", MakeKernel<WriteOp>);
  reg("TensorArrayReadV3", MakeKernel<ReadOp>);
  reg("TensorArrayScatterV3", MakeKernel<WriteRowsOp<false>>);
  reg("TensorArraySplitV3", MakeKernel<WriteRowsOp<true>>);
  reg("TensorArrayGatherV3", MakeKernel<GatherOp>);
  reg("TensorArrayConcatV3", MakeKernel<ConcatOp>);
  reg("TensorArraySizeV3", MakeKernel<SizeOp>);
  reg("TensorArrayCloseV3", MakeKernel<CloseOp>);
}

}  // namespace weft
