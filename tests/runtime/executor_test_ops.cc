#include "tests/runtime/executor_test_ops.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "ops/framework/call_frame.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/op_kernel.h"
#include "ops/framework/shape_inference.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/rendezvous.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace testing {
namespace {

// ---- Shape functions --------------------------------------------------------

absl::Status ConstShape(InferenceContext* c) {
  auto it = c->node().attr().find("value");
  if (it == c->node().attr().end()) return UnknownShape(c);
  c->set_output(0, PartialShape::FromProto(it->second.tensor().tensor_shape()));
  return absl::OkStatus();
}

absl::Status ShapeAttr(InferenceContext* c) {
  PartialShape s;
  WEFT_RETURN_IF_ERROR(c->GetAttr("shape", &s));
  c->set_output(0, s);
  return absl::OkStatus();
}

absl::Status MatMulShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 2));
  const PartialShape& a = c->input(0);
  const PartialShape& b = c->input(1);
  const int64_t k1 = a.known_rank() ? a.dim(1) : -1;
  const int64_t k2 = b.known_rank() ? b.dim(0) : -1;
  if (k1 >= 0 && k2 >= 0 && k1 != k2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Dimensions must be equal, but are ", k1, " and ", k2));
  }
  c->set_output(0, PartialShape({a.known_rank() ? a.dim(0) : -1,
                                 b.known_rank() ? b.dim(1) : -1}));
  return absl::OkStatus();
}

absl::Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

// ---- Kernels
// ------------------------------------------------------------------

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("value", &value_);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override { c->set_output(0, value_); }

 private:
  Tensor value_;
};

class PlaceholderOp : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    c->SetStatus(absl::InvalidArgumentError(
        absl::StrCat("You must feed a value for placeholder tensor '", name(),
                     "' with dtype ", DataTypeString(output_types()[0]))));
  }
};

class IdentityOp : public OpKernel {
 public:
  explicit IdentityOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override { c->set_output(0, c->input(0)); }
};

class NoOpKernel : public OpKernel {
 public:
  explicit NoOpKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext*) override {}
};

template <typename T>
class AddOp : public OpKernel {
 public:
  explicit AddOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    const bool same = a.shape() == b.shape();
    OP_REQUIRES(c, same || a.NumElements() == 1 || b.NumElements() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Incompatible shapes: ", a.shape().DebugString(), " vs. ",
                    b.shape().DebugString())));
    const Tensor& big = a.NumElements() >= b.NumElements() ? a : b;
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, big.shape(), &out));
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out->data<T>();
    const int64_t n = big.NumElements();
    const bool sa = a.NumElements() == 1 && !same;
    const bool sb = b.NumElements() == 1 && !same;
    for (int64_t i = 0; i < n; ++i) po[i] = pa[sa ? 0 : i] + pb[sb ? 0 : i];
  }
};

template <typename T>
class NegOp : public OpKernel {
 public:
  explicit NegOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    Tensor* out;
    OP_REQUIRES_OK(c,
                   c->forward_input_or_allocate_output(0, 0, x.shape(), &out));
    const T* px = x.data<T>();
    T* po = out->data<T>();
    for (int64_t i = 0; i < x.NumElements(); ++i) po[i] = -px[i];
  }
};

template <typename T>
class AddNOp : public OpKernel {
 public:
  explicit AddNOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x0 = c->input(0);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, x0.shape(), &out));
    T* po = out->data<T>();
    for (int64_t k = 0; k < x0.NumElements(); ++k) po[k] = T();
    for (int i = 0; i < c->num_inputs(); ++i) {
      const Tensor& x = c->input(i);
      OP_REQUIRES(c, x.shape() == x0.shape(),
                  absl::InvalidArgumentError("AddN inputs differ in shape"));
      for (int64_t k = 0; k < x.NumElements(); ++k) po[k] += x.data<T>()[k];
    }
  }
};

class SwitchOp : public OpKernel {
 public:
  explicit SwitchOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const bool pred = c->input(1).scalar<bool>();
    c->set_output(pred ? 1 : 0, c->input(0));
  }
};

class MergeOp : public OpKernel {
 public:
  explicit MergeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    for (int i = 0; i < c->num_inputs(); ++i) {
      if (!c->has_input(i)) continue;
      c->set_output(0, c->input(i));
      c->set_output(1, Tensor::Scalar<int32_t>(i));
      return;
    }
    c->SetStatus(absl::InternalError("Merge ran with no live input"));
  }
};

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("index", &index_);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->call_frame() != nullptr,
                absl::InternalError("no call frame"));
    Tensor t;
    OP_REQUIRES_OK(c, c->call_frame()->GetArg(index_, &t));
    c->set_output(0, std::move(t));
  }

 private:
  int64_t index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("index", &index_);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->call_frame() != nullptr,
                absl::InternalError("no call frame"));
    OP_REQUIRES_OK(c, c->call_frame()->SetRetval(index_, c->input(0)));
  }

 private:
  int64_t index_ = 0;
};

// Looks its Var up in the step's resources on first use (an isolated
// session's, or the device's), as the real VariableV2 does.
class VariableOp : public OpKernel {
 public:
  explicit VariableOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("container", &container_);
    if (s.ok()) s = c->GetAttr("shared_name", &shared_name_);
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override {
    std::shared_ptr<Var> var;
    {
      absl::MutexLock lock(&mu_);
      if (var_ == nullptr) {
        ResourceMgr* rm = c->resource_manager();
        const DataType dtype = BaseType(output_types()[0]);
        absl::StatusOr<std::shared_ptr<Var>> found = rm->LookupOrCreate<Var>(
            container_.empty() ? rm->default_container() : container_,
            shared_name_.empty() ? name() : shared_name_,
            [dtype] { return std::make_shared<Var>(dtype); });
        OP_REQUIRES_OK(c, found.status());
        var_ = *found;
      }
      var = var_;
    }
    c->set_output_ref(0, var->mu(), var->tensor());
  }

 private:
  std::string container_, shared_name_;
  absl::Mutex mu_;
  std::shared_ptr<Var> var_ ABSL_GUARDED_BY(mu_);
};

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->input_is_ref(0),
                absl::InternalError("Assign needs a ref input"));
    const Tensor value = c->input(1).DeepCopy();
    {
      absl::MutexLock lock(c->input_ref_mutex(0));
      *c->mutable_input(0) = value;
    }
    c->forward_ref_input_to_ref_output(0, 0);
  }
};

class FailOp : public OpKernel {
 public:
  explicit FailOp(OpKernelConstruction* c) : OpKernel(c) {
    int64_t code = 3;
    (void)c->GetAttr("code", &code);
    code_ = static_cast<absl::StatusCode>(code);
  }
  void Compute(OpKernelContext* c) override {
    c->SetStatus(absl::Status(code_, absl::StrCat("boom from ", name())));
  }

 private:
  absl::StatusCode code_;
};

class BlockOp : public OpKernel {
 public:
  explicit BlockOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    CancellationManager* cm = c->cancellation();
    OP_REQUIRES(
        c, cm != nullptr,
        absl::FailedPreconditionError("Block needs a cancellation manager"));
    absl::Notification cancelled;
    CancellationToken token = cm->Register([&] { cancelled.Notify(); });
    if (token != kInvalidToken) {
      cancelled.WaitForNotification();
      cm->Deregister(token);
    }
    c->SetStatus(absl::CancelledError("Block was cancelled"));
  }
};

ThreadPool* AsyncPool() {
  static ThreadPool* pool = ThreadPool::Create("test_async", 2).value().release();
  return pool;
}

class AsyncIdentityOp : public OpKernel {
 public:
  explicit AsyncIdentityOp(OpKernelConstruction* c) : OpKernel(c) {}
  bool IsAsync() const override { return true; }
  void Compute(OpKernelContext* c) override {}
  void ComputeAsync(OpKernelContext* c, std::function<void()> done) override {
    AsyncPool()->Schedule([c, done = std::move(done)] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      c->set_output(0, c->input(0));
      done();
    });
  }
};

// Async: waits in the step's rendezvous for attr `key` (like _Recv, without
// the key's device parts).
class RendezvousRecvOp : public OpKernel {
 public:
  explicit RendezvousRecvOp(OpKernelConstruction* c) : OpKernel(c) {
    (void)c->GetAttr("key", &key_);
  }
  bool IsAsync() const override { return true; }
  void Compute(OpKernelContext* c) override {}
  void ComputeAsync(OpKernelContext* c, std::function<void()> done) override {
    OP_REQUIRES(c, c->rendezvous() != nullptr,
                absl::FailedPreconditionError("RendezvousRecv: no rendezvous"));
    c->rendezvous()->RecvAsync(
        key_, [c, done = std::move(done)](const absl::Status& s,
                                          const Tensor& value, bool) {
          if (s.ok()) {
            c->set_output(0, value);
          } else {
            c->SetStatus(s);
          }
          done();
        });
  }

 private:
  std::string key_;
};

absl::Mutex signal_mu;
absl::flat_hash_map<std::string, bool>& Signals() {
  static auto* signals = new absl::flat_hash_map<std::string, bool>;
  return *signals;
}

// Waits (10 s at most, then DEADLINE_EXCEEDED) until RaiseSignal(attr
// `signal`), then passes x through.
class WaitForSignalOp : public OpKernel {
 public:
  explicit WaitForSignalOp(OpKernelConstruction* c) : OpKernel(c) {
    (void)c->GetAttr("signal", &signal_);
  }
  void Compute(OpKernelContext* c) override {
    absl::MutexLock lock(&signal_mu);
    std::string* signal = &signal_;
    const bool raised = signal_mu.AwaitWithTimeout(
        absl::Condition(+[](std::string* n) { return Signals()[*n]; }, signal),
        absl::Seconds(10));
    OP_REQUIRES(c, raised,
                absl::DeadlineExceededError(absl::StrCat(
                    name(), ": signal '", signal_, "' never came")));
    c->set_output(0, c->input(0));
  }

 private:
  std::string signal_;
};

class SlowIdentityOp : public OpKernel {
 public:
  explicit SlowIdentityOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(true);
    (void)c->GetAttr("micros", &micros_);
  }
  void Compute(OpKernelContext* c) override {
    std::this_thread::sleep_for(std::chrono::microseconds(micros_));
    c->set_output(0, c->input(0));
  }

 private:
  int64_t micros_ = 1000;
};

class SleepThenFailOp : public OpKernel {
 public:
  explicit SleepThenFailOp(OpKernelConstruction* c) : OpKernel(c) {
    (void)c->GetAttr("micros", &micros_);
  }
  void Compute(OpKernelContext* c) override {
    std::this_thread::sleep_for(std::chrono::microseconds(micros_));
    c->SetStatus(absl::AbortedError(absl::StrCat("late boom from ", name())));
  }

 private:
  int64_t micros_ = 1000;
};

absl::Mutex count_mu;
absl::flat_hash_map<std::string, int64_t>& Counts() {
  static auto* counts = new absl::flat_hash_map<std::string, int64_t>;
  return *counts;
}

class CountRunsOp : public OpKernel {
 public:
  explicit CountRunsOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    {
      absl::MutexLock lock(&count_mu);
      ++Counts()[name()];
    }
    c->set_output(0, c->input(0));
  }
};

// Stateful: returns 1, 2, 3, ... across all runs of this kernel object.
class StatefulCounterOp : public OpKernel {
 public:
  explicit StatefulCounterOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    c->set_output(0, Tensor::Scalar<int32_t>(++count_));
  }

 private:
  std::atomic<int32_t> count_{0};
};

// x < y for int32 scalars.
class LessOp : public OpKernel {
 public:
  explicit LessOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    c->set_output(0, Tensor::Scalar<bool>(c->input(0).scalar<int32_t>() <
                                          c->input(1).scalar<int32_t>()));
  }
};

// The loop iteration the node runs in (its input only orders it).
class IterIdOp : public OpKernel {
 public:
  explicit IterIdOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    c->set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>(
                         c->frame_id() == 0 ? -1 : c->iter_id())));
  }
};

}  // namespace

void RegisterTestOps(OpRegistry* r) {
  r->Register(OpDefBuilder("Less")
                  .Input("x: int32")
                  .Input("y: int32")
                  .Output("z: bool"),
              UnknownShape);
  r->Register(
      OpDefBuilder("LoopCond").Input("input: bool").Output("output: bool"),
      UnknownShape);
  r->Register(
      OpDefBuilder("IterId").Input("x: T").Output("id: int32").Attr("T: type"),
      UnknownShape);
  r->Register(
      OpDefBuilder("StatefulCounter").Output("count: int32").SetIsStateful(),
      ScalarShape);
  r->Register(OpDefBuilder("Const")
                  .Output("output: dtype")
                  .Attr("value: tensor")
                  .Attr("dtype: type"),
              ConstShape);
  r->Register(OpDefBuilder("Placeholder")
                  .Output("output: dtype")
                  .Attr("dtype: type")
                  .Attr("shape: shape = { unknown_rank: true }"),
              ShapeAttr);
  r->Register(OpDefBuilder("Identity")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr("T: type"),
              UnchangedShape);
  r->Register(OpDefBuilder("NoOp"), NoOutputs);
  r->Register(OpDefBuilder("AddV2")
                  .Input("x: T")
                  .Input("y: T")
                  .Output("z: T")
                  .Attr("T: {float, int32}")
                  .SetIsCommutative(),
              BroadcastBinaryOpShape);
  r->Register(OpDefBuilder("Neg").Input("x: T").Output("y: T").Attr(
                  "T: {float, int32}"),
              UnchangedShape);
  r->Register(OpDefBuilder("AddN")
                  .Input("inputs: N * T")
                  .Output("sum: T")
                  .Attr("N: int >= 1")
                  .Attr("T: {float, int32}")
                  .SetIsAggregate()
                  .SetIsCommutative(),
              UnchangedShape);
  r->Register(OpDefBuilder("MatMul")
                  .Input("a: T")
                  .Input("b: T")
                  .Output("product: T")
                  .Attr("transpose_a: bool = false")
                  .Attr("transpose_b: bool = false")
                  .Attr("T: {float, int32}"),
              MatMulShape);
  r->Register(OpDefBuilder("Switch")
                  .Input("data: T")
                  .Input("pred: bool")
                  .Output("output_false: T")
                  .Output("output_true: T")
                  .Attr("T: type"),
              UnknownShape);
  r->Register(OpDefBuilder("Merge")
                  .Input("inputs: N * T")
                  .Output("output: T")
                  .Output("value_index: int32")
                  .Attr("T: type")
                  .Attr("N: int >= 1"),
              UnknownShape);
  r->Register(OpDefBuilder("Enter")
                  .Input("data: T")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("frame_name: string")
                  .Attr("is_constant: bool = false")
                  .Attr("parallel_iterations: int = 10"),
              UnchangedShape);
  for (const char* op : {"Exit", "NextIteration"}) {
    r->Register(
        OpDefBuilder(op).Input("data: T").Output("output: T").Attr("T: type"),
        UnchangedShape);
  }
  r->Register(OpDefBuilder("_Arg")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("index: int >= 0")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("_Retval")
                  .Input("input: T")
                  .Attr("T: type")
                  .Attr("index: int >= 0")
                  .SetIsStateful(),
              NoOutputs);
  r->Register(OpDefBuilder("VariableV2")
                  .Output("ref: Ref(dtype)")
                  .Attr("shape: shape")
                  .Attr("dtype: type")
                  .Attr("container: string = ''")
                  .Attr("shared_name: string = ''")
                  .SetIsStateful(),
              ShapeAttr);
  r->Register(OpDefBuilder("Assign")
                  .Input("ref: Ref(T)")
                  .Input("value: T")
                  .Output("output_ref: Ref(T)")
                  .Attr("T: type")
                  .Attr("validate_shape: bool = true")
                  .Attr("use_locking: bool = true"),
              UnchangedShape);
  r->Register(
      OpDefBuilder("Fail").Input("x: T").Output("y: T").Attr("T: type").Attr(
          "code: int = 3"),
      UnchangedShape);
  for (const char* op : {"Block", "AsyncIdentity", "CountRuns", "LeaveUnset"}) {
    r->Register(OpDefBuilder(op).Input("x: T").Output("y: T").Attr("T: type"),
                UnchangedShape);
  }
  r->Register(
      OpDefBuilder("RendezvousRecv").Output("y: T").Attr("T: type").Attr(
          "key: string"),
      UnknownShape);
  r->Register(
      OpDefBuilder("WaitForSignal").Input("x: T").Output("y: T").Attr(
          "T: type").Attr("signal: string"),
      UnchangedShape);
  for (const char* op : {"SlowIdentity", "SleepThenFail"}) {
    r->Register(
        OpDefBuilder(op).Input("x: T").Output("y: T").Attr("T: type").Attr(
            "micros: int = 1000"),
        UnchangedShape);
  }
}

void RegisterTestKernels(KernelRegistry* r) {
  auto cpu = [](const char* op) { return KernelDef(op, "CPU"); };
  r->Register(cpu("Const"), MakeKernel<ConstOp>);
  r->Register(cpu("Placeholder"), MakeKernel<PlaceholderOp>);
  r->Register(cpu("Identity"), MakeKernel<IdentityOp>);
  r->Register(cpu("NoOp"), MakeKernel<NoOpKernel>);
  r->Register(cpu("AddV2").TypeConstraint("T", DT_INT32),
              MakeKernel<AddOp<int32_t>>);
  r->Register(cpu("AddV2").TypeConstraint("T", DT_FLOAT),
              MakeKernel<AddOp<float>>);
  r->Register(cpu("Neg").TypeConstraint("T", DT_INT32),
              MakeKernel<NegOp<int32_t>>);
  r->Register(cpu("Neg").TypeConstraint("T", DT_FLOAT),
              MakeKernel<NegOp<float>>);
  r->Register(cpu("AddN").TypeConstraint("T", DT_INT32),
              MakeKernel<AddNOp<int32_t>>);
  r->Register(cpu("AddN").TypeConstraint("T", DT_FLOAT),
              MakeKernel<AddNOp<float>>);
  r->Register(cpu("Switch"), MakeKernel<SwitchOp>);
  r->Register(cpu("Merge"), MakeKernel<MergeOp>);
  r->Register(cpu("Enter"), MakeKernel<IdentityOp>);
  r->Register(cpu("Exit"), MakeKernel<IdentityOp>);
  r->Register(cpu("NextIteration"), MakeKernel<IdentityOp>);
  r->Register(cpu("LoopCond"), MakeKernel<IdentityOp>);
  r->Register(cpu("Less"), MakeKernel<LessOp>);
  r->Register(cpu("IterId"), MakeKernel<IterIdOp>);
  r->Register(cpu("_Arg"), MakeKernel<ArgOp>);
  r->Register(cpu("_Retval"), MakeKernel<RetvalOp>);
  r->Register(cpu("VariableV2"), MakeKernel<VariableOp>);
  r->Register(cpu("Assign"), MakeKernel<AssignOp>);
  r->Register(cpu("Fail"), MakeKernel<FailOp>);
  r->Register(cpu("Block"), MakeKernel<BlockOp>);
  r->Register(cpu("AsyncIdentity"), MakeKernel<AsyncIdentityOp>);
  r->Register(cpu("SlowIdentity"), MakeKernel<SlowIdentityOp>);
  r->Register(cpu("RendezvousRecv"), MakeKernel<RendezvousRecvOp>);
  r->Register(cpu("WaitForSignal"), MakeKernel<WaitForSignalOp>);
  r->Register(cpu("SleepThenFail"), MakeKernel<SleepThenFailOp>);
  r->Register(cpu("CountRuns"), MakeKernel<CountRunsOp>);
  r->Register(cpu("LeaveUnset"), MakeKernel<NoOpKernel>);
  r->Register(cpu("StatefulCounter"), MakeKernel<StatefulCounterOp>);
}

const OpRegistry& TestOps() {
  static const OpRegistry* ops = [] {
    auto* r = new OpRegistry;
    RegisterTestOps(r);
    return r;
  }();
  return *ops;
}

const KernelRegistry& TestKernels() {
  static const KernelRegistry* kernels = [] {
    auto* r = new KernelRegistry;
    RegisterTestKernels(r);
    return r;
  }();
  return *kernels;
}

int64_t RunCount(const std::string& name) {
  absl::MutexLock lock(&count_mu);
  auto it = Counts().find(name);
  return it == Counts().end() ? 0 : it->second;
}

void ResetRunCounts() {
  absl::MutexLock lock(&count_mu);
  Counts().clear();
}

void RaiseSignal(const std::string& name) {
  absl::MutexLock lock(&signal_mu);
  Signals()[name] = true;
}

void ResetSignals() {
  absl::MutexLock lock(&signal_mu);
  Signals().clear();
}

Attr Attr::Shape(std::initializer_list<int64_t> dims) {
  Attr a;
  auto* shape = a.v.mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_size(d);
  return a;
}

Attr Attr::UnknownShape() {
  Attr a;
  a.v.mutable_shape()->set_unknown_rank(true);
  return a;
}

GraphDefBuilder::GraphDefBuilder() {
  def_.mutable_versions()->set_producer(2474);
}

GraphDefBuilder& GraphDefBuilder::Op(
    const std::string& name, const std::string& op,
    std::vector<std::string> inputs,
    std::vector<std::pair<std::string, Attr>> attrs) {
  tensorflow::NodeDef* n = def_.add_node();
  n->set_name(name);
  n->set_op(op);
  for (auto& in : inputs) n->add_input(std::move(in));
  for (auto& [k, v] : attrs) (*n->mutable_attr())[k] = v.v;
  return *this;
}

GraphDefBuilder& GraphDefBuilder::ConstT(const std::string& name,
                                         const Tensor& value) {
  tensorflow::NodeDef* n = def_.add_node();
  n->set_name(name);
  n->set_op("Const");
  (*n->mutable_attr())["dtype"].set_type(value.dtype());
  TensorToProto(value, (*n->mutable_attr())["value"].mutable_tensor());
  return *this;
}

GraphDefBuilder& GraphDefBuilder::Const(const std::string& name,
                                        int32_t value) {
  return ConstT(name, Tensor::Scalar<int32_t>(value));
}

GraphDefBuilder& GraphDefBuilder::ConstF(const std::string& name, float value) {
  return ConstT(name, Tensor::Scalar<float>(value));
}

GraphDefBuilder& GraphDefBuilder::Placeholder(const std::string& name,
                                              DataType dtype, Attr shape) {
  return Op(name, "Placeholder", {}, {{"dtype", dtype}, {"shape", shape}});
}

}  // namespace testing
}  // namespace weft
