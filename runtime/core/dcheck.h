// WEFT_DCHECK(condition): a check of a contract between parts of Weft, on
// in the builds that look for bugs and compiled out of the others.
//
//   T* data() const {
//     WEFT_DCHECK(dtype_ == DataTypeToEnum<T>::value || data_ == nullptr);
//     ...
//
// On where WEFT_DEBUG_CHECKS is defined: --config=asan, --config=tsan and
// --config=fuzz set it (.bazelrc), and any build can add
// --copt=-DWEFT_DEBUG_CHECKS. Off, the condition is not evaluated and the
// hot accessors that carry these checks cost nothing.
//
// A DCHECK guards what Weft's own code must get right: a kernel reading a
// tensor as the wrong type, a slice past the rows it has. It is never the
// way to refuse what a user, a file or a peer sent; those get a Status. A
// failure means that such a check is missing or that Weft has a bug, so it
// prints the file, line and condition and aborts: under the sanitizers that
// gives the stack, and in a fuzzing campaign it records the input.
#ifndef WEFT_RUNTIME_CORE_DCHECK_H_
#define WEFT_RUNTIME_CORE_DCHECK_H_

#include "absl/base/optimization.h"

namespace weft::dcheck_internal {
[[noreturn]] void Fail(const char* file, int line, const char* condition);
}  // namespace weft::dcheck_internal

#if defined(WEFT_DEBUG_CHECKS)
#define WEFT_DCHECK(condition)                                          \
  (ABSL_PREDICT_TRUE(condition)                                         \
       ? static_cast<void>(0)                                           \
       : ::weft::dcheck_internal::Fail(__FILE__, __LINE__, #condition))
#else
// Not evaluated, but still compiled, so that it cannot rot.
#define WEFT_DCHECK(condition) static_cast<void>(sizeof(!(condition)))
#endif

#endif  // WEFT_RUNTIME_CORE_DCHECK_H_
