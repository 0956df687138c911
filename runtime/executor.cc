#include "runtime/executor.h"

#include <atomic>
#include <memory>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "ops/framework/node_def_util.h"
#include "runtime/executor_frames.h"
#include "runtime/executor_graph.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/status.h"

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

// The step whose run loop this thread is in (innermost), or null. An async
// kernel that completes on such a thread continues there; one completing on
// any other thread hands its successors to the pool (see AsyncDone).
thread_local const void* tls_running_step = nullptr;

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
// states (the root frame's iteration, plus the frames and iterations of
// while loops), and the bookkeeping to know when the step is over.
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
        has_loops_(g_.has_loops()),
        root_(g_.root_frame()),
        free_iterations_(g_.frames().size()) {}

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

  // Sends a finished node's `outs` (or deadness, if `dead`) on. `exclusive`:
  // no other thread is working on this step, so counters need no atomic RMW.
  void Propagate(const NodeItem& item, int32_t node, IterationState* iter,
                 bool dead, bool exclusive, Outputs* outs, ReadyQueue* q,
                 ReadyQueue* expensive) {
    if (has_loops_) {
      PropagateInFrames(item, node, iter, dead, outs->data(), q, expensive);
    } else {
      ActivateEdges<false>(item, iter, dead, exclusive, outs->data(),
                           /*allow_move=*/true, q, expensive);
    }
  }
  // Sends `out` (or deadness) along the node's out-edges into iteration
  // `iter`, adding newly ready nodes to `q` (cheap) or `expensive`.
  // kLoops: the loop lock is held and ready nodes are counted in `iter`.
  // !allow_move: `out` is given to several iterations (a loop invariant).
  template <bool kLoops>
  void ActivateEdges(const NodeItem& item, IterationState* iter, bool dead,
                     bool exclusive, TensorEntry* out, bool allow_move,
                     ReadyQueue* q, ReadyQueue* expensive);
  template <bool kLoops>
  void Ready(int32_t node, bool dead, IterationState* iter, ReadyQueue* q,
             ReadyQueue* expensive) {
    if constexpr (kLoops) ++iter->outstanding_ops;
    const NodeItem& item = items_[node];
    __builtin_prefetch(item.kernel);  // its vtable is read soon
    if (item.is_expensive && pool_ != nullptr) {
      expensive->push_back(TaggedNode{node, dead, iter});
    } else {
      q->push_back(TaggedNode{node, dead, iter});
    }
  }
  template <bool kLoops>
  void ActivateMerge(const OutEdge& e, IterationState* iter, bool dead,
                     TensorEntry* value, bool allow_move, ReadyQueue* q,
                     ReadyQueue* expensive);

  // While loops (executor_frames.h). All of it runs under loop_mu_.
  // Routes a node's outputs by its LoopKind, then retires it from `iter`.
  void PropagateInFrames(const NodeItem& item, int32_t node,
                         IterationState* iter, bool dead, TensorEntry* out,
                         ReadyQueue* q, ReadyQueue* expensive);
  FrameState* FindOrCreateFrame(IterationState* parent_iter,
                                const NodeItem& enter)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_mu_);
  // Starts iteration last_iter + 1 and gives it the loop invariants.
  IterationState* NewIteration(FrameState* frame, ReadyQueue* q,
                               ReadyQueue* expensive)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_mu_);
  void AddInvariant(FrameState* frame, int32_t node, bool dead,
                    TensorEntry* value, ReadyQueue* q, ReadyQueue* expensive)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_mu_);
  // Deletes finished iterations from the front of `frame` (starting
  // deferred ones), then the frame itself when it is done, and so on up.
  void CleanupFrame(FrameState* frame, ReadyQueue* q, ReadyQueue* expensive)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_mu_);
  void RecycleIteration(std::unique_ptr<IterationState> iter)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_mu_);
  // Frees every frame left at the end of a step (an aborted step leaves
  // some, holding values).
  void ClearFrames();
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

  const bool has_loops_;

  // Per-step arrays, reused across steps.
  IterationState root_;
  absl::Mutex merge_mu_;  // guards every IterationState::merges

  // While-loop state; empty for graphs without loops.
  absl::Mutex loop_mu_ ABSL_ACQUIRED_BEFORE(merge_mu_);
  absl::flat_hash_map<std::pair<IterationState*, int32_t>,
                      std::unique_ptr<FrameState>>
      frames_ ABSL_GUARDED_BY(loop_mu_);
  // Finished iterations kept for reuse, by static frame (so a long loop
  // allocates only as many as it ever has live).
  std::vector<std::vector<std::unique_ptr<IterationState>>> free_iterations_
      ABSL_GUARDED_BY(loop_mu_);

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
  base_params_.collectives = args.collectives;
  base_params_.cancellation = args.cancellation;
  base_params_.resource_mgr = exec_->options_.resource_mgr;
  base_params_.functions = exec_->options_.functions;
  aborted_.store(false, std::memory_order_relaxed);
  cancel_callback_done_.store(false, std::memory_order_relaxed);
  {
    absl::MutexLock lock(&status_mu_);
    status_ = absl::OkStatus();
  }
  {
    absl::MutexLock lock(&merge_mu_);
    root_.Reset(nullptr, 0, 0);
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
    Ready<false>(*it, false, &root_, &q, &expensive);
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
  const void* const outer = tls_running_step;
  tls_running_step = this;
  while (!q->empty()) {
    const TaggedNode t = q->back();
    q->pop_back();
    Process<kObserve>(t, share, q, &outs);
  }
  tls_running_step = outer;
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
  if (has_loops_) {
    // Also frees any frames an aborted step left (a finished one has none).
    ClearFrames();
  }
  if (aborted_.load(std::memory_order_relaxed) || has_loops_) {
    // Skipped nodes (or nodes left waiting by a loop) may hold inputs.
    ClearEntries(root_.inputs.get(), g_.root_frame().num_input_slots);
  }
  if (g_.uses_step_container()) {
    ResourceMgr* rm = exec_->options_.resource_mgr != nullptr
                          ? exec_->options_.resource_mgr
                          : exec_->options_.device->resource_manager();
    rm->Cleanup(StepContainerName(args_.step_id));
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
  // The node on the first line, where users look (unless the kernel named
  // it already), and TensorFlow's [[{{node}}]] tail for tools that parse it.
  const std::string label = NodeLabel(item.kernel->name(), item.kernel->type_string());
  std::string message(status.message());
  if (!absl::StartsWith(message, label)) message = absl::StrCat(label, ": ", message);
  Fail(absl::Status(status.code(),
                    absl::StrCat(message, NodeErrorSuffix(absl::CEscape(
                                              item.kernel->name())))));
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
  if (t.dead && !item.runs_when_dead) {
    ClearEntries(in, item.num_inputs);
    Propagate(item, t.node, t.iter, /*dead=*/true, exclusive, outs, q,
              &expensive);
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
    params.collectives = base_params_.collectives;
    params.cancellation = base_params_.cancellation;
    params.resource_mgr = base_params_.resource_mgr;
    params.functions = base_params_.functions;
    params.is_input_dead = t.dead;
    params.frame_id = t.iter->frame_id;
    params.iter_id = t.iter->iter_num;
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
    Propagate(item, t.node, t.iter, /*dead=*/false, exclusive, outs, q,
              &expensive);
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
  params.frame_id = t.iter->frame_id;
  params.iter_id = t.iter->iter_num;
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
    Propagate(item, t.node, t.iter, /*dead=*/false, /*exclusive=*/false,
              &state->outs, &q, &expensive);
    if (!expensive.empty()) Dispatch(&expensive, &q);
  }
  delete state;
  if (pool_ != nullptr && !q.empty() && tls_running_step != this) {
    // Completed on a thread busy with something else, typically a _Send of
    // another partition (the rendezvous runs this callback inside that
    // kernel). Running the successors here would make that partition wait
    // for this one's work to run out before its next node, serialising the
    // devices' work; TensorFlow's executor also hands them to the pool.
    // The task takes over this node's share of outstanding_. This thread
    // holds one more share until Schedule has returned: the task could
    // otherwise finish the step, and its owner free the pool, while
    // Schedule is still waking a worker.
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    pool_->Schedule([this, q = std::move(q)]() mutable {
      if (args_.observer != nullptr) {
        RunLoop<true>(&q, 1);
      } else {
        RunLoop<false>(&q, 1);
      }
    });
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish();
    return;
  }
  if (args_.observer != nullptr) {
    RunLoop<true>(&q, 1);
  } else {
    RunLoop<false>(&q, 1);
  }
}

// ---------------------------------------------------------------------------
// Propagation.

template <bool kLoops>
void Executor::Impl::Step::ActivateEdges(const NodeItem& item,
                                         IterationState* iter, bool dead,
                                         bool exclusive, TensorEntry* out,
                                         bool allow_move, ReadyQueue* q,
                                         ReadyQueue* expensive) {
  // Constant without loops, so the straight-line path pays nothing for it.
  const bool may_move = !kLoops || allow_move;
  TensorEntry* const inputs = iter->inputs.get();
  const OutEdge* e = edges_ + item.out_edge_start;
  const OutEdge* const end = e + item.num_out_edges;
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
          Write(&inputs[e->dst_slot], value, e->move && may_move);
        }
        Ready<kLoops>(e->dst, edge_dead, iter, q, expensive);
        break;
      case OutEdge::kCounter: {
        if (!edge_dead && value != nullptr) {
          Write(&inputs[e->dst_slot], value, e->move && may_move);
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
          Ready<kLoops>(e->dst, (now >> 32) != 0, iter, q, expensive);
        }
        break;
      }
      case OutEdge::kMerge:
        ActivateMerge<kLoops>(*e, iter, edge_dead, value, allow_move, q,
                              expensive);
        break;
    }
  }
}

template <bool kLoops>
void Executor::Impl::Step::ActivateMerge(const OutEdge& e, IterationState* iter,
                                         bool dead, TensorEntry* value,
                                         bool allow_move, ReadyQueue* q,
                                         ReadyQueue* expensive) {
  bool ready = false;
  bool ready_dead = false;
  {
    absl::MutexLock lock(&merge_mu_);
    MergeState& m = iter->merges[e.state_index];
    const int32_t num_data = iter->MergeDeadThreshold(e.state_index);
    const bool may_move = !kLoops || allow_move;
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
        Write(&iter->inputs[e.dst_slot], value, e.move && may_move);
        ready = m.pending_control == 0;
      }
    } else if (++m.dead_data == num_data && !m.live && m.pending_control == 0) {
      ready = ready_dead = true;
    }
  }
  if (ready) Ready<kLoops>(e.dst, ready_dead, iter, q, expensive);
}

// ---------------------------------------------------------------------------
// While loops: frames and iterations (TensorFlow's Enter/Exit/NextIteration).
//
// Every activation in a graph with loops happens under loop_mu_, which also
// guards the bookkeeping that decides when an iteration and a frame are
// done: an iteration is done when none of its nodes is ready or running, no
// child frame started from it is live, the iteration before it is deleted
// (iterations finish in order) and, for the first one, every Enter of the
// frame has delivered. A frame is done when all its Enters have delivered
// and its last iteration is deleted; its Exits that never delivered a live
// value then deliver deadness to the parent.

void Executor::Impl::Step::PropagateInFrames(const NodeItem& item,
                                             int32_t node,
                                             IterationState* iter, bool dead,
                                             TensorEntry* out, ReadyQueue* q,
                                             ReadyQueue* expensive) {
  absl::MutexLock lock(&loop_mu_);
  FrameState* const frame = iter->frame;
  FrameState* child = nullptr;
  switch (item.loop_kind) {
    case NodeItem::kNone:
      ActivateEdges<true>(item, iter, dead, /*exclusive=*/true, out,
                          /*allow_move=*/true, q, expensive);
      break;
    case NodeItem::kEnter:
      child = FindOrCreateFrame(iter, item);
      if (item.is_constant_enter) {
        AddInvariant(child, node, dead, out, q, expensive);
      } else {
        // Iteration 0 lives until every Enter has delivered.
        ActivateEdges<true>(item, child->iteration(0), dead, true, out, true,
                            q, expensive);
      }
      --child->pending_enters;
      break;
    case NodeItem::kExit:
      // A dead Exit waits for the end of the frame: every iteration but the
      // last has one.
      if (!dead) {
        frame->exit_live[item.exit_index] = true;
        ActivateEdges<true>(item, frame->parent_iter, false, true, out, true,
                            q, expensive);
      }
      break;
    case NodeItem::kNextIteration: {
      if (dead) break;  // the loop ends here; deadness stops
      IterationState* next = frame->iteration(iter->iter_num + 1);
      if (next == nullptr) {
        if (static_cast<int64_t>(frame->iterations.size()) >=
            frame->info->parallel_iterations) {
          frame->deferred.push_back(FrameState::Deferred{node, TensorEntry()});
          Write(&frame->deferred.back().value, out, /*move=*/true);
          break;
        }
        next = NewIteration(frame, q, expensive);
      }
      ActivateEdges<true>(item, next, false, true, out, true, q, expensive);
      break;
    }
  }
  --iter->outstanding_ops;
  if (child != nullptr) CleanupFrame(child, q, expensive);
  if (frame != nullptr) CleanupFrame(frame, q, expensive);
}

FrameState* Executor::Impl::Step::FindOrCreateFrame(IterationState* parent_iter,
                                                    const NodeItem& enter) {
  std::unique_ptr<FrameState>& slot =
      frames_[std::make_pair(parent_iter, enter.child_frame)];
  if (slot != nullptr) return slot.get();
  slot = std::make_unique<FrameState>();
  FrameState* frame = slot.get();
  frame->info = &g_.frames()[enter.child_frame];
  frame->static_index = enter.child_frame;
  frame->id = ChildFrameId(parent_iter->frame_id, parent_iter->iter_num,
                           frame->info->name);
  frame->parent = parent_iter->frame;
  frame->parent_iter = parent_iter;
  frame->pending_enters = frame->info->num_enters;
  frame->exit_live.assign(frame->info->exits.size(), false);
  ++parent_iter->outstanding_frames;
  NewIteration(frame, nullptr, nullptr);  // no invariants yet
  return frame;
}

IterationState* Executor::Impl::Step::NewIteration(FrameState* frame,
                                                   ReadyQueue* q,
                                                   ReadyQueue* expensive) {
  std::vector<std::unique_ptr<IterationState>>& pool =
      free_iterations_[frame->static_index];
  std::unique_ptr<IterationState> iter;
  if (pool.empty()) {
    iter = std::make_unique<IterationState>(*frame->info);
  } else {
    iter = std::move(pool.back());
    pool.pop_back();
  }
  ++frame->last_iter;
  if (frame->iterations.empty()) frame->first_iter = frame->last_iter;
  IterationState* raw = iter.get();
  frame->iterations.push_back(std::move(iter));
  {
    absl::MutexLock lock(&merge_mu_);
    raw->Reset(frame, frame->last_iter, frame->id);
  }
  for (FrameState::Invariant& inv : frame->invariants) {
    ActivateEdges<true>(items_[inv.node], raw, inv.dead, true, &inv.value,
                        /*allow_move=*/false, q, expensive);
  }
  return raw;
}

void Executor::Impl::Step::AddInvariant(FrameState* frame, int32_t node,
                                        bool dead, TensorEntry* value,
                                        ReadyQueue* q, ReadyQueue* expensive) {
  frame->invariants.push_back(FrameState::Invariant{node, dead, TensorEntry()});
  FrameState::Invariant& inv = frame->invariants.back();
  if (!dead && value->has_value) Write(&inv.value, value, /*move=*/true);
  for (const std::unique_ptr<IterationState>& iter : frame->iterations) {
    ActivateEdges<true>(items_[node], iter.get(), dead, true, &inv.value,
                        /*allow_move=*/false, q, expensive);
  }
}

void Executor::Impl::Step::CleanupFrame(FrameState* frame, ReadyQueue* q,
                                        ReadyQueue* expensive) {
  while (frame != nullptr) {
    while (!frame->iterations.empty()) {
      IterationState* first = frame->iterations.front().get();
      if (first->outstanding_ops != 0 || first->outstanding_frames != 0 ||
          (first->iter_num == 0 && frame->pending_enters != 0)) {
        return;  // not done; later iterations wait for it
      }
      RecycleIteration(std::move(frame->iterations.front()));
      frame->iterations.pop_front();
      ++frame->first_iter;
      if (!frame->deferred.empty()) {
        IterationState* next = NewIteration(frame, q, expensive);
        for (FrameState::Deferred& d : frame->deferred) {
          ActivateEdges<true>(items_[d.node], next, false, true, &d.value,
                              true, q, expensive);
        }
        frame->deferred.clear();
      }
    }
    if (frame->pending_enters != 0) return;
    // The frame is done: dead Exits deliver now, once.
    IterationState* parent_iter = frame->parent_iter;
    const std::vector<int32_t>& exits = frame->info->exits;
    for (size_t k = 0; k < exits.size(); ++k) {
      if (frame->exit_live[k]) continue;
      ActivateEdges<true>(items_[exits[k]], parent_iter, /*dead=*/true, true,
                          nullptr, true, q, expensive);
    }
    --parent_iter->outstanding_frames;
    FrameState* parent = frame->parent;
    for (FrameState::Invariant& inv : frame->invariants) {
      if (inv.value.has_value) inv.value.Clear();
    }
    frames_.erase(std::make_pair(parent_iter, frame->static_index));
    frame = parent;  // the parent iteration may be done now
  }
}

void Executor::Impl::Step::RecycleIteration(
    std::unique_ptr<IterationState> iter) {
  // Nodes that never ran (e.g. waiting on the untaken side of a loop Merge)
  // may still hold inputs.
  ClearEntries(iter->inputs.get(), iter->info->num_input_slots);
  const int32_t index = iter->frame->static_index;
  iter->frame = nullptr;
  free_iterations_[index].push_back(std::move(iter));
}

void Executor::Impl::Step::ClearFrames() {
  absl::MutexLock lock(&loop_mu_);
  for (auto& [key, frame] : frames_) {
    for (std::unique_ptr<IterationState>& iter : frame->iterations) {
      RecycleIteration(std::move(iter));
    }
  }
  frames_.clear();  // their invariants and deferred values with them
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
