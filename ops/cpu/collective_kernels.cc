// _RingAllReduce (ops/collective_ops.cc): a ring all-reduce over the tasks
// of a group, each running the op in a step of its own.
//
// The N inputs are copied into one buffer, cut into one segment per task,
// and each segment into sub-chunks of at most chunk_bytes. Each sub-chunk
// goes round the ring on its own: 2(G-1) phases for G tasks, first
// reduce-scatter (at phase p, rank r hands segment r-p to rank r+1 and adds
// segment r-p-1 from rank r-1 into its own), then all-gather (rank r hands
// on the finished segment it holds and copies the one it receives). So
// every task sends and receives 2(G-1)/G of the buffer, whatever G, and the
// sub-chunks pipeline: while one is being added, the next is on the wire.
//
// Transfers go through the worker's CollectiveRendezvous
// (runtime/core/collective.h): a task "sends" by leaving the sub-chunk in
// its own rendezvous of the instance, and its successor pulls it with
// RecvTensor, so the ring uses the worker service and its tensor coding
// as any _Recv does. What a task sent is a copy (the buffer changes under
// later phases); that is one extra pass over 2(G-1)/G of the buffer.
//
// Failure: the first error (a peer that does not answer, a shape that
// differs, the step cancelled by its deadline) aborts this task's
// rendezvous of the instance, so the tasks pulling from it fail at once
// with that error rather than waiting for their own deadlines. Once an
// instance has finished here, every task has finished the one before it
// (each needs every task's contribution), so that one is released.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/collective.h"
#include "runtime/core/rendezvous.h"

namespace weft {
namespace {

constexpr int kMaxGroup = 1 << 12;
constexpr int64_t kMinChunkBytes = 1 << 10;
constexpr int64_t kMaxChunkBytes = int64_t{1} << 30;

class RingAllReduceOp : public OpKernel {
 public:
  explicit RingAllReduceOp(OpKernelConstruction* c) : OpKernel(c) {
    int64_t rank = 0;
    std::string final_op;
    c->SetStatus(c->GetAttr("group_tasks", &tasks_));
    c->SetStatus(c->GetAttr("rank", &rank));
    c->SetStatus(c->GetAttr("final_op", &final_op));
    c->SetStatus(c->GetAttr("chunk_bytes", &chunk_bytes_));
    c->SetStatus(c->GetAttr("T", &dtype_));
    if (!c->status().ok()) return;
    const int64_t g = static_cast<int64_t>(tasks_.size());
    if (g < 1 || g > kMaxGroup) {
      c->SetStatus(Bad(absl::StrCat("group_tasks has ", g, " tasks (1 to ",
                                    kMaxGroup, ")")));
    } else if (rank < 0 || rank >= g) {
      c->SetStatus(Bad(absl::StrCat("rank ", rank, " is not below the ", g,
                                    " tasks of group_tasks")));
    } else if (chunk_bytes_ < kMinChunkBytes || chunk_bytes_ > kMaxChunkBytes) {
      c->SetStatus(Bad(absl::StrCat("chunk_bytes ", chunk_bytes_, " is not in [",
                                    kMinChunkBytes, ", ", kMaxChunkBytes, "]")));
    }
    for (int64_t i = 0; i < g && c->status().ok(); ++i) {
      for (int64_t j = 0; j < i; ++j) {
        if (tasks_[i] == tasks_[j]) {
          c->SetStatus(Bad(absl::StrCat("group_tasks names ", tasks_[i],
                                        " twice")));
        }
      }
    }
    rank_ = static_cast<int>(rank);
    mean_ = final_op == "Mean";
  }

  bool IsAsync() const override { return true; }
  void Compute(OpKernelContext* c) override {
    c->SetStatus(absl::InternalError(absl::StrCat(
        name(), ": _RingAllReduce is asynchronous; use ComputeAsync")));
  }
  void ComputeAsync(OpKernelContext* c, std::function<void()> done) override;

 private:
  struct Ring;
  absl::Status Bad(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("_RingAllReduce node '", name(), "': ", what));
  }
  template <typename T>
  void Start(OpKernelContext* c, std::function<void()> done);

  std::vector<std::string> tasks_;
  int rank_ = 0;
  bool mean_ = true;
  int64_t chunk_bytes_ = 0;
  DataType dtype_ = DT_FLOAT;
};

// One run of the op on this task: the buffer and the chains in flight.
struct RingAllReduceOp::Ring {
  OpKernelContext* ctx = nullptr;
  std::function<void()> done;
  std::shared_ptr<Rendezvous> rv;
  CollectiveRendezvous* collectives = nullptr;
  int64_t instance = 0;
  int group = 0, rank = 0;
  int64_t chunks = 1;  // sub-chunks per segment
  std::vector<int64_t> segment_begin;  // group + 1 offsets, in elements
  Tensor buffer;
  std::vector<std::string> devices;  // each rank's CPU device
  std::string node;
  CancellationToken token = kInvalidToken;
  std::atomic<int64_t> pending{0};
  absl::Mutex mu;
  absl::Status status ABSL_GUARDED_BY(mu);

  // Elements [begin, end) of sub-chunk `c` of segment `s`.
  std::pair<int64_t, int64_t> Range(int s, int64_t c) const {
    const int64_t b = segment_begin[s], len = segment_begin[s + 1] - b;
    return {b + c * len / chunks, b + (c + 1) * len / chunks};
  }
  std::string Key(int from, int phase, int64_t chunk) const {
    RendezvousKey k;
    k.src_device = devices[from];
    k.dst_device = devices[(from + 1) % group];
    k.tensor_name = absl::StrCat(node, "/phase", phase, "/chunk", chunk);
    return k.ToString();
  }
  void Fail(const absl::Status& s) {
    {
      absl::MutexLock lock(&mu);
      if (!status.ok()) return;
      status = s;
    }
    rv->StartAbort(s);  // those pulling from this task fail now, with `s`
  }
};

template <typename T>
void RingAllReduceOp::Start(OpKernelContext* c, std::function<void()> done) {
  const int n = c->num_inputs() - 1;
  auto ring = std::make_shared<Ring>();
  ring->ctx = c;
  ring->done = std::move(done);
  ring->group = static_cast<int>(tasks_.size());
  ring->rank = rank_;
  ring->node = name();
  int64_t total = 0;
  for (int i = 0; i < n; ++i) total += c->input(1 + i).NumElements();
  ring->buffer = Tensor(DataTypeToEnum<T>::value, TensorShape({total}));
  T* buf = ring->buffer.data<T>();
  int64_t at = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& in = c->input(1 + i);
    std::memcpy(buf + at, in.data<T>(), in.NumElements() * sizeof(T));
    at += in.NumElements();
  }
  auto finish = [this, ring, n]() {
    OpKernelContext* c = ring->ctx;
    if (ring->token != kInvalidToken && c->cancellation() != nullptr) {
      c->cancellation()->Deregister(ring->token);
    }
    absl::Status s;
    {
      absl::MutexLock lock(&ring->mu);
      s = ring->status;
    }
    if (s.ok()) {
      const T* buf = ring->buffer.data<T>();
      const T scale = mean_ ? T(1) / static_cast<T>(ring->group) : T(1);
      int64_t at = 0;
      for (int i = 0; i < n; ++i) {
        const Tensor& in = c->input(1 + i);
        Tensor out(in.dtype(), in.shape());
        T* o = out.data<T>();
        for (int64_t k = 0; k < in.NumElements(); ++k) o[k] = buf[at + k] * scale;
        at += in.NumElements();
        c->set_output(i, std::move(out));
      }
      if (ring->collectives != nullptr) ring->collectives->Release(ring->instance - 1);
    } else {
      c->SetStatus(s);
    }
    std::function<void()> d = std::move(ring->done);
    d();
  };
  if (ring->group == 1) {
    finish();
    return;
  }
  // Before any transfer: fail the node and end.
  auto refuse = [&ring, c](const absl::Status& s) {
    c->SetStatus(s);
    std::function<void()> d = std::move(ring->done);
    d();
  };
  CollectiveRendezvous* collectives = c->collectives();
  if (collectives == nullptr) {
    refuse(absl::FailedPreconditionError(absl::StrCat(
        "_RingAllReduce node '", name(), "' ran outside a worker task: an "
        "all-reduce over ", ring->group, " tasks runs in the workers of a "
        "cluster (weft train --mode allreduce)")));
    return;
  }
  // This task must be the rank the node says, and its device names the
  // peers' devices: the same device under each task.
  const std::string& me = c->device()->name();
  if (collectives->task() != tasks_[rank_] ||
      !absl::StartsWith(me, tasks_[rank_])) {
    refuse(Bad(absl::StrCat("is rank ", rank_, " (", tasks_[rank_],
                            ") but runs on ", me)));
    return;
  }
  const std::string device_suffix = me.substr(tasks_[rank_].size());
  for (const std::string& t : tasks_) ring->devices.push_back(t + device_suffix);
  const Tensor& instance = c->input(0);
  absl::StatusOr<std::shared_ptr<Rendezvous>> rv =
      instance.NumElements() == 1
          ? collectives->Instance(instance.data<int64_t>()[0])
          : absl::InvalidArgumentError("instance must be an int64 scalar");
  if (!rv.ok()) {
    refuse(Bad(rv.status().message()));
    return;
  }
  ring->rv = *std::move(rv);
  ring->collectives = collectives;
  ring->instance = instance.data<int64_t>()[0];
  const int g = ring->group;
  for (int s = 0; s <= g; ++s) ring->segment_begin.push_back(s * total / g);
  const int64_t largest = (total + g - 1) / g * static_cast<int64_t>(sizeof(T));
  ring->chunks = std::max<int64_t>(1, (largest + chunk_bytes_ - 1) / chunk_bytes_);
  if (c->cancellation() != nullptr) {
    std::weak_ptr<Ring> weak = ring;
    ring->token = c->cancellation()->Register([weak] {
      if (auto r = weak.lock()) {
        r->Fail(absl::CancelledError(absl::StrCat(
            "all-reduce '", r->node, "' instance ", r->instance,
            " cancelled with its step (a deadline, or another node failed)")));
      }
    });
    if (ring->token == kInvalidToken) {
      ring->Fail(absl::CancelledError("the step was cancelled before the all-reduce"));
    }
  }

  // One chain per sub-chunk: Phase(p) sends, then receives and goes on.
  ring->pending.store(ring->chunks);
  struct Chain {
    static void Phase(std::shared_ptr<Ring> r, int64_t chunk, int p,
                      std::function<void()> finish) {
      const int g = r->group, me = r->rank;
      const int last = 2 * (g - 1);
      {
        absl::MutexLock lock(&r->mu);
        if (!r->status.ok()) p = last;  // stop this chain
      }
      if (p == last) {
        if (r->pending.fetch_sub(1) == 1) finish();
        return;
      }
      const bool reduce = p < g - 1;
      const int q = reduce ? p : p - (g - 1);
      const int send_seg = ((reduce ? me - q : me + 1 - q) % g + g) % g;
      const int recv_seg = ((reduce ? me - q - 1 : me - q) % g + g) % g;
      auto [sb, se] = r->Range(send_seg, chunk);
      Tensor out = r->buffer.Slice(sb, se).DeepCopy();
      absl::Status s = r->rv->Send(r->Key(me, p, chunk), out, false);
      if (!s.ok()) {
        r->Fail(s);
        Phase(r, chunk, last, std::move(finish));
        return;
      }
      const int from = (me + g - 1) % g;
      r->rv->RecvAsync(
          r->Key(from, p, chunk),
          [r, chunk, p, reduce, recv_seg, from, last,
           finish = std::move(finish)](const absl::Status& st,
                                       const Tensor& value, bool) mutable {
            auto [rb, re] = r->Range(recv_seg, chunk);
            if (!st.ok()) {
              r->Fail(absl::Status(
                  st.code(),
                  absl::StrCat("all-reduce '", r->node, "' instance ",
                               r->instance, " (rank ", r->rank, " of ", r->group,
                               "): receiving from rank ", from, ": ",
                               st.message())));
            } else if (value.dtype() != r->buffer.dtype() ||
                       value.NumElements() != re - rb) {
              r->Fail(absl::InvalidArgumentError(absl::StrCat(
                  "all-reduce '", r->node, "' instance ", r->instance,
                  ": rank ", from, " sent ", value.NumElements(), " ",
                  DataTypeString(value.dtype()), " elements where ", re - rb,
                  " ", DataTypeString(r->buffer.dtype()),
                  " were expected (do the tasks reduce the same shapes?)")));
            } else {
              T* dst = r->buffer.data<T>() + rb;
              const T* src = value.data<T>();
              if (reduce) {
                for (int64_t k = 0; k < re - rb; ++k) dst[k] += src[k];
              } else {
                std::memcpy(dst, src, (re - rb) * sizeof(T));
              }
            }
            Phase(r, chunk, p + 1, std::move(finish));
          });
    }
  };
  for (int64_t chunk = 0; chunk < ring->chunks; ++chunk) {
    Chain::Phase(ring, chunk, 0, finish);
  }
}

void RingAllReduceOp::ComputeAsync(OpKernelContext* c,
                                   std::function<void()> done) {
  const int n = c->num_inputs() - 1;
  for (int i = 0; i < n; ++i) {
    if (c->input(1 + i).dtype() != dtype_) {
      c->SetStatus(Bad(absl::StrCat("input ", i, " is ",
                                    DataTypeString(c->input(1 + i).dtype()))));
      done();
      return;
    }
  }
  if (c->input(0).dtype() != DT_INT64) {
    c->SetStatus(Bad("instance must be an int64 scalar"));
    done();
    return;
  }
  if (dtype_ == DT_DOUBLE) {
    Start<double>(c, std::move(done));
  } else {
    Start<float>(c, std::move(done));
  }
}

}  // namespace

void RegisterCollectiveKernels(KernelRegistry* r) {
  r->Register(KernelDef("_RingAllReduce", kDeviceTypeCpu)
                  .HostMemory("instance"),
              MakeKernel<RingAllReduceOp>);
}

}  // namespace weft
