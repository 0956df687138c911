// InitializeTableFromTextFile's reading (lookup_text_file.h), TensorFlow's
// rules: lines end at '\n' (a '\r' before it is dropped; the last line
// needs none); an empty line is an error naming its byte position; the
// columns are the line split at the delimiter (empty columns kept) and a
// line with too few is an error; numbers parse as TensorFlow's safe_strto*
// (spaces around allowed, nothing else); the offset is added to line
// numbers and, as in TensorFlow, to int32 fields (not to int64 ones). With
// vocab_size set, reading stops after that many lines, and a file with
// fewer is an error.
#include "ops/cpu/lookup_text_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

constexpr int64_t kLineNumber = -1;
constexpr int64_t kWholeLine = -2;

bool IsInteger(DataType t) {
  return t == DT_INT8 || t == DT_INT16 || t == DT_INT32 || t == DT_INT64 ||
         t == DT_UINT8 || t == DT_UINT16 || t == DT_UINT32 || t == DT_UINT64;
}

// strtod/strtof over the whole token, spaces around it allowed.
template <typename T>
bool ParseReal(absl::string_view token, T* out) {
  const std::string s(absl::StripAsciiWhitespace(token));
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_same_v<T, float>) {
    *out = std::strtof(s.c_str(), &end);
  } else {
    *out = std::strtod(s.c_str(), &end);
  }
  return end == s.c_str() + s.size();
}

class LineParser {
 public:
  explicit LineParser(const TextFileSpec& spec) : spec_(spec) {}

  // Sets element `i` of `t` from the line (line number `id`).
  absl::Status Set(const std::string& line,
                   const std::vector<absl::string_view>& columns, int64_t index,
                   int64_t id, Tensor* t, int64_t i) const {
    if (index == kLineNumber) {
      t->data<int64_t>()[i] = id + spec_.offset;
      return absl::OkStatus();
    }
    const absl::string_view token =
        index == kWholeLine ? absl::string_view(line) : columns[index];
    auto bad = [&](const char* type) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Field ", token, " in line ", id, " is not a valid ", type, "."));
    };
    switch (t->dtype()) {
      case DT_INT32: {
        int32_t v;
        if (!absl::SimpleAtoi(token, &v)) return bad("int32");
        t->data<int32_t>()[i] = static_cast<int32_t>(v + spec_.offset);
        break;
      }
      case DT_INT64: {
        int64_t v;
        if (!absl::SimpleAtoi(token, &v)) return bad("int64");
        t->data<int64_t>()[i] = v;
        break;
      }
      case DT_FLOAT:
        if (!ParseReal(token, &t->data<float>()[i])) return bad("float");
        break;
      case DT_DOUBLE:
        if (!ParseReal(token, &t->data<double>()[i])) return bad("double");
        break;
      case DT_STRING:
        t->data<std::string>()[i] = std::string(token);
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            "Data type ", DataTypeString(t->dtype()), " not supported."));
    }
    return absl::OkStatus();
  }

 private:
  const TextFileSpec& spec_;
};

absl::Status CheckIndices(const TextFileSpec& spec, DataType key,
                          DataType value) {
  if (spec.key_index == kLineNumber && key != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Key index for line number requires table key dtype of int64, got ",
        DataTypeString(key)));
  }
  if (spec.key_index == kWholeLine && !IsInteger(key) && key != DT_STRING) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Key index for whole line requires string or integer table key, got ",
        DataTypeString(key)));
  }
  if (spec.value_index == kLineNumber && value != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Value index for line number requires table value dtype of int64, got ",
        DataTypeString(value)));
  }
  if (spec.value_index == kWholeLine && !IsInteger(value) &&
      value != DT_STRING) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Value index for whole line requires table value dtype of integer or "
        "string, got ",
        DataTypeString(value)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWhole(const std::string& path,
                                      const std::string& filename) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat(filename, "; No such file or directory"));
  }
  if (st.st_size > kMaxTableFileBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "table file ", filename, " has ", st.st_size, " bytes, more than the ",
        kMaxTableFileBytes, " a table may be initialized from"));
  }
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"),
                                          &std::fclose);
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat(filename, "; cannot open it"));
  }
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0) {
    data.append(buf, n);
    if (static_cast<int64_t>(data.size()) > kMaxTableFileBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "table file ", filename, " grew past ", kMaxTableFileBytes, " bytes"));
    }
  }
  if (std::ferror(f.get())) {
    return absl::DataLossError(absl::StrCat("cannot read table file ", filename));
  }
  return data;
}

}  // namespace

absl::Status ReadTableTextFile(const FilePolicy& policy,
                               const std::string& filename,
                               const TextFileSpec& spec, DataType key_dtype,
                               DataType value_dtype, int64_t max_lines,
                               TextFileEntries* out) {
  WEFT_RETURN_IF_ERROR(CheckIndices(spec, key_dtype, value_dtype));
  WEFT_ASSIGN_OR_RETURN(std::string path, policy.Resolve(filename));
  WEFT_ASSIGN_OR_RETURN(std::string data, ReadWhole(path, filename));

  // The lines, each with the byte position just past it.
  std::vector<std::pair<absl::string_view, int64_t>> lines;
  for (size_t pos = 0; pos < data.size();) {
    size_t nl = data.find('\n', pos);
    const size_t stop = nl == std::string::npos ? data.size() : nl;
    absl::string_view line(data.data() + pos, stop - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl == std::string::npos ? data.size() : nl + 1;
    lines.emplace_back(line, static_cast<int64_t>(pos));
  }
  const int64_t num_lines = static_cast<int64_t>(lines.size());
  out->total = spec.vocab_size == -1 ? num_lines : spec.vocab_size;
  int64_t limit = num_lines;
  if (spec.vocab_size != -1) limit = std::min(limit, spec.vocab_size);
  if (max_lines >= 0) limit = std::min(limit, max_lines);
  out->keys = Tensor(key_dtype, TensorShape({limit}));
  out->values = Tensor(value_dtype, TensorShape({limit}));
  if (!out->keys.IsInitialized() || !out->values.IsInitialized()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("no memory for the ", limit, " entries of ", filename));
  }
  const bool split = std::max(spec.key_index, spec.value_index) >= 0;
  const size_t columns_needed =
      static_cast<size_t>(std::max(spec.key_index, spec.value_index) + 1);
  LineParser parser(spec);
  out->count = 0;
  for (int64_t id = 0; id < limit; ++id) {
    const std::string line(lines[id].first);
    if (line.empty()) {
      out->end = absl::InvalidArgumentError(
          absl::StrCat("Invalid content in ", filename,
                       ": empty line found at position ", lines[id].second, "."));
      return absl::OkStatus();
    }
    std::vector<absl::string_view> columns;
    if (split) {
      std::vector<absl::string_view> split = absl::StrSplit(line, spec.delimiter);
      columns.swap(split);
      if (columns.size() < columns_needed) {
        out->end = absl::InvalidArgumentError(absl::StrCat(
            "Invalid number of columns in ", filename, " line ", id, " (", line,
            ") : expected at least ", columns_needed, " got ", columns.size()));
        return absl::OkStatus();
      }
    }
    absl::Status s = parser.Set(line, columns, spec.key_index, id, &out->keys, id);
    if (s.ok()) {
      s = parser.Set(line, columns, spec.value_index, id, &out->values, id);
    }
    if (!s.ok()) {
      out->end = s;
      return absl::OkStatus();
    }
    out->count = id + 1;
  }
  if (spec.vocab_size != -1 && num_lines < spec.vocab_size &&
      (max_lines < 0 || max_lines > num_lines)) {
    out->end = absl::InvalidArgumentError(
        absl::StrCat("Invalid vocab_size in ", filename, ": expected ",
                     spec.vocab_size, " but got ", num_lines));
  } else if (spec.vocab_size != -1 && limit == spec.vocab_size) {
    out->end = absl::OutOfRangeError(absl::StrCat(
        "Finished reading ", spec.vocab_size, " of lines from ", filename));
  } else {
    out->end = absl::OutOfRangeError(absl::StrCat("End of file ", filename));
  }
  return absl::OkStatus();
}

}  // namespace weft
