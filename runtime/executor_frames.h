// Per-step state of frames and iterations: what one step of the executor
// mutates (executor.cc). Internal to the executor and its tests.
//
// A graph without while loops runs in a single IterationState, the root
// frame's only iteration, which the step reuses from step to step. A while
// loop adds, at run time, one FrameState per instance of its body (a loop
// nested in another loop's body gets a new instance in every iteration of
// the outer loop), holding that instance's live iterations. Instances are
// keyed by (parent iteration, static frame), as TensorFlow keys them by
// (parent frame, parent iteration, frame name).
//
// Thread safety: the counters of an IterationState are atomics (a graph
// without loops updates them without a lock); its merge states are guarded
// by the step's merge lock; everything under "loop bookkeeping" and all of
// FrameState is guarded by the step's loop lock.
#ifndef WEFT_RUNTIME_EXECUTOR_FRAMES_H_
#define WEFT_RUNTIME_EXECUTOR_FRAMES_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/op_kernel.h"
#include "runtime/executor_graph.h"

namespace weft {

struct FrameState;

// How many IterationStates this process has allocated (steps recycle them):
// lets tests check that a long loop does not keep allocating.
int64_t IterationStatesCreated();
void NoteIterationStateCreated();

// Per-iteration state of one Merge.
struct MergeState {
  int32_t pending_control = 0;
  int32_t dead_data = 0;
  bool live = false;
};

// One iteration of one frame instance: its nodes' input slots, pending
// counters and Merge states, laid out as ExecutorGraph numbers that frame.
struct IterationState {
  explicit IterationState(const FrameInfo& f)
      : info(&f),
        inputs(new TensorEntry[f.num_input_slots]),
        counters(new std::atomic<int64_t>[f.counter_init.size()]),
        merges(f.merge_init.size()) {
    NoteIterationStateCreated();
  }

  // Back to the initial state for iteration `num` of `owner` (inputs must be
  // clear already).
  void Reset(FrameState* owner, int64_t num, uint64_t owner_id) {
    for (size_t i = 0; i < info->counter_init.size(); ++i) {
      counters[i].store(info->counter_init[i], std::memory_order_relaxed);
    }
    for (size_t i = 0; i < info->merge_init.size(); ++i) {
      merges[i] = MergeState{info->merge_init[i].num_control, 0, false};
    }
    frame = owner;
    iter_num = num;
    frame_id = owner_id;
    outstanding_ops = 0;
    outstanding_frames = 0;
  }

  // Dead inputs a Merge needs before it is dead itself: all of them, except
  // for a loop's Merge, whose back edges (from NextIteration) never deliver
  // in the first iteration and are the only ones to deliver in later ones.
  int32_t MergeDeadThreshold(int32_t state_index) const {
    const MergeInit& m = info->merge_init[state_index];
    if (m.num_back == 0) return m.num_data;
    return iter_num == 0 ? m.num_data - m.num_back : m.num_back;
  }

  const FrameInfo* const info;
  const std::unique_ptr<TensorEntry[]> inputs;
  const std::unique_ptr<std::atomic<int64_t>[]> counters;
  std::vector<MergeState> merges;  // guarded by the step's merge lock

  // Which frame instance and iteration this is (the root: null, 0, 0).
  FrameState* frame = nullptr;
  int64_t iter_num = 0;
  uint64_t frame_id = 0;
  // Loop bookkeeping: nodes of this iteration that are ready or running,
  // and child frame instances started from it that are not done.
  int32_t outstanding_ops = 0;
  int32_t outstanding_frames = 0;
};

// One instance of a while loop's body.
struct FrameState {
  // A loop-invariant value (constant Enter): given to every iteration.
  struct Invariant {
    int32_t node;
    bool dead;
    TensorEntry value;
  };
  // A NextIteration output held back because parallel_iterations
  // iterations are live; it starts the next iteration when one finishes.
  struct Deferred {
    int32_t node;
    TensorEntry value;
  };

  // Iteration `num`, or null if it was deleted or has not started.
  IterationState* iteration(int64_t num) const {
    if (num < first_iter || num > last_iter) return nullptr;
    return iterations[num - first_iter].get();
  }

  const FrameInfo* info = nullptr;
  int32_t static_index = 0;  // into ExecutorGraph::frames()
  // Stable across the partitions of a step (Send/Recv keys use it).
  uint64_t id = 0;
  FrameState* parent = nullptr;  // null: the root frame
  IterationState* parent_iter = nullptr;
  // Live iterations first_iter .. last_iter, oldest first.
  std::deque<std::unique_ptr<IterationState>> iterations;
  int64_t first_iter = 0;
  int64_t last_iter = -1;
  int32_t pending_enters = 0;    // Enters that have not delivered yet
  std::vector<Invariant> invariants;
  std::vector<Deferred> deferred;
  std::vector<bool> exit_live;   // by FrameInfo exit index
};

// The id of frame `name` entered from iteration `iter` of frame `parent_id`:
// a hash of the three, the same in every partition of the step.
uint64_t ChildFrameId(uint64_t parent_id, int64_t iter, const std::string& name);

}  // namespace weft

#endif  // WEFT_RUNTIME_EXECUTOR_FRAMES_H_
