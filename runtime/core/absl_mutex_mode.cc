// Switches off Abseil's lock-order (deadlock) detector in every Weft binary.
//
// Debian builds Abseil without NDEBUG, and in such a build the detector is
// on by default: every Mutex::Lock takes one process-wide spinlock to record
// which locks the thread already holds, and every ~Mutex takes it again to
// forget the mutex. That serialises all of Weft's threads on one lock (in a
// profile of a four-device step it cost about 5% of the instructions) and,
// on a cycle, aborts the process, which a runtime serving other people's
// jobs must not do. Lock order is checked by the tests under --config=tsan
// instead, whose detector sees every lock (runtime/core/tsan_absl_sync.cc).
//
// Every binary that links //runtime:core gets it (alwayslink): the mode is
// set by a static initialiser, before main and before any Weft thread starts.
#include "absl/synchronization/mutex.h"

namespace {

const bool kDeadlockDetectionOff = [] {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return true;
}();

}  // namespace
