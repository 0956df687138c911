// TensorFlow device names, full and partial.
//
//   /job:worker/replica:0/task:1/device:GPU:0   full
//   /job:ps/task:0                              partial: any device of that task
//   /device:CPU:*   /cpu:0   /gpu:1   /task:2   legacy and wildcard forms
//   ""                                          anything
//
//   WEFT_ASSIGN_OR_RETURN(DeviceSpec want, ParseDeviceSpec("/gpu:1"));
//   want.Matches(*ParseDeviceSpec(device->name()));
//
// A DeviceSpec holds the fields that were given; the rest are "any". Types
// are normalised to upper case ("gpu" -> "GPU").
#ifndef WEFT_RUNTIME_CORE_DEVICE_NAME_H_
#define WEFT_RUNTIME_CORE_DEVICE_NAME_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace weft {

struct DeviceSpec {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;
  std::optional<int> id;  // absent for "*" or when not given

  // True if every field is set.
  bool IsFull() const { return job && replica && task && type && id; }
  // True if each field set here equals the same field of `device`.
  bool Matches(const DeviceSpec& device) const;
  // True if no field is set to different values in the two specs.
  bool IsCompatibleWith(const DeviceSpec& other) const;
  // Fills fields unset here from `other`; INVALID_ARGUMENT naming the field
  // if both set it differently.
  absl::Status MergeFrom(const DeviceSpec& other);
  // Canonical form: "/job:J/replica:R/task:T/device:TYPE:N", only the set
  // parts ("/device:CPU:*" when the type is set without an id).
  std::string ToString() const;

  bool operator==(const DeviceSpec& o) const {
    return job == o.job && replica == o.replica && task == o.task &&
           type == o.type && id == o.id;
  }
};

// INVALID_ARGUMENT quoting the name and the bad part for malformed names.
absl::StatusOr<DeviceSpec> ParseDeviceSpec(absl::string_view name);

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_DEVICE_NAME_H_
