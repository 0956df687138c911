// Status helpers shared by every Weft module.
//
// Errors are values: functions that can fail return absl::Status or
// absl::StatusOr<T>. The two macros below keep the happy path readable:
//
//   absl::StatusOr<Graph> Load(const std::string& path) {
//     WEFT_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
//     WEFT_RETURN_IF_ERROR(Validate(bytes));
//     ...
//   }
//
// WithContext() prefixes a message with where it happened ("node 'x': ..."),
// keeping the code, so each layer can say what it was doing.
#ifndef WEFT_RUNTIME_CORE_STATUS_H_
#define WEFT_RUNTIME_CORE_STATUS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace weft {

// Returns `status` with "context: " put in front of its message. OK stays OK.
inline absl::Status WithContext(const absl::Status& status,
                                absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(context, ": ", status.message()));
}

// "INVALID_ARGUMENT: message": the form the CLI prints after "error: ".
std::string StatusToString(const absl::Status& status);

}  // namespace weft

#define WEFT_STATUS_CONCAT_INNER_(a, b) a##b
#define WEFT_STATUS_CONCAT_(a, b) WEFT_STATUS_CONCAT_INNER_(a, b)

// Returns from the current function if `expr` yields a non-OK status.
#define WEFT_RETURN_IF_ERROR(expr)                  \
  do {                                              \
    ::absl::Status weft_status_ = (expr);           \
    if (!weft_status_.ok()) return weft_status_;    \
  } while (0)

// Declares/assigns `lhs` from a StatusOr, or returns its error.
#define WEFT_ASSIGN_OR_RETURN(lhs, expr) \
  WEFT_ASSIGN_OR_RETURN_IMPL_(WEFT_STATUS_CONCAT_(weft_statusor_, __LINE__), lhs, expr)

#define WEFT_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                \
  if (!statusor.ok()) return statusor.status();          \
  lhs = std::move(statusor).value()

#endif  // WEFT_RUNTIME_CORE_STATUS_H_
