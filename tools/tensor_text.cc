#include "tools/tensor_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "runtime/core/numeric_cast.h"
#include "runtime/core/status.h"
#include "tools/graph_file.h"
#include "tools/json_text.h"
#include "tools/npy.h"

namespace weft {
namespace {

using Json = nlohmann::json;

// Flattens nested lists, recording the shape; rejects ragged lists.
absl::Status Flatten(const Json& j, int depth, std::vector<int64_t>* shape,
                     std::vector<const Json*>* leaves) {
  if (!j.is_array()) {
    if (depth != static_cast<int>(shape->size())) {
      return absl::InvalidArgumentError(
          "ragged list: some elements are nested deeper than others");
    }
    leaves->push_back(&j);
    return absl::OkStatus();
  }
  if (depth == static_cast<int>(shape->size())) {
    if (!leaves->empty()) {
      return absl::InvalidArgumentError(
          "ragged list: some elements are nested deeper than others");
    }
    shape->push_back(j.size());
  } else if (depth > static_cast<int>(shape->size()) ||
             (*shape)[depth] != static_cast<int64_t>(j.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ragged list: a list at depth ", depth, " has ", j.size(),
        " elements, another has ",
        depth < static_cast<int>(shape->size()) ? (*shape)[depth] : 0));
  }
  for (const Json& e : j) {
    WEFT_RETURN_IF_ERROR(Flatten(e, depth + 1, shape, leaves));
  }
  return absl::OkStatus();
}

// The deepest nesting of [ and { in JSON text, outside strings.
int MaxBracketDepth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

DataType InferDtype(const std::vector<const Json*>& leaves) {
  if (leaves.empty()) return DT_FLOAT;
  bool all_bool = true, all_int = true, all_string = true;
  for (const Json* j : leaves) {
    all_bool &= j->is_boolean();
    all_int &= j->is_number_integer();
    all_string &= j->is_string();
  }
  if (all_bool) return DT_BOOL;
  if (all_string) return DT_STRING;
  if (all_int) {
    // Like tf.constant: int32 unless a value needs 64 bits.
    for (const Json* j : leaves) {
      if (j->is_number_unsigned()
              ? j->get<uint64_t>() > uint64_t{INT32_MAX}
              : (j->get<int64_t>() > INT32_MAX ||
                 j->get<int64_t>() < INT32_MIN)) {
        return DT_INT64;
      }
    }
    return DT_INT32;
  }
  return DT_FLOAT;
}

template <typename T>
absl::Status OutOfRange(const Json& j) {
  return absl::InvalidArgumentError(absl::StrCat(
      "value ", j.dump(), " is out of range for dtype ",
      DataTypeNumpyName(DataTypeToEnum<T>::value), " [",
      +std::numeric_limits<T>::min(), ", ", +std::numeric_limits<T>::max(),
      "]"));
}

// Stores the integer-valued JSON number `j` in `*out`, refusing values `T`
// cannot hold (a cast would wrap, or for a double be undefined).
template <typename T>
absl::Status StoreInteger(const Json& j, T* out) {
  using Limits = std::numeric_limits<T>;
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(Limits::max())) return OutOfRange<T>(j);
    *out = static_cast<T>(u);
    return absl::OkStatus();
  }
  if (j.is_number_integer()) {
    const int64_t v = j.get<int64_t>();
    if (v < static_cast<int64_t>(Limits::min()) ||
        (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(Limits::max()))) {
      return OutOfRange<T>(j);
    }
    *out = static_cast<T>(v);
    return absl::OkStatus();
  }
  const double d = j.get<double>();
  if (d != std::floor(d)) {  // also NaN
    return absl::InvalidArgumentError(absl::StrCat(
        "value ", j.dump(), " is not an integer but the dtype is ",
        DataTypeNumpyName(DataTypeToEnum<T>::value)));
  }
  if (!TruncatesInto<T>(d)) return OutOfRange<T>(j);
  *out = static_cast<T>(d);
  return absl::OkStatus();
}

template <typename T>
absl::Status StoreNumber(const Json& j, T* out) {
  if (j.is_boolean()) {
    *out = static_cast<T>(j.get<bool>() ? 1 : 0);
    return absl::OkStatus();
  }
  if (!j.is_number()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "value ", j.dump(), " is not a number (dtype ",
        DataTypeNumpyName(DataTypeToEnum<T>::value), ")"));
  }
  if constexpr (std::is_integral_v<T>) {
    return StoreInteger(j, out);
  } else {
    // A double beyond a float's range becomes +-inf (IEEE), as in numpy.
    *out = static_cast<T>(j.get<double>());
  }
  return absl::OkStatus();
}

absl::Status StoreLeaf(const Json& j, DataType dtype, Tensor* t, int64_t i) {
  switch (dtype) {
    case tensorflow::DT_FLOAT:
      return StoreNumber(j, t->data<float>() + i);
    case tensorflow::DT_DOUBLE:
      return StoreNumber(j, t->data<double>() + i);
    case tensorflow::DT_INT32:
      return StoreNumber(j, t->data<int32_t>() + i);
    case tensorflow::DT_INT64:
      return StoreNumber(j, t->data<int64_t>() + i);
    case tensorflow::DT_INT16:
      return StoreNumber(j, t->data<int16_t>() + i);
    case tensorflow::DT_INT8:
      return StoreNumber(j, t->data<int8_t>() + i);
    case tensorflow::DT_UINT8:
      return StoreNumber(j, t->data<uint8_t>() + i);
    case tensorflow::DT_HALF: {
      float f;
      WEFT_RETURN_IF_ERROR(StoreNumber(j, &f));
      t->data<Half>()[i] = FloatToHalf(f);
      return absl::OkStatus();
    }
    case tensorflow::DT_BOOL:
      if (j.is_boolean()) {
        t->data<bool>()[i] = j.get<bool>();
      } else if (j.is_number()) {
        t->data<bool>()[i] = j.get<double>() != 0;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("value ", j.dump(), " is not a bool"));
      }
      return absl::OkStatus();
    case tensorflow::DT_STRING:
      if (!j.is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat("value ", j.dump(), " is not a string"));
      }
      t->data<std::string>()[i] = j.get<std::string>();
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "feeding dtype ", DataTypeNumpyName(dtype), " is not supported"));
  }
}

// The tensor of a feed: a few bytes of text may declare any shape ({"shape":
// [100000, 100000], "values": [0]}), so the bytes it would take are held to
// the same limit as a --graph or @file.npy (--max-input-bytes).
absl::StatusOr<Tensor> AllocateFeed(DataType dtype, const TensorShape& shape,
                                    int64_t max_bytes) {
  const int64_t element_bytes =
      DataTypeIsObject(dtype) ? int64_t{sizeof(std::string)}
                              : std::max<int64_t>(1, DataTypeSize(dtype));
  if (shape.num_elements() > max_bytes / element_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a feed of shape ", shape.DebugString(), " and dtype ",
        DataTypeNumpyName(dtype), " takes more than the limit of ", max_bytes,
        " bytes (raise it with --max-input-bytes)"));
  }
  return Tensor::Allocate(CpuAllocator(), dtype, shape);
}

bool IsComplex(DataType dtype) {
  return dtype == DT_COMPLEX64 || dtype == DT_COMPLEX128;
}

// A complex element from its two JSON numbers.
absl::Status StoreComplex(const Json& re, const Json& im, DataType dtype,
                          Tensor* t, int64_t i) {
  double parts[2];
  WEFT_RETURN_IF_ERROR(StoreNumber(re, &parts[0]));
  WEFT_RETURN_IF_ERROR(StoreNumber(im, &parts[1]));
  if (dtype == DT_COMPLEX64) {
    t->data<Complex64>()[i] = Complex64(static_cast<float>(parts[0]),
                                        static_cast<float>(parts[1]));
  } else {
    t->data<Complex128>()[i] = Complex128(parts[0], parts[1]);
  }
  return absl::OkStatus();
}

// Complex values are written as [real, imag] pairs (as TensorToJson writes
// them): the pairs' dim is not the tensor's.
absl::Status DropComplexPairDim(DataType dtype, std::vector<int64_t>* dims) {
  if (!IsComplex(dtype)) return absl::OkStatus();
  if (dims->empty() || dims->back() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        DataTypeNumpyName(dtype),
        " values are [real, imag] pairs: the innermost lists must hold 2 "
        "numbers"));
  }
  dims->pop_back();
  return absl::OkStatus();
}

absl::StatusOr<Tensor> FromLeaves(const std::vector<const Json*>& leaves,
                                  const std::vector<int64_t>& dims,
                                  DataType dtype, int64_t max_bytes) {
  WEFT_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Build(dims));
  const size_t per = IsComplex(dtype) ? 2 : 1;  // JSON numbers per element
  if (static_cast<int64_t>(leaves.size() / per) != shape.num_elements() &&
      leaves.size() != per) {
    return absl::InvalidArgumentError(
        absl::StrCat(leaves.size() / per, " values given for shape ",
                     shape.DebugString(), " (", shape.num_elements(),
                     " elements)"));
  }
  WEFT_ASSIGN_OR_RETURN(Tensor t, AllocateFeed(dtype, shape, max_bytes));
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    const size_t at = leaves.size() == per ? 0 : i * per;
    if (per == 2) {
      WEFT_RETURN_IF_ERROR(
          StoreComplex(*leaves[at], *leaves[at + 1], dtype, &t, i));
    } else {
      WEFT_RETURN_IF_ERROR(StoreLeaf(*leaves[at], dtype, &t, i));
    }
  }
  return t;
}

absl::StatusOr<Tensor> CastNpy(const Tensor& t, DataType hint) {
  if (hint == DT_INVALID || hint == t.dtype()) return t;
  return absl::InvalidArgumentError(absl::StrCat(
      "the .npy file holds ", DataTypeNumpyName(t.dtype()),
      " but the placeholder expects ", DataTypeNumpyName(hint),
      " (convert it with arr.astype(np.", DataTypeNumpyName(hint), "))"));
}

std::string FormatFloat(double v, bool is_float32) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[64];
  std::to_chars_result r =
      is_float32 ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                 : std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string JsonElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case tensorflow::DT_FLOAT:
      return FormatFloat(t.data<float>()[i], true);
    case tensorflow::DT_DOUBLE:
      return FormatFloat(t.data<double>()[i], false);
    case tensorflow::DT_HALF:
      return FormatFloat(HalfToFloat(t.data<Half>()[i]), true);
    case tensorflow::DT_BFLOAT16:
      return FormatFloat(BFloat16ToFloat(t.data<BFloat16>()[i]), true);
    case tensorflow::DT_COMPLEX64: {  // [real, imag]
      const Complex64 v = t.data<Complex64>()[i];
      return absl::StrCat("[", FormatFloat(v.real(), true), ", ",
                          FormatFloat(v.imag(), true), "]");
    }
    case tensorflow::DT_COMPLEX128: {
      const Complex128 v = t.data<Complex128>()[i];
      return absl::StrCat("[", FormatFloat(v.real(), false), ", ",
                          FormatFloat(v.imag(), false), "]");
    }
    case tensorflow::DT_STRING:
      return JsonText(Json(t.data<std::string>()[i]), /*indent=*/-1);
    case tensorflow::DT_RESOURCE:
      return Json(t.ElementString(i)).dump();
    default:
      return t.ElementString(i);  // ints and bools print as JSON already
  }
}

std::string TextElement(const Tensor& t, int64_t i) {
  if (t.dtype() == DT_FLOAT || t.dtype() == DT_DOUBLE ||
      t.dtype() == DT_HALF || t.dtype() == DT_BFLOAT16) {
    std::string s = JsonElement(t, i);
    if (!s.empty() && s[0] == '"') s = s.substr(1, s.size() - 2);
    return s;
  }
  return t.ElementString(i);
}

void AppendText(const Tensor& t, int dim, int64_t offset, int64_t stride_prod,
                std::string* out) {
  if (dim == t.dims()) {
    out->append(TextElement(t, offset));
    return;
  }
  const int64_t n = t.dim_size(dim);
  const int64_t stride = stride_prod / std::max<int64_t>(n, 1);
  constexpr int64_t kEdge = 3;
  out->push_back('[');
  const std::string separator =
      dim + 1 == t.dims() ? ", " : ",\n" + std::string(dim + 1, ' ');
  for (int64_t i = 0; i < n; ++i) {
    if (n > 2 * kEdge + 1 && i == kEdge) {
      out->append(separator + "...");
      i = n - kEdge - 1;
      continue;
    }
    if (i > 0) out->append(separator);
    AppendText(t, dim + 1, offset + i * stride, stride, out);
  }
  out->push_back(']');
}

}  // namespace

absl::StatusOr<Tensor> ParseFeedValue(const std::string& text, DataType hint,
                                      int64_t max_file_bytes) {
  if (!text.empty() && text[0] == '@') {
    const std::string path = text.substr(1);
    WEFT_ASSIGN_OR_RETURN(std::string bytes,
                          ReadFileToString(path, max_file_bytes));
    WEFT_ASSIGN_OR_RETURN(Tensor t, ParseNpy(bytes, path));
    return CastNpy(t, hint);
  }
  // Flatten (and the JSON value's own structure) go one level per bracket:
  // bound the depth before anything recurses. The object form adds one.
  if (const int depth = MaxBracketDepth(text); depth > kMaxTensorRank + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed value nests lists ", depth, " deep; a tensor has at most ",
        kMaxTensorRank, " dimensions"));
  }
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not a JSON value (expected a number, a nested list, "
        "an object {\"dtype\",\"shape\",\"values\"} or @file.npy)"));
  }
  if (j.is_object()) {
    DataType dtype = hint;
    if (j.contains("dtype")) {
      if (!j["dtype"].is_string()) {
        return absl::InvalidArgumentError("\"dtype\" must be a string");
      }
      WEFT_ASSIGN_OR_RETURN(dtype, ParseDataType(j["dtype"].get<std::string>()));
    }
    if (!j.contains("values")) {
      return absl::InvalidArgumentError("object feed needs a \"values\" field");
    }
    std::vector<int64_t> nested_shape;
    std::vector<const Json*> leaves;
    WEFT_RETURN_IF_ERROR(Flatten(j["values"], 0, &nested_shape, &leaves));
    if (dtype == DT_INVALID) dtype = InferDtype(leaves);
    std::vector<int64_t> dims = nested_shape;
    if (!j.contains("shape")) {
      WEFT_RETURN_IF_ERROR(DropComplexPairDim(dtype, &dims));
    } else {
      if (!j["shape"].is_array()) {
        return absl::InvalidArgumentError("\"shape\" must be a list of ints");
      }
      dims.clear();
      for (const Json& d : j["shape"]) {
        if (!d.is_number_integer()) {
          return absl::InvalidArgumentError("\"shape\" must be a list of ints");
        }
        dims.push_back(d.get<int64_t>());
      }
    }
    return FromLeaves(leaves, dims, dtype, max_file_bytes);
  }
  std::vector<int64_t> dims;
  std::vector<const Json*> leaves;
  WEFT_RETURN_IF_ERROR(Flatten(j, 0, &dims, &leaves));
  const DataType dtype = hint != DT_INVALID ? hint : InferDtype(leaves);
  if (!leaves.empty()) WEFT_RETURN_IF_ERROR(DropComplexPairDim(dtype, &dims));
  if (leaves.empty()) {
    WEFT_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Build(dims));
    return AllocateFeed(dtype, shape, max_file_bytes);
  }
  return FromLeaves(leaves, dims, dtype, max_file_bytes);
}

std::string TensorToJson(const Tensor& t) {
  std::string out = absl::StrCat("{\"dtype\": \"", DataTypeNumpyName(t.dtype()),
                                 "\", \"shape\": [",
                                 absl::StrJoin(t.shape().dim_sizes(), ", "),
                                 "], \"values\": [");
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (i > 0) out.append(", ");
    out.append(JsonElement(t, i));
  }
  out.append("]}");
  return out;
}

std::string TensorToText(const Tensor& t) {
  // As NumPy prints an empty array: walking its other dims would visit up
  // to 7 entries a dim, 7^rank in all, for no element.
  if (t.dims() > 0 && t.NumElements() == 0) return "[]";
  std::string out;
  AppendText(t, 0, 0, t.NumElements(), &out);
  return out;
}

}  // namespace weft
