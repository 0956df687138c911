// SummarizeTensor (string_summarize.h): element text by dtype, then the v2
// nested layout (first/last `limit` entries per dim, "..." between) or the
// v1 one (the first `limit` elements in row-major order, brackets closed
// as rows end).
#include "ops/cpu/string_summarize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace weft {
namespace {

template <typename F>
std::string ShortestText(F v, int digits, int more) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, static_cast<double>(v));
  F back;
  if constexpr (sizeof(F) == 4) {
    back = std::strtof(buf, nullptr);
  } else {
    back = std::strtod(buf, nullptr);
  }
  if (back != v) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits + more,
                  static_cast<double>(v));
  }
  return buf;
}

// Element i of t as TensorFlow's printing writes it.
std::string Element(const Tensor& t, int64_t i, bool print_v2) {
  switch (t.dtype()) {
    case DT_FLOAT:
      return FloatText(t.data<float>()[i]);
    case DT_DOUBLE:
      return DoubleText(t.data<double>()[i]);
    case DT_HALF:
      return FloatText(HalfToFloat(t.data<Half>()[i]));
    case DT_BFLOAT16:
      return FloatText(BFloat16ToFloat(t.data<BFloat16>()[i]));
    case DT_BOOL:
      return t.data<bool>()[i] ? "1" : "0";
    case DT_STRING: {
      std::string e = absl::Utf8SafeCEscape(t.data<std::string>()[i]);
      return print_v2 ? absl::StrCat("\"", e, "\"") : e;
    }
    case DT_INT8:
      return absl::StrCat(static_cast<int>(t.data<int8_t>()[i]));
    case DT_UINT8:
      return absl::StrCat(static_cast<int>(t.data<uint8_t>()[i]));
    case DT_INT16:
      return absl::StrCat(t.data<int16_t>()[i]);
    case DT_UINT16:
      return absl::StrCat(t.data<uint16_t>()[i]);
    case DT_INT32:
      return absl::StrCat(t.data<int32_t>()[i]);
    case DT_UINT32:
      return absl::StrCat(t.data<uint32_t>()[i]);
    case DT_INT64:
      return absl::StrCat(t.data<int64_t>()[i]);
    case DT_UINT64:
      return absl::StrCat(t.data<uint64_t>()[i]);
    default:
      return t.ElementString(i);
  }
}

void DimSpacing(int dim, int rank, std::string* out) {
  if (dim == rank - 1) {
    out->push_back(' ');
    return;
  }
  out->append(rank - dim - 1, '\n');
  out->append(dim + 1, ' ');
}

void SummarizeV2(const Tensor& t, int dim, int64_t base, int64_t ends,
                 std::string* out) {
  const int rank = t.dims();
  if (dim == rank) {
    out->append(Element(t, base, true));
    return;
  }
  int64_t stride = 1;
  for (int d = dim + 1; d < rank; ++d) stride *= t.dim_size(d);
  const int64_t count = t.dim_size(dim);
  out->push_back('[');
  for (int64_t i = 0; i < ends && i < count; ++i) {
    if (i > 0) DimSpacing(dim, rank, out);
    SummarizeV2(t, dim + 1, base + stride * i, ends, out);
  }
  if (count > 2 * ends) {
    DimSpacing(dim, rank, out);
    out->append("...");
  }
  for (int64_t i = std::max(ends, count - ends); i < count; ++i) {
    DimSpacing(dim, rank, out);
    SummarizeV2(t, dim + 1, base + stride * i, ends, out);
  }
  out->push_back(']');
}

void SummarizeV1(const Tensor& t, int dim, int64_t limit, int64_t* next,
                 std::string* out) {
  if (*next >= limit) return;
  const int64_t count = t.dim_size(dim);
  if (dim == t.dims() - 1) {
    for (int64_t i = 0; i < count; ++i) {
      if (*next >= limit) {
        if (dim != 0) out->append("...");
        return;
      }
      if (i > 0) out->push_back(' ');
      out->append(Element(t, (*next)++, false));
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    bool opened = false;
    if (*next < limit) {
      out->push_back('[');
      opened = true;
    }
    SummarizeV1(t, dim + 1, limit, next, out);
    if (*next < limit || opened) out->push_back(']');
  }
}

}  // namespace

std::string FloatText(float v) { return ShortestText<float>(v, 6, 3); }
std::string DoubleText(double v) { return ShortestText<double>(v, 15, 2); }

std::string SummarizeTensor(const Tensor& t, int64_t summarize, bool print_v2) {
  const int64_t n = t.NumElements();
  const int64_t limit = summarize < 0 ? n : std::min(summarize, n);
  std::string out;
  // TensorFlow writes nothing at all for bools when no entry is shown.
  if (t.dtype() == DT_BOOL && limit == 0) return out;
  if (t.dims() == 0) {
    for (int64_t i = 0; i < limit; ++i) {
      if (i > 0) out.push_back(' ');
      out.append(Element(t, i, print_v2));
    }
    if (n > limit) out.append("...");
    return out;
  }
  if (print_v2) {
    SummarizeV2(t, 0, 0, limit, &out);
    return out;
  }
  int64_t next = 0;
  SummarizeV1(t, 0, limit, &next, &out);
  if (n > limit) out.append("...");
  return out;
}

}  // namespace weft
