#include "runtime/executor_frames.h"

#include <atomic>

#include "absl/strings/str_cat.h"

namespace weft {

namespace {
std::atomic<int64_t> iteration_states_created{0};
}  // namespace

int64_t IterationStatesCreated() {
  return iteration_states_created.load(std::memory_order_relaxed);
}

void NoteIterationStateCreated() {
  iteration_states_created.fetch_add(1, std::memory_order_relaxed);
}

uint64_t ChildFrameId(uint64_t parent_id, int64_t iter,
                      const std::string& name) {
  // FNV-1a over "parent;iter;name": deterministic across processes, unlike
  // absl::Hash, so every partition of a step agrees on a frame's id.
  const std::string key = absl::StrCat(parent_id, ";", iter, ";", name);
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;  // 0 is the root frame
}

}  // namespace weft
