#include "runtime/core/device_name.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace weft {
namespace {

absl::Status Malformed(absl::string_view name, absl::string_view part) {
  return absl::InvalidArgumentError(absl::StrCat(
      "malformed device name '", name, "' at '", part,
      "' (expected e.g. /job:worker/replica:0/task:1/device:CPU:0, /cpu:0, "
      "/device:GPU:*)"));
}

bool ParseIndex(absl::string_view s, int* out) {
  return absl::SimpleAtoi(s, out) && *out >= 0;
}

// "CPU:0" / "CPU:*" / "cpu:0" -> type and optional id.
bool ParseTypeAndId(absl::string_view s, DeviceSpec* spec) {
  std::vector<absl::string_view> parts = absl::StrSplit(s, ':');
  if (parts.size() != 2 || parts[0].empty()) return false;
  for (char c : parts[0]) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  spec->type = absl::AsciiStrToUpper(parts[0]);
  if (parts[1] == "*") {
    spec->id.reset();
    return true;
  }
  int id;
  if (!ParseIndex(parts[1], &id)) return false;
  spec->id = id;
  return true;
}

template <typename T>
bool FieldMatches(const std::optional<T>& want, const std::optional<T>& have) {
  return !want || (have && *want == *have);
}

template <typename T>
bool FieldCompatible(const std::optional<T>& a, const std::optional<T>& b) {
  return !a || !b || *a == *b;
}

}  // namespace

absl::StatusOr<DeviceSpec> ParseDeviceSpec(absl::string_view name) {
  DeviceSpec spec;
  absl::string_view rest = absl::StripAsciiWhitespace(name);
  if (rest.empty()) return spec;
  if (!absl::ConsumePrefix(&rest, "/")) {
    // Bare "CPU:0" as some tools write it.
    if (ParseTypeAndId(rest, &spec)) return spec;
    return Malformed(name, rest);
  }
  for (absl::string_view part : absl::StrSplit(rest, '/')) {
    if (part.empty()) return Malformed(name, part);
    if (absl::ConsumePrefix(&part, "job:")) {
      if (part.empty()) return Malformed(name, "job:");
      spec.job = std::string(part);
    } else if (absl::ConsumePrefix(&part, "replica:")) {
      int r;
      if (!ParseIndex(part, &r)) return Malformed(name, part);
      spec.replica = r;
    } else if (absl::ConsumePrefix(&part, "task:")) {
      int t;
      if (!ParseIndex(part, &t)) return Malformed(name, part);
      spec.task = t;
    } else if (absl::ConsumePrefix(&part, "device:")) {
      if (!ParseTypeAndId(part, &spec)) {
        // "/device:CPU" without an id means any CPU.
        if (!part.empty() && part.find(':') == absl::string_view::npos) {
          spec.type = absl::AsciiStrToUpper(part);
          continue;
        }
        return Malformed(name, part);
      }
    } else if (!ParseTypeAndId(part, &spec)) {  // legacy "/cpu:0", "/gpu:1"
      return Malformed(name, part);
    }
  }
  return spec;
}

bool DeviceSpec::Matches(const DeviceSpec& device) const {
  return FieldMatches(job, device.job) && FieldMatches(replica, device.replica) &&
         FieldMatches(task, device.task) && FieldMatches(type, device.type) &&
         FieldMatches(id, device.id);
}

bool DeviceSpec::IsCompatibleWith(const DeviceSpec& other) const {
  return FieldCompatible(job, other.job) &&
         FieldCompatible(replica, other.replica) &&
         FieldCompatible(task, other.task) && FieldCompatible(type, other.type) &&
         FieldCompatible(id, other.id);
}

absl::Status DeviceSpec::MergeFrom(const DeviceSpec& other) {
  if (!IsCompatibleWith(other)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device specs '", ToString(), "' and '", other.ToString(),
        "' conflict"));
  }
  if (!job) job = other.job;
  if (!replica) replica = other.replica;
  if (!task) task = other.task;
  if (!type) type = other.type;
  if (!id) id = other.id;
  return absl::OkStatus();
}

std::string DeviceSpec::ToString() const {
  std::string out;
  if (job) absl::StrAppend(&out, "/job:", *job);
  if (replica) absl::StrAppend(&out, "/replica:", *replica);
  if (task) absl::StrAppend(&out, "/task:", *task);
  if (type) {
    absl::StrAppend(&out, "/device:", *type, ":",
                    id ? absl::StrCat(*id) : std::string("*"));
  }
  return out;
}

}  // namespace weft
