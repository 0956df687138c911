#include "distributed/step_id.h"

#include "absl/base/const_init.h"
#include "absl/random/random.h"
#include "absl/synchronization/mutex.h"

namespace weft {

int64_t NewStepId() {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* gen = new absl::BitGen();
  absl::MutexLock lock(&mu);
  return static_cast<int64_t>(absl::Uniform<uint64_t>(*gen) >> 7);
}

}  // namespace weft
