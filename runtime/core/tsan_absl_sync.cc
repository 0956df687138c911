// Makes Abseil's Mutex, CondVar and Notification visible to ThreadSanitizer.
//
// Weft links Debian's prebuilt Abseil, which is not compiled with
// -fsanitize=thread: TSan cannot see its locks, so every field guarded by an
// absl::Mutex looks racy under --config=tsan. This file, linked into a test
// (it is empty in other builds), defines the synchronising members itself:
// each calls the real one (found with dlsym(RTLD_NEXT)) and tells TSan about
// the happens-before edge it creates (__tsan_acquire/__tsan_release on the
// mutex's address). Symbols in the executable take precedence over the
// shared library's, so every caller, Abseil's own included, goes through
// these.
//
// Every binary that links //runtime:core gets it (alwayslink).
#if defined(WEFT_TSAN)

#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace {

void* Real(const char* mangled) {
  void* fn = dlsym(RTLD_NEXT, mangled);
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan_absl_sync: %s not found: %s\n", mangled,
                 dlerror());
    std::abort();
  }
  return fn;
}

#define WEFT_REAL(TYPE, MANGLED) \
  static const auto real = reinterpret_cast<TYPE>(Real(MANGLED))

// A Condition is evaluated inside Abseil with the mutex held, possibly after
// Abseil re-acquired it internally (unseen by TSan): wrap it so that each
// evaluation first acquires the mutex in TSan's eyes.
struct AnnotatedCondition {
  const absl::Condition* cond;
  absl::Mutex* mu;
  static bool Eval(AnnotatedCondition* c) {
    __tsan_acquire(c);  // it may be read on the thread that unlocks
    absl::Mutex* mu = c->mu;
    __tsan_acquire(mu);
    const bool result = c->cond->Eval();
    // Evaluation happens under the lock, possibly after the unlocking
    // thread's release was noted: note another one.
    __tsan_release(mu);
    return result;
  }
};

}  // namespace

#define WEFT_ANNOTATED(COND)                   \
  AnnotatedCondition annotated{&(COND), this}; \
  __tsan_release(&annotated);                  \
  const Condition wrapped(&AnnotatedCondition::Eval, &annotated)

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  WEFT_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::ReaderLock() {
  WEFT_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex10ReaderLockEv");
  real(this);
  __tsan_acquire(this);
}

bool Mutex::TryLock() {
  WEFT_REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

bool Mutex::ReaderTryLock() {
  WEFT_REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex13ReaderTryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Mutex::Unlock() {
  WEFT_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex6UnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::ReaderUnlock() {
  WEFT_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex12ReaderUnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::LockWhen(const Condition& cond) {
  WEFT_REAL(void (*)(Mutex*, const Condition&),
            "_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE");
  WEFT_ANNOTATED(cond);
  real(this, wrapped);
  __tsan_acquire(this);
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  WEFT_REAL(void (*)(Mutex*, const Condition&),
            "_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE");
  WEFT_ANNOTATED(cond);
  real(this, wrapped);
  __tsan_acquire(this);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  WEFT_REAL(bool (*)(Mutex*, const Condition&, Duration),
            "_ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_"
            "8DurationE");
  WEFT_ANNOTATED(cond);
  const bool r = real(this, wrapped, timeout);
  __tsan_acquire(this);
  return r;
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  WEFT_REAL(bool (*)(Mutex*, const Condition&, Time),
            "_ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_"
            "4TimeE");
  WEFT_ANNOTATED(cond);
  const bool r = real(this, wrapped, deadline);
  __tsan_acquire(this);
  return r;
}

void Mutex::Await(const Condition& cond) {
  WEFT_REAL(void (*)(Mutex*, const Condition&),
            "_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE");
  __tsan_release(this);
  WEFT_ANNOTATED(cond);
  real(this, wrapped);
  __tsan_acquire(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  WEFT_REAL(bool (*)(Mutex*, const Condition&, Duration),
            "_ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_"
            "8DurationE");
  __tsan_release(this);
  WEFT_ANNOTATED(cond);
  const bool r = real(this, wrapped, timeout);
  __tsan_acquire(this);
  return r;
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  WEFT_REAL(bool (*)(Mutex*, const Condition&, Time),
            "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_"
            "4TimeE");
  __tsan_release(this);
  WEFT_ANNOTATED(cond);
  const bool r = real(this, wrapped, deadline);
  __tsan_acquire(this);
  return r;
}

void CondVar::Wait(Mutex* mu) {
  WEFT_REAL(void (*)(CondVar*, Mutex*),
            "_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE");
  __tsan_release(mu);
  real(this, mu);
  __tsan_acquire(mu);
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  WEFT_REAL(bool (*)(CondVar*, Mutex*, Duration),
            "_ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_"
            "8DurationE");
  __tsan_release(mu);
  const bool r = real(this, mu, timeout);
  __tsan_acquire(mu);
  return r;
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  WEFT_REAL(bool (*)(CondVar*, Mutex*, Time),
            "_ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_"
            "4TimeE");
  __tsan_release(mu);
  const bool r = real(this, mu, deadline);
  __tsan_acquire(mu);
  return r;
}

void Notification::Notify() {
  WEFT_REAL(void (*)(Notification*), "_ZN4absl7debian312Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}

void Notification::WaitForNotification() const {
  WEFT_REAL(void (*)(const Notification*),
            "_ZNK4absl7debian312Notification19WaitForNotificationEv");
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  WEFT_REAL(
      bool (*)(const Notification*, Duration),
      "_ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_"
      "8DurationE");
  const bool r = real(this, timeout);
  __tsan_acquire(const_cast<Notification*>(this));
  return r;
}

bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  WEFT_REAL(
      bool (*)(const Notification*, Time),
      "_ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_"
      "4TimeE");
  const bool r = real(this, deadline);
  __tsan_acquire(const_cast<Notification*>(this));
  return r;
}

ABSL_NAMESPACE_END
}  // namespace absl

// Debian's gRPC (and its upb, OpenSSL) is not built with TSan either: its internal synchronisation
// is invisible, so TSan reports races between our code handing it memory
// and its own threads reading it. Reports raised from inside those
// libraries are dropped (TSan reads this at start-up); Weft's own hand-off
// of a call to gRPC's queue thread is shown to TSan with a lock
// (distributed/rpc/cq_threads.h). gRPC keeps the creation time of an error
// in its absl::Status payload, written on a gRPC thread and parsed (inside
// Debian's Abseil) on the thread that polls the queue. And an
// absl::Status shared between threads drops its last reference inside
// Debian's Abseil (Status::UnrefNonInlined), whose atomic decrement TSan
// cannot see, so the free looks unordered with the other thread's reads;
// likewise gRPC's own template code (grpc::internal::) that runs its tags.
// Races elsewhere in Weft's code are still reported.
extern "C" const char* __tsan_default_suppressions() {
  return "called_from_lib:libgrpc.so\n"
         "called_from_lib:libgpr.so\n"
         "called_from_lib:libgrpc++.so\n"
         "called_from_lib:libabsl_status.so\n"
         "called_from_lib:libabsl_time.so\n"
         "called_from_lib:libupb.so\n"
         "called_from_lib:libssl.so\n"
         "called_from_lib:libcrypto.so\n"
         "race:CRYPTO_THREAD_lock_free\n"
         "race:UnrefNonInlined\n"
         "race:grpc::internal::\n"
         // gRPC joins its own threads in grpc_shutdown, which it runs
         // asynchronously once the last channel or server is gone: a
         // client that exits right after its last call (weft train
         // --target) can end before that, and TSan calls the finished,
         // unjoined thread a leak.
         "thread:grpc_core::Thread::Thread\n";
}

#endif  // WEFT_TSAN
