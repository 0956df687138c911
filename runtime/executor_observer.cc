#include "runtime/executor_observer.h"

#include <atomic>

#include "absl/strings/str_cat.h"

namespace weft {

int CurrentThreadNumber() {
  static std::atomic<int> next{1};
  thread_local const int number = next.fetch_add(1, std::memory_order_relaxed);
  return number;
}

void StepStatsCollector::OnNodeEnd(const NodeExecEvent& event) {
  tensorflow::NodeExecStats ns;
  ns.set_node_name(std::string(event.node_name));
  ns.set_timeline_label(absl::StrCat(event.node_name, " = ", event.op, "()"));
  const int64_t start_micros = event.start_nanos / 1000;
  const int64_t rel_micros = (event.end_nanos - event.start_nanos) / 1000;
  ns.set_all_start_micros(start_micros);
  ns.set_op_start_rel_micros(0);
  ns.set_op_end_rel_micros(rel_micros);
  ns.set_all_end_rel_micros(rel_micros);
  ns.set_all_start_nanos(event.start_nanos);
  ns.set_op_start_rel_nanos(0);
  ns.set_op_end_rel_nanos(event.end_nanos - event.start_nanos);
  ns.set_all_end_rel_nanos(event.end_nanos - event.start_nanos);
  ns.set_thread_id(static_cast<uint32_t>(event.thread_id));
  absl::MutexLock lock(&mu_);
  tensorflow::DeviceStepStats* dev = nullptr;
  for (auto& d : *stats_.mutable_dev_stats()) {
    if (d.device() == event.device) dev = &d;
  }
  if (dev == nullptr) {
    dev = stats_.add_dev_stats();
    dev->set_device(std::string(event.device));
  }
  *dev->add_node_stats() = std::move(ns);
}

void StepStatsCollector::Finalize(tensorflow::StepStats* out) {
  absl::MutexLock lock(&mu_);
  for (auto& d : *stats_.mutable_dev_stats()) {
    *out->add_dev_stats() = std::move(d);
  }
  stats_.Clear();
}

}  // namespace weft
