#include "tools/npy.h"

#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

absl::Status Bad(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("'", path, "' is not a readable .npy file: ", why));
}

absl::StatusOr<DataType> DtypeFromDescr(const std::string& descr) {
  static const std::pair<const char*, DataType> kTable[] = {
      {"<f4", DT_FLOAT}, {"<f8", DT_DOUBLE}, {"<i4", DT_INT32},
      {"<i8", DT_INT64}, {"|b1", DT_BOOL},   {"|u1", DT_UINT8},
      {"|i1", DT_INT8},  {"<i2", DT_INT16},  {"<u2", DT_UINT16},
      {"<u4", DT_UINT32}, {"<u8", DT_UINT64}, {"<f2", DT_HALF},
      {"<c8", DT_COMPLEX64}, {"<c16", DT_COMPLEX128},
  };
  for (const auto& [name, dtype] : kTable) {
    if (descr == name) return dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported dtype descr '", absl::CEscape(descr.substr(0, 32)),
      descr.size() > 32 ? "..." : "",
      "' (supported: little-endian float16/32/64, complex64/128, ints, bool)"));
}

// The text after `'key':` in the header dict, whitespace skipped, or npos.
// A linear scan (the header is untrusted: std::regex recurses per character
// and overflows the stack on a long header).
size_t ValueOf(const std::string& header, absl::string_view key) {
  const size_t at = header.find(absl::StrCat("'", key, "'"));
  if (at == std::string::npos) return std::string::npos;
  size_t i = at + key.size() + 2;
  while (i < header.size() && absl::ascii_isspace(header[i])) ++i;
  if (i >= header.size() || header[i] != ':') return std::string::npos;
  ++i;
  while (i < header.size() && absl::ascii_isspace(header[i])) ++i;
  return i < header.size() ? i : std::string::npos;
}

// The text between `open` at `header[i]` and the next `close`.
bool Enclosed(const std::string& header, size_t i, char open, char close,
              std::string* out) {
  if (i == std::string::npos || header[i] != open) return false;
  const size_t end = header.find(close, i + 1);
  if (end == std::string::npos) return false;
  *out = header.substr(i + 1, end - i - 1);
  return true;
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(const std::string& bytes,
                                const std::string& path) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return Bad(path, "missing the \\x93NUMPY magic");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) |
                 (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Bad(path, "truncated header");
    uint32_t len;
    std::memcpy(&len, bytes.data() + 8, 4);
    header_len = len;
    offset = 12;
  } else {
    return Bad(path, absl::StrCat("unknown format version ", major));
  }
  if (bytes.size() < offset + header_len) return Bad(path, "truncated header");
  const std::string header = bytes.substr(offset, header_len);
  offset += header_len;

  std::string descr, shape_text;
  if (!Enclosed(header, ValueOf(header, "descr"), '\'', '\'', &descr)) {
    return Bad(path, "no descr");
  }
  const size_t order = ValueOf(header, "fortran_order");
  const bool fortran = order != std::string::npos &&
                       header.compare(order, 4, "True") == 0;
  if (order == std::string::npos ||
      (!fortran && header.compare(order, 5, "False") != 0)) {
    return Bad(path, "no fortran_order");
  }
  if (!Enclosed(header, ValueOf(header, "shape"), '(', ')', &shape_text)) {
    return Bad(path, "no shape");
  }
  std::vector<int64_t> dims;
  for (absl::string_view part : absl::StrSplit(shape_text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;
    int64_t d;
    if (!absl::SimpleAtoi(part, &d)) return Bad(path, "bad shape");
    dims.push_back(d);
  }
  if (fortran && dims.size() > 1) {
    return Bad(path, "Fortran-order arrays are not supported (save with "
                     "np.ascontiguousarray)");
  }
  absl::StatusOr<DataType> dtype = DtypeFromDescr(descr);
  if (!dtype.ok()) return Bad(path, dtype.status().message());
  WEFT_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Build(dims));
  // Checked before allocating: the header may claim any shape. (Divided, as
  // elements times their size may not fit in 64 bits.)
  const uint64_t data_bytes = bytes.size() - offset;
  const uint64_t element_bytes = DataTypeSize(*dtype);
  if (data_bytes % element_bytes != 0 ||
      data_bytes / element_bytes != static_cast<uint64_t>(shape.num_elements())) {
    return Bad(path, absl::StrCat("data has ", data_bytes, " bytes, shape ",
                                  shape.DebugString(), " needs ",
                                  shape.num_elements(), " elements of ",
                                  element_bytes, " bytes"));
  }
  WEFT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(CpuAllocator(), *dtype, shape));
  CopyFromExternalBytes(bytes.data() + offset, &t);
  return t;
}

}  // namespace weft
