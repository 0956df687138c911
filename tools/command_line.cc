#include "tools/command_line.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace weft {

absl::Status CommandLine::Parse(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (!absl::StartsWith(arg, "--")) {
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto it = flags_.find(name);
    if (it == flags_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    if (it->second == kSwitch) {
      // `--x=false` turns a switch off (the last one given wins); a value
      // that is not a boolean is a usage error, never a silent "on".
      bool on = true;
      if (has_value && !absl::SimpleAtob(value, &on)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "switch --", name, " takes no value or true/false, not '", value,
            "'"));
      }
      if (on) {
        values_[name] = {"true"};
      } else {
        values_.erase(name);
      }
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", name, " needs a value"));
      }
      value = argv[++i];
    }
    if (it->second == kValue && values_.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, " given more than once"));
    }
    values_[name].push_back(value);
  }
  return absl::OkStatus();
}

std::string CommandLine::Get(const std::string& name,
                             const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

absl::StatusOr<int64_t> CommandLine::GetPositiveInt(const std::string& name,
                                                    int64_t fallback,
                                                    int64_t max) const {
  if (!Has(name)) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(Get(name), &value) || value < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, " must be a positive integer, not '", Get(name), "'"));
  }
  if (value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must be at most ", max, ", not ", value));
  }
  return value;
}

absl::StatusOr<int64_t> CommandLine::GetByteSize(const std::string& name,
                                                 int64_t fallback) const {
  if (!Has(name)) return fallback;
  const std::string& text = Get(name);
  size_t digits = 0;
  while (digits < text.size() && absl::ascii_isdigit(text[digits])) ++digits;
  const std::string suffix = absl::AsciiStrToLower(text.substr(digits));
  int shift = -1;
  if (suffix.empty() || suffix == "b") {
    shift = 0;
  } else {
    const std::string units = "kmgt";
    const size_t unit = units.find(suffix[0]);
    const std::string rest = suffix.substr(1);
    if (unit != std::string::npos &&
        (rest.empty() || rest == "b" || rest == "ib")) {
      shift = 10 * static_cast<int>(unit + 1);
    }
  }
  int64_t count = 0;
  constexpr int64_t kMaxBytes = int64_t{1} << 62;
  if (digits == 0 || shift < 0 ||
      !absl::SimpleAtoi(text.substr(0, digits), &count) || count < 1 ||
      count > (kMaxBytes >> shift)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, " must be a positive size in bytes (digits, optionally "
        "followed by K, M, G or T), at most 2^62, not '", text, "'"));
  }
  return count << shift;
}

const std::vector<std::string>& CommandLine::GetAll(
    const std::string& name) const {
  static const std::vector<std::string> kEmpty;
  auto it = values_.find(name);
  return it == values_.end() ? kEmpty : it->second;
}

}  // namespace weft
