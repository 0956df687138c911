#include "runtime/core/types.h"

#include <Eigen/Core>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace weft {

float HalfToFloat(Half h) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h.bits));
}
Half FloatToHalf(float f) {
  return Half{Eigen::numext::bit_cast<uint16_t>(Eigen::half(f))};
}
float BFloat16ToFloat(BFloat16 b) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(b.bits));
}
BFloat16 FloatToBFloat16(float f) {
  return BFloat16{Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(f))};
}

namespace {

struct TypeInfo {
  DataType dtype;
  const char* tf_name;
  const char* numpy_name;
  size_t size;  // 0 = not plain memory
};

constexpr TypeInfo kTypes[] = {
    {tensorflow::DT_FLOAT, "float", "float32", 4},
    {tensorflow::DT_DOUBLE, "double", "float64", 8},
    {tensorflow::DT_INT32, "int32", "int32", 4},
    {tensorflow::DT_INT64, "int64", "int64", 8},
    {tensorflow::DT_UINT8, "uint8", "uint8", 1},
    {tensorflow::DT_INT8, "int8", "int8", 1},
    {tensorflow::DT_INT16, "int16", "int16", 2},
    {tensorflow::DT_UINT16, "uint16", "uint16", 2},
    {tensorflow::DT_UINT32, "uint32", "uint32", 4},
    {tensorflow::DT_UINT64, "uint64", "uint64", 8},
    {tensorflow::DT_BOOL, "bool", "bool", 1},
    {tensorflow::DT_HALF, "half", "float16", 2},
    {tensorflow::DT_BFLOAT16, "bfloat16", "bfloat16", 2},
    {tensorflow::DT_COMPLEX64, "complex64", "complex64", 8},
    {tensorflow::DT_COMPLEX128, "complex128", "complex128", 16},
    {tensorflow::DT_STRING, "string", "string", 0},
    {tensorflow::DT_RESOURCE, "resource", "resource", 0},
    {tensorflow::DT_VARIANT, "variant", "variant", 0},
};

const TypeInfo* Find(DataType dtype) {
  for (const TypeInfo& info : kTypes) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

}  // namespace

size_t DataTypeSize(DataType dtype) {
  const TypeInfo* info = Find(dtype);
  return info == nullptr ? 0 : info->size;
}

bool DataTypeIsObject(DataType dtype) {
  return dtype == tensorflow::DT_STRING || dtype == tensorflow::DT_RESOURCE ||
         dtype == tensorflow::DT_VARIANT;
}

bool DataTypeIsSupported(DataType dtype) {
  return DataTypeSize(dtype) > 0 || DataTypeIsObject(dtype);
}

std::string DataTypeString(DataType dtype) {
  if (IsRefType(dtype)) return DataTypeString(BaseType(dtype)) + "_ref";
  const TypeInfo* info = Find(dtype);
  if (info != nullptr) return info->tf_name;
  if (tensorflow::DataType_IsValid(dtype)) {
    return absl::AsciiStrToLower(tensorflow::DataType_Name(dtype).substr(3));
  }
  return absl::StrCat("unknown dtype ", static_cast<int>(dtype));
}

std::string DataTypeNumpyName(DataType dtype) {
  const TypeInfo* info = Find(dtype);
  return info != nullptr ? info->numpy_name : DataTypeString(dtype);
}

absl::StatusOr<DataType> ParseDataType(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (absl::StartsWith(lower, "dt_")) lower = lower.substr(3);
  for (const TypeInfo& info : kTypes) {
    if (lower == info.tf_name || lower == info.numpy_name) return info.dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown dtype '", name,
      "' (expected one of float32, float64, int32, int64, bool, string, ...)"));
}

std::string DataTypeVectorString(const DataTypeVector& types) {
  return absl::StrJoin(types, ", ", [](std::string* out, DataType t) {
    out->append(DataTypeString(t));
  });
}

}  // namespace weft
