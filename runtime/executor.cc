#include "runtime/executor.h"

#include <atomic>
#include <memory>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "runtime/executor_graph.h"
#include "runtime/status.h"

namespace weft {

std::string NodeErrorSuffix(absl::string_view name) {
  return absl::StrCat("\n\t [[{{node ", name, "}}]]");
}

namespace {

// Counter layout for kCounter nodes: pending arrivals in the low 32 bits,
// dead arrivals in the high 32. A live arrival adds -1, a dead one
// 2^32 - 1 (one more dead, one fewer pending).
constexpr int64_t kLiveArrival = -1;
constexpr int64_t kDeadArrival = (int64_t{1} << 32) - 1;

// Per-step state of one Merge (guarded by Step::merge_mu_).
struct MergeState {
  int32_t pending_control = 0;
  int32_t dead_data = 0;
  bool live = false;
};

// The state of one iteration of one frame: its nodes' input slots, pending
// counters and Merge states, laid out as ExecutorGraph numbers them. A graph
// without loops has one, the root frame's only iteration; while loops will
// add a FrameState holding one per live iteration, and TaggedNode already
// says which one a ready node belongs to.
struct IterationState {
  explicit IterationState(const ExecutorGraph& g)
      : inputs(new TensorEntry[g.num_input_slots()]),
        counters(new std::atomic<int64_t>[g.counter_init().size()]),
        merges(g.merge_init().size()) {}

  // Pending counts back to their initial values (inputs are already clear).
  void Reset(const ExecutorGraph& g) {
    const std::vector<int64_t>& init = g.counter_init();
    for (size_t i = 0; i < init.size(); ++i) {
      counters[i].store(init[i], std::memory_order_relaxed);
    }
    const std::vector<MergeInit>& minit = g.merge_init();
    for (size_t i = 0; i < minit.size(); ++i) {
      merges[i] = MergeState{minit[i].num_control, 0, false};
    }
  }

  const std::unique_ptr<TensorEntry[]> inputs;
  const std::unique_ptr<std::atomic<int64_t>[]> counters;
  std::vector<MergeState> merges;  // guarded by the step's merge_mu_
};

}  // namespace

class Executor::Impl {
 public:
  Impl(const ExecutorOptions& options, std::unique_ptr<ExecutorGraph> graph)
      : options_(options), graph_(std::move(graph)) {}
  ~Impl();

  void RunAsync(const StepArgs& args, DoneCallback done);
  const ExecutorGraph& graph() const { return *graph_; }
  const ExecutorOptions& options() const { return options_; }

 private:
  class Step;
  Step* AcquireStep();
  void ReleaseStep(Step* step);

  const ExecutorOptions options_;
  const std::unique_ptr<ExecutorGraph> graph_;
  absl::Mutex steps_mu_;
  std::vector<Step*> free_steps_ ABSL_GUARDED_BY(steps_mu_);
};

// The mutable state of one step: input slots, pending counters and merge
// states (one "iteration" of the root frame; loops will add more), plus the
// bookkeeping to know when the step is over.
//
// Accounting: `outstanding_` counts nodes that are ready or running. A thread
// running the loop holds a share of it fixed when the loop starts; nodes it
// makes ready and runs itself change nothing shared. Only handing nodes to
// another thread (the pool, an async kernel's callback) adds to the count,
// so a chain or a fan of cheap nodes runs with no shared atomics at all. The
// thread whose share brings the count to zero finishes the step.
class Executor::Impl::Step {
 public:
  // A node that is ready, and the iteration it runs in.
  struct TaggedNode {
    int32_t node;
    bool dead;
    IterationState* iter;
  };
  using ReadyQueue = absl::InlinedVector<TaggedNode, 16>;
  using Outputs = absl::InlinedVector<TensorEntry, 4>;

  explicit Step(Impl* exec)
      : exec_(exec),
        g_(*exec->graph_),
        items_(g_.items()),
        edges_(g_.edges()),
        root_(g_) {}

  void Start(const StepArgs& args, DoneCallback done);

 private:
  // Runs ready nodes until `q` is empty, then gives back `share`.
  template <bool kObserve>
  void RunLoop(ReadyQueue* q, int64_t share);
  void RunFromPool(TaggedNode t);
  // Runs one node. `share` is the running loop's share of `outstanding_`.
  template <bool kObserve>
  void Process(TaggedNode t, int64_t share, ReadyQueue* q, Outputs* outs);
  template <bool kObserve>
  void StartAsync(TaggedNode t, const NodeItem& item, TensorEntry* in);
  struct AsyncState;
  void AsyncDone(AsyncState* state);

  // Sends `outs` (or deadness, if `dead`) along the node's out-edges, adding
  // newly ready nodes to `q` (cheap) or `expensive`. `exclusive`: no other
  // thread is working on this step, so counters need no atomic RMW.
  void Propagate(const NodeItem& item, IterationState* iter, bool dead,
                 bool exclusive, Outputs* outs, ReadyQueue* q,
                 ReadyQueue* expensive);
  void Ready(int32_t node, bool dead, IterationState* iter, ReadyQueue* q,
             ReadyQueue* expensive) {
    const NodeItem& item = items_[node];
    __builtin_prefetch(item.kernel);  // its vtable is read soon
    if (item.is_expensive && pool_ != nullptr) {
      expensive->push_back(TaggedNode{node, dead, iter});
    } else {
      q->push_back(TaggedNode{node, dead, iter});
    }
  }
  void ActivateMerge(const OutEdge& e, IterationState* iter, bool dead,
                     TensorEntry* value, ReadyQueue* q, ReadyQueue* expensive);
  // Keeps at most one expensive node for this thread (if it has nothing
  // else to do) and hands the rest to the pool.
  void Dispatch(ReadyQueue* expensive, ReadyQueue* q);

  // Replaces refs feeding plain inputs by their current values;
  // FAILED_PRECONDITION for an uninitialized variable.
  absl::Status Deref(const NodeItem& item, int32_t node, TensorEntry* in);
  void Abort(const absl::Status& status, const NodeItem& item);
  // A kernel other than Switch/Recv left a consumed output unset: a bug in
  // the kernel, reported as INTERNAL (the edge then carries deadness).
  void MissingOutput(const NodeItem& item, const OutEdge& e);
  void OnCancel();
  void Finish();
  void Fail(absl::Status status);  // sets the first error
  NodeExecEvent Event(const NodeItem& item, int32_t node) const;

  static void ClearEntries(TensorEntry* e, int n) {
    for (int i = 0; i < n; ++i) {
      if (e[i].has_value) e[i].Clear();
    }
  }

  // Copies (or moves, leaving `src` empty) an output into an input slot.
  static void Write(TensorEntry* dst, TensorEntry* src, bool move) {
    dst->ref = src->ref;
    dst->ref_mu = src->ref_mu;
    dst->has_value = true;
    if (move) {
      dst->value = std::move(src->value);
      src->ref = nullptr;
      src->ref_mu = nullptr;
      src->has_value = false;  // nothing left to clear
    } else {
      // The slot is empty: copy-construct rather than assign (cheaper for
      // the shape's inlined storage).
      dst->value.~Tensor();
      new (&dst->value) Tensor(src->value);
    }
  }

  Impl* const exec_;
  const ExecutorGraph& g_;
  const NodeItem* const items_;
  const OutEdge* const edges_;
  ThreadPool* pool_ = nullptr;

  // Per-step arrays, reused across steps.
  IterationState root_;
  absl::Mutex merge_mu_;  // guards every IterationState::merges

  // Set by Start().
  StepArgs args_;
  DoneCallback done_;
  OpKernelContext::Params base_params_;
  CancellationToken cancel_token_ = kInvalidToken;

  std::atomic<int64_t> outstanding_{0};
  std::atomic<bool> aborted_{false};
  std::atomic<bool> cancel_callback_done_{false};
  absl::Mutex status_mu_;
  absl::Status status_ ABSL_GUARDED_BY(status_mu_);
};

struct Executor::Impl::Step::AsyncState {
  AsyncState(const OpKernelContext::Params& p, int num_outputs)
      : params(p), outs(num_outputs), ctx(Fix(&params, &outs)) {}
  static const OpKernelContext::Params& Fix(OpKernelContext::Params* p,
                                            Outputs* outs) {
    p->outputs = outs->data();
    return *p;
  }
  OpKernelContext::Params params;
  Outputs outs;
  OpKernelContext ctx;
  TaggedNode tagged{0, false, nullptr};
  int64_t start_nanos = 0;
};

// ---------------------------------------------------------------------------
// Step lifecycle.

void Executor::Impl::Step::Start(const StepArgs& args, DoneCallback done) {
  args_ = args;
  done_ = std::move(done);
  pool_ = exec_->options_.inter_op_pool;
  base_params_ = OpKernelContext::Params();
  base_params_.device = exec_->options_.device;
  base_params_.step_id = args.step_id;
  base_params_.call_frame = args.call_frame;
  base_params_.rendezvous = args.rendezvous;
  base_params_.cancellation = args.cancellation;
  aborted_.store(false, std::memory_order_relaxed);
  cancel_callback_done_.store(false, std::memory_order_relaxed);
  {
    absl::MutexLock lock(&status_mu_);
    status_ = absl::OkStatus();
  }
  {
    absl::MutexLock lock(&merge_mu_);
    root_.Reset(g_);
  }
  cancel_token_ = kInvalidToken;
  if (args.cancellation != nullptr) {
    cancel_token_ = args.cancellation->Register([this] { OnCancel(); });
    if (cancel_token_ == kInvalidToken) {
      Fail(absl::CancelledError(absl::StrCat("step ", args.step_id,
                                             " was cancelled before it "
                                             "started")));
      outstanding_.store(1, std::memory_order_relaxed);
      aborted_.store(true, std::memory_order_relaxed);
      Finish();
      return;
    }
  }
  const std::vector<int32_t>& roots = g_.roots();
  if (roots.empty()) {
    outstanding_.store(1, std::memory_order_relaxed);
    Finish();
    return;
  }
  outstanding_.store(static_cast<int64_t>(roots.size()),
                     std::memory_order_relaxed);
  ReadyQueue q;
  ReadyQueue expensive;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) {
    Ready(*it, false, &root_, &q, &expensive);
  }
  // Expensive roots already hold their count; hand them out as they are.
  for (const TaggedNode& t : expensive) {
    pool_->Schedule([this, t] { RunFromPool(t); });
  }
  if (q.empty()) return;
  if (args.observer != nullptr) {
    RunLoop<true>(&q, static_cast<int64_t>(q.size()));
  } else {
    RunLoop<false>(&q, static_cast<int64_t>(q.size()));
  }
}

void Executor::Impl::Step::RunFromPool(TaggedNode t) {
  ReadyQueue q;
  q.push_back(t);
  if (args_.observer != nullptr) {
    RunLoop<true>(&q, 1);
  } else {
    RunLoop<false>(&q, 1);
  }
}

template <bool kObserve>
void Executor::Impl::Step::RunLoop(ReadyQueue* q, int64_t share) {
  Outputs outs(g_.max_outputs());
  while (!q->empty()) {
    const TaggedNode t = q->back();
    q->pop_back();
    Process<kObserve>(t, share, q, &outs);
  }
  if (outstanding_.fetch_sub(share, std::memory_order_acq_rel) == share) {
    Finish();
  }
}

void Executor::Impl::Step::Finish() {
  if (cancel_token_ != kInvalidToken &&
      !args_.cancellation->Deregister(cancel_token_)) {
    // The callback is running on another thread; it touches this step.
    while (!cancel_callback_done_.load(std::memory_order_acquire)) {
      std::this_thread::yield();
    }
  }
  absl::Status status;
  {
    absl::MutexLock lock(&status_mu_);
    status = std::move(status_);
    status_ = absl::OkStatus();
  }
  if (aborted_.load(std::memory_order_relaxed)) {
    // Skipped nodes may hold inputs.
    ClearEntries(root_.inputs.get(), g_.num_input_slots());
  }
  DoneCallback done = std::move(done_);
  done_ = nullptr;
  args_ = StepArgs();
  exec_->ReleaseStep(this);  // `this` may be reused from here on
  done(std::move(status));
}

void Executor::Impl::Step::Fail(absl::Status status) {
  absl::MutexLock lock(&status_mu_);
  if (status_.ok()) status_ = std::move(status);
}

void Executor::Impl::Step::Abort(const absl::Status& status,
                                 const NodeItem& item) {
  Fail(absl::Status(
      status.code(),
      absl::StrCat(status.message(), NodeErrorSuffix(item.kernel->name()))));
  aborted_.store(true, std::memory_order_release);
  if (args_.cancellation != nullptr) args_.cancellation->StartCancel();
}

void Executor::Impl::Step::MissingOutput(const NodeItem& item,
                                         const OutEdge& e) {
  Abort(absl::InternalError(
            absl::StrCat("kernel for op ", item.kernel->type_string(),
                         " finished without setting output ", e.src_output,
                         ", which other nodes consume (a bug in the kernel)")),
        item);
}

void Executor::Impl::Step::OnCancel() {
  Fail(absl::CancelledError(
      absl::StrCat("step ", args_.step_id, " was cancelled")));
  aborted_.store(true, std::memory_order_release);
  cancel_callback_done_.store(true, std::memory_order_release);
}

// ---------------------------------------------------------------------------
// Running one node.

NodeExecEvent Executor::Impl::Step::Event(const NodeItem& item,
                                          int32_t node) const {
  NodeExecEvent ev;
  ev.step_id = args_.step_id;
  ev.node_index = node;
  ev.node_name = item.kernel->name();
  ev.op = item.kernel->type_string();
  ev.device = exec_->options_.device->name();
  ev.thread_id = CurrentThreadNumber();
  return ev;
}

absl::Status Executor::Impl::Step::Deref(const NodeItem& item, int32_t node,
                                         TensorEntry* in) {
  const DataTypeVector& types = item.kernel->input_types();
  for (int i = 0; i < item.num_inputs; ++i) {
    TensorEntry& e = in[i];
    if (e.ref == nullptr || IsRefType(types[i])) continue;
    {
      absl::ReaderMutexLock lock(e.ref_mu);
      e.value = *e.ref;
    }
    e.ref = nullptr;
    e.ref_mu = nullptr;
    if (!e.value.IsInitialized() && !item.allows_uninitialized_input) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Attempting to use uninitialized value ", g_.input_source(node, i),
          " (run its initializer first)"));
    }
  }
  return absl::OkStatus();
}

template <bool kObserve>
void Executor::Impl::Step::Process(TaggedNode t, int64_t share, ReadyQueue* q,
                                   Outputs* outs) {
  if (aborted_.load(std::memory_order_relaxed)) return;
  const NodeItem& item = items_[t.node];
  TensorEntry* in = t.iter->inputs.get() + item.input_start;
  ReadyQueue expensive;
  // Alone on the step when no other thread holds a share: nobody else can
  // touch its counters until this thread hands work out (after Propagate).
  const bool exclusive = outstanding_.load(std::memory_order_acquire) == share;
  if (t.dead && !item.is_transfer) {
    ClearEntries(in, item.num_inputs);
    Propagate(item, t.iter, /*dead=*/true, exclusive, outs, q, &expensive);
  } else {
    if (item.needs_deref) {
      absl::Status s = Deref(item, t.node, in);
      if (!s.ok()) {
        Abort(s, item);
        return;
      }
    }
    if (item.is_async) {
      StartAsync<kObserve>(t, item, in);
      return;
    }
    // Built field by field (not copied from a template) so the compiler
    // writes it straight into the context.
    OpKernelContext::Params params;
    params.device = base_params_.device;
    params.kernel = item.kernel;
    params.inputs = in;
    params.outputs = outs->data();
    params.step_id = base_params_.step_id;
    params.call_frame = base_params_.call_frame;
    params.rendezvous = base_params_.rendezvous;
    params.cancellation = base_params_.cancellation;
    params.is_input_dead = t.dead;
    OpKernelContext ctx(params);
    NodeExecEvent ev;
    if constexpr (kObserve) {
      ev = Event(item, t.node);
      ev.start_nanos = absl::GetCurrentTimeNanos();
      args_.observer->OnNodeStart(ev);
    }
    item.kernel->Compute(&ctx);
    if constexpr (kObserve) {
      ev.end_nanos = absl::GetCurrentTimeNanos();
      ev.status = &ctx.status();
      args_.observer->OnNodeEnd(ev);
    }
    ClearEntries(in, item.num_inputs);
    if (!ctx.status().ok()) {
      ClearEntries(outs->data(), item.num_outputs);
      Abort(ctx.status(), item);
      return;
    }
    Propagate(item, t.iter, /*dead=*/false, exclusive, outs, q, &expensive);
    ClearEntries(outs->data(), item.num_outputs);
  }
  if (!expensive.empty()) Dispatch(&expensive, q);
}

template <bool kObserve>
void Executor::Impl::Step::StartAsync(TaggedNode t, const NodeItem& item,
                                      TensorEntry* in) {
  OpKernelContext::Params params = base_params_;
  params.kernel = item.kernel;
  params.inputs = in;
  params.is_input_dead = t.dead;
  auto* state = new AsyncState(params, item.num_outputs);
  state->tagged = t;
  if constexpr (kObserve) {
    state->start_nanos = absl::GetCurrentTimeNanos();
    NodeExecEvent ev = Event(item, t.node);
    ev.start_nanos = state->start_nanos;
    args_.observer->OnNodeStart(ev);
  }
  // The callback owns this node's share from here on.
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  item.kernel->ComputeAsync(&state->ctx, [this, state] { AsyncDone(state); });
}

void Executor::Impl::Step::AsyncDone(AsyncState* state) {
  const TaggedNode t = state->tagged;
  const NodeItem& item = items_[t.node];
  if (args_.observer != nullptr) {
    NodeExecEvent ev = Event(item, t.node);
    ev.start_nanos = state->start_nanos;
    ev.end_nanos = absl::GetCurrentTimeNanos();
    ev.status = &state->ctx.status();
    args_.observer->OnNodeEnd(ev);
  }
  ClearEntries(t.iter->inputs.get() + item.input_start, item.num_inputs);
  ReadyQueue q;
  if (!state->ctx.status().ok()) {
    Abort(state->ctx.status(), item);
  } else if (!aborted_.load(std::memory_order_relaxed)) {
    ReadyQueue expensive;
    Propagate(item, t.iter, /*dead=*/false, /*exclusive=*/false, &state->outs,
              &q, &expensive);
    if (!expensive.empty()) Dispatch(&expensive, &q);
  }
  delete state;
  if (args_.observer != nullptr) {
    RunLoop<true>(&q, 1);
  } else {
    RunLoop<false>(&q, 1);
  }
}

// ---------------------------------------------------------------------------
// Propagation.

void Executor::Impl::Step::Propagate(const NodeItem& item, IterationState* iter,
                                     bool dead, bool exclusive, Outputs* outs,
                                     ReadyQueue* q, ReadyQueue* expensive) {
  // Loops will route Enter, Exit and NextIteration outputs to another
  // iteration here; every other edge stays in `iter`.
  TensorEntry* const inputs = iter->inputs.get();
  const OutEdge* e = edges_ + item.out_edge_start;
  const OutEdge* const end = e + item.num_out_edges;
  TensorEntry* const out = outs->data();
  for (; e != end; ++e) {
    TensorEntry* value = nullptr;
    bool edge_dead = dead;
    if (!e->IsControl() && !dead) {
      value = &out[e->src_output];
      edge_dead = !value->has_value;
      if (edge_dead && !item.may_skip_outputs) MissingOutput(item, *e);
    }
    switch (e->activation) {
      case OutEdge::kDirect:
        if (!edge_dead && value != nullptr) {
          Write(&inputs[e->dst_slot], value, e->move);
        }
        Ready(e->dst, edge_dead, iter, q, expensive);
        break;
      case OutEdge::kCounter: {
        if (!edge_dead && value != nullptr) {
          Write(&inputs[e->dst_slot], value, e->move);
        }
        const int64_t delta = edge_dead ? kDeadArrival : kLiveArrival;
        std::atomic<int64_t>& counter = iter->counters[e->state_index];
        int64_t now;
        if (exclusive) {
          now = counter.load(std::memory_order_relaxed) + delta;
          counter.store(now, std::memory_order_relaxed);
        } else {
          now = counter.fetch_add(delta, std::memory_order_acq_rel) + delta;
        }
        if (static_cast<int32_t>(now) == 0) {
          Ready(e->dst, (now >> 32) != 0, iter, q, expensive);
        }
        break;
      }
      case OutEdge::kMerge:
        ActivateMerge(*e, iter, edge_dead, value, q, expensive);
        break;
    }
  }
}

void Executor::Impl::Step::ActivateMerge(const OutEdge& e, IterationState* iter,
                                         bool dead, TensorEntry* value,
                                         ReadyQueue* q, ReadyQueue* expensive) {
  bool ready = false;
  bool ready_dead = false;
  {
    absl::MutexLock lock(&merge_mu_);
    MergeState& m = iter->merges[e.state_index];
    const int32_t num_data = g_.merge_init()[e.state_index].num_data;
    if (e.IsControl()) {
      // Deadness does not travel over a control edge into a Merge.
      if (--m.pending_control == 0) {
        if (m.live) {
          ready = true;
        } else if (m.dead_data == num_data) {
          ready = ready_dead = true;
        }
      }
    } else if (!dead) {
      if (!m.live) {  // only the first live input counts
        m.live = true;
        Write(&iter->inputs[e.dst_slot], value, e.move);
        ready = m.pending_control == 0;
      }
    } else if (++m.dead_data == num_data && !m.live && m.pending_control == 0) {
      ready = ready_dead = true;
    }
  }
  if (ready) Ready(e.dst, ready_dead, iter, q, expensive);
}

void Executor::Impl::Step::Dispatch(ReadyQueue* expensive, ReadyQueue* q) {
  size_t to_pool = expensive->size();
  const bool keep_one = q->empty();
  if (keep_one) --to_pool;
  if (to_pool > 0) {
    outstanding_.fetch_add(static_cast<int64_t>(to_pool),
                           std::memory_order_relaxed);
    for (size_t i = 0; i < to_pool; ++i) {
      const TaggedNode t = (*expensive)[i];
      pool_->Schedule([this, t] { RunFromPool(t); });
    }
  }
  if (keep_one) q->push_back(expensive->back());
}

// ---------------------------------------------------------------------------
// Executor.

Executor::Impl::~Impl() {
  absl::MutexLock lock(&steps_mu_);
  for (Step* s : free_steps_) delete s;
}

Executor::Impl::Step* Executor::Impl::AcquireStep() {
  {
    absl::MutexLock lock(&steps_mu_);
    if (!free_steps_.empty()) {
      Step* s = free_steps_.back();
      free_steps_.pop_back();
      return s;
    }
  }
  return new Step(this);
}

void Executor::Impl::ReleaseStep(Step* step) {
  absl::MutexLock lock(&steps_mu_);
  free_steps_.push_back(step);
}

void Executor::Impl::RunAsync(const StepArgs& args, DoneCallback done) {
  AcquireStep()->Start(args, std::move(done));
}

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(
    const ExecutorOptions& options, const Graph& graph) {
  if (options.device == nullptr) {
    return absl::InvalidArgumentError("ExecutorOptions.device is not set");
  }
  if (options.kernels == nullptr) {
    return absl::InvalidArgumentError("ExecutorOptions.kernels is not set");
  }
  WEFT_ASSIGN_OR_RETURN(
      std::unique_ptr<ExecutorGraph> eg,
      ExecutorGraph::Build(graph, options.device, *options.kernels,
                           options.kernel_cache));
  return std::unique_ptr<Executor>(
      new Executor(std::make_unique<Impl>(options, std::move(eg))));
}

absl::Status Executor::Run(const StepArgs& args) {
  absl::Status result;
  absl::Notification finished;
  impl_->RunAsync(args, [&result, &finished](absl::Status s) {
    result = std::move(s);
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

void Executor::RunAsync(const StepArgs& args, DoneCallback done) {
  impl_->RunAsync(args, std::move(done));
}

int Executor::num_nodes() const { return impl_->graph().num_nodes(); }

Device* Executor::device() const { return impl_->options().device; }

}  // namespace weft
