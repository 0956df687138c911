// Per-op time summed over traced steps (`weft run --op-timing`): where a
// step's time goes, by op type, to find the kernels worth optimising.
//
//   OpTimingTable table;
//   for (...) { session->Run(trace_options, ..., &metadata);
//               table.Add(metadata.step_stats()); }
//   std::fputs(table.Format(steps, 15).c_str(), stderr);
//
// Times are the wall time of each node's kernel (StepStats op_end_rel), so
// nodes that ran concurrently both count in full.
// Thread safety: none; copyable.
#ifndef WEFT_TOOLS_OP_TIMING_H_
#define WEFT_TOOLS_OP_TIMING_H_

#include <cstdint>
#include <map>
#include <string>

#include "proto/step_stats.pb.h"

namespace weft {

class OpTimingTable {
 public:
  // Adds every node of one step. The op type comes from the timeline label
  // ("name = Op()"), the node name when the label has none.
  void Add(const tensorflow::StepStats& stats);

  // The `top` op types by total time, one line each: microseconds per step,
  // share of the summed kernel time, nodes run per step, and the op.
  std::string Format(int64_t steps, int top) const;

 private:
  struct Entry {
    int64_t nanos = 0;
    int64_t count = 0;
  };
  std::map<std::string, Entry> by_op_;
};

}  // namespace weft

#endif  // WEFT_TOOLS_OP_TIMING_H_
