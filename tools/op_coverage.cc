#include "tools/op_coverage.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/text_format.h"
#include "nlohmann/json.hpp"
#include "proto/op_def.pb.h"
#include "tools/json_text.h"

namespace weft {
namespace {

bool LooksLikeText(absl::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) {
    return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t';
  });
}

// A text-format OpList starts with its first field: "op {" or "op: {".
bool LooksLikeTextOpList(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    if (!absl::ConsumePrefix(&line, "op")) return false;
    line = absl::StripLeadingAsciiWhitespace(line);
    absl::ConsumePrefix(&line, ":");
    line = absl::StripLeadingAsciiWhitespace(line);
    return line.empty() || line[0] == '{';
  }
  return false;
}

bool IsOpName(absl::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '>' || c == '.';
  });
}

std::vector<std::string> Names(const tensorflow::OpList& list) {
  std::vector<std::string> names;
  for (const auto& op : list.op()) names.push_back(op.name());
  return names;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseOpNames(const std::string& bytes,
                                                      const std::string& path) {
  std::vector<std::string> names;
  tensorflow::OpList list;
  if (!LooksLikeText(bytes)) {
    if (!list.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", path, "' is neither a binary OpList nor a list of op names"));
    }
    names = Names(list);
  } else if (LooksLikeTextOpList(bytes)) {
    if (!google::protobuf::TextFormat::ParseFromString(bytes, &list)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "' is not a valid text-format OpList"));
    }
    names = Names(list);
  } else {
    int line_number = 0;
    for (absl::string_view line : absl::StrSplit(bytes, '\n')) {
      ++line_number;
      line = absl::StripAsciiWhitespace(line);
      if (line.empty() || line[0] == '#') continue;
      if (!IsOpName(line)) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", path, "' line ", line_number, ": '",
                         line.substr(0, 64), "' is not an op name"));
      }
      names.emplace_back(line);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

OpCoverage ComputeOpCoverage(const OpRegistry& ops,
                             const std::vector<std::string>* tf_ops) {
  OpCoverage c;
  c.weft_ops = static_cast<int64_t>(ops.OpNames().size());
  if (tf_ops == nullptr) return c;
  c.has_tf = true;
  for (const std::string& name : *tf_ops) {
    if (name.empty() || name[0] == '_') continue;
    ++c.tf_public_ops;
    if (ops.LookUpOpDef(name) != nullptr) {
      ++c.covered;
    } else {
      c.missing.push_back(name);
    }
  }
  std::sort(c.missing.begin(), c.missing.end());
  return c;
}

namespace {

double Percent(const OpCoverage& c) {
  return c.tf_public_ops == 0 ? 0.0 : 100.0 * c.covered / c.tf_public_ops;
}

double KernelPercent(const KernelCoverage& k) {
  return k.combinations == 0 ? 0.0 : 100.0 * k.covered / k.combinations;
}

}  // namespace

std::string OpCoverageToText(const OpCoverage& c, bool list_missing) {
  std::string out = absl::StrCat(c.weft_ops, " ops registered in Weft");
  if (!c.has_tf) return out + "\n";
  absl::StrAppend(&out, "; ", c.covered, " of TensorFlow's ", c.tf_public_ops,
                  " public ops (", absl::StrFormat("%.1f", Percent(c)), "%)\n");
  if (list_missing) {
    absl::StrAppend(&out, "\nmissing (", c.missing.size(), "):\n");
    for (const std::string& name : c.missing) absl::StrAppend(&out, "  ", absl::CEscape(name), "\n");
  }
  if (!c.has_kernels) return out;
  const KernelCoverage& k = c.kernels;
  absl::StrAppend(&out, "dtypes: ", k.covered, " of the ", k.combinations,
                  " type combinations TensorFlow's CPU kernels take for these ops (",
                  absl::StrFormat("%.1f", KernelPercent(k)), "%)\n");
  if (!k.missing_by_dtype.empty()) {
    absl::StrAppend(&out, "missing by dtype:");
    for (const auto& [dtype, n] : k.missing_by_dtype) {
      absl::StrAppend(&out, " ", dtype, " ", n);
    }
    absl::StrAppend(&out, "\n");
  }
  if (list_missing) {
    absl::StrAppend(&out, "\nmissing type combinations (", k.missing.size(), "):\n");
    for (const std::string& name : k.missing) absl::StrAppend(&out, "  ", absl::CEscape(name), "\n");
  }
  return out;
}

std::string OpCoverageToJson(const OpCoverage& c, bool list_missing) {
  nlohmann::json j;
  j["weft_ops"] = c.weft_ops;
  if (c.has_tf) {
    nlohmann::json tf;
    tf["public_ops"] = c.tf_public_ops;
    tf["covered"] = c.covered;
    tf["percent"] = Percent(c);
    if (list_missing) tf["missing"] = c.missing;
    if (c.has_kernels) {
      nlohmann::json k;
      k["combinations"] = c.kernels.combinations;
      k["covered"] = c.kernels.covered;
      k["percent"] = KernelPercent(c.kernels);
      nlohmann::json by = nlohmann::json::object();
      for (const auto& [dtype, n] : c.kernels.missing_by_dtype) by[dtype] = n;
      k["missing_by_dtype"] = by;
      if (list_missing) k["missing"] = c.kernels.missing;
      tf["kernels"] = k;
    }
    j["tensorflow"] = tf;
  }
  return JsonText(j) + "\n";
}

}  // namespace weft
