// Element types of tensors.
//
// Weft uses TensorFlow's DataType enum (proto/types.proto) directly, so the
// numbers on the wire and in memory are the same. This header maps between
// the enum, C++ types and names:
//
//   DataTypeToEnum<float>::value == DT_FLOAT
//   DataTypeString(DT_FLOAT) == "float"       (TensorFlow's spelling)
//   DataTypeNumpyName(DT_FLOAT) == "float32"  (NumPy's, used by the CLI)
#ifndef WEFT_RUNTIME_CORE_TYPES_H_
#define WEFT_RUNTIME_CORE_TYPES_H_

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/types.pb.h"

namespace weft {

using tensorflow::DataType;
using tensorflow::DT_BFLOAT16;
using tensorflow::DT_BOOL;
using tensorflow::DT_COMPLEX128;
using tensorflow::DT_COMPLEX64;
using tensorflow::DT_DOUBLE;
using tensorflow::DT_FLOAT;
using tensorflow::DT_HALF;
using tensorflow::DT_INT16;
using tensorflow::DT_INT32;
using tensorflow::DT_INT64;
using tensorflow::DT_INT8;
using tensorflow::DT_INVALID;
using tensorflow::DT_RESOURCE;
using tensorflow::DT_STRING;
using tensorflow::DT_UINT16;
using tensorflow::DT_UINT32;
using tensorflow::DT_UINT64;
using tensorflow::DT_UINT8;
using tensorflow::DT_VARIANT;

using DataTypeVector = absl::InlinedVector<DataType, 4>;

// complex64 and complex128: two floats or two doubles, real part first, as
// in TensorFlow and NumPy.
using Complex64 = std::complex<float>;
using Complex128 = std::complex<double>;
template <typename T>
inline constexpr bool kIsComplex =
    std::is_same_v<T, Complex64> || std::is_same_v<T, Complex128>;

// 16-bit floats are stored, copied and converted; kernels compute in float.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
float HalfToFloat(Half h);
Half FloatToHalf(float f);
float BFloat16ToFloat(BFloat16 b);
BFloat16 FloatToBFloat16(float f);

// A handle to a resource (e.g. a variable) living in a device's ResourceMgr;
// the element type of DT_RESOURCE tensors.
struct ResourceHandle {
  std::string device;
  std::string container;
  std::string name;
  DataType dtype = DT_INVALID;  // of the variable it names, when known
};

// The element type of DT_VARIANT tensors: an immutable C++ object (a
// TensorList, ops/cpu/tensor_list.h) shared by every tensor that holds it,
// or nothing (a default-constructed Variant). Kernels never change a value in
// place: an op that "modifies" a list makes a new one that shares the
// unchanged element tensors, so copying a Variant is one reference count.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // TensorFlow's name for the type, e.g. "tensorflow::TensorList".
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const = 0;
};
struct Variant {
  std::shared_ptr<const VariantValue> value;
  // The value as a T, or null when it holds nothing or something else.
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(value.get());
  }
};

template <typename T>
struct DataTypeToEnum;
#define WEFT_MATCH_TYPE_AND_ENUM(TYPE, ENUM)          \
  template <>                                         \
  struct DataTypeToEnum<TYPE> {                       \
    static constexpr DataType value = tensorflow::ENUM; \
  }
WEFT_MATCH_TYPE_AND_ENUM(float, DT_FLOAT);
WEFT_MATCH_TYPE_AND_ENUM(double, DT_DOUBLE);
WEFT_MATCH_TYPE_AND_ENUM(int32_t, DT_INT32);
WEFT_MATCH_TYPE_AND_ENUM(int64_t, DT_INT64);
WEFT_MATCH_TYPE_AND_ENUM(uint8_t, DT_UINT8);
WEFT_MATCH_TYPE_AND_ENUM(int8_t, DT_INT8);
WEFT_MATCH_TYPE_AND_ENUM(int16_t, DT_INT16);
WEFT_MATCH_TYPE_AND_ENUM(uint16_t, DT_UINT16);
WEFT_MATCH_TYPE_AND_ENUM(uint32_t, DT_UINT32);
WEFT_MATCH_TYPE_AND_ENUM(uint64_t, DT_UINT64);
WEFT_MATCH_TYPE_AND_ENUM(bool, DT_BOOL);
WEFT_MATCH_TYPE_AND_ENUM(std::string, DT_STRING);
WEFT_MATCH_TYPE_AND_ENUM(Half, DT_HALF);
WEFT_MATCH_TYPE_AND_ENUM(BFloat16, DT_BFLOAT16);
WEFT_MATCH_TYPE_AND_ENUM(Complex64, DT_COMPLEX64);
WEFT_MATCH_TYPE_AND_ENUM(Complex128, DT_COMPLEX128);
WEFT_MATCH_TYPE_AND_ENUM(ResourceHandle, DT_RESOURCE);
WEFT_MATCH_TYPE_AND_ENUM(Variant, DT_VARIANT);
#undef WEFT_MATCH_TYPE_AND_ENUM

// Bytes per element; 0 for types that are not plain memory (string,
// resource, variant) and for types Weft cannot store.
size_t DataTypeSize(DataType dtype);
// True for string, resource and variant: elements are C++ objects, not raw
// bytes.
bool DataTypeIsObject(DataType dtype);
// True if Weft can hold tensors of this type at all.
bool DataTypeIsSupported(DataType dtype);

// Inline: kernels ask on every call.
inline bool IsRefType(DataType dtype) { return dtype > 100 && dtype < 200; }
// DT_FLOAT_REF -> DT_FLOAT
inline DataType BaseType(DataType dtype) {
  return IsRefType(dtype) ? static_cast<DataType>(dtype - 100) : dtype;
}
inline DataType MakeRefType(DataType dtype) {
  return IsRefType(dtype) ? dtype : static_cast<DataType>(dtype + 100);
}

// TensorFlow's names: "float", "int32", "float_ref", ...
std::string DataTypeString(DataType dtype);
// NumPy's names: "float32", "float64", "int32", "bool", "string", ...
std::string DataTypeNumpyName(DataType dtype);
// Accepts either spelling and "DT_FLOAT".
absl::StatusOr<DataType> ParseDataType(absl::string_view name);

std::string DataTypeVectorString(const DataTypeVector& types);

// Calls fn(T{}) with the C++ type of a plain-memory, string or resource
// dtype (variant is left to DEFAULT: no kernel does arithmetic on it).
#define WEFT_CASE_TYPE(ENUM, TYPE, ...) \
  case tensorflow::ENUM: {              \
    using T = TYPE;                     \
    __VA_ARGS__;                        \
    break;                              \
  }
// Expands BODY with `T` bound to each numeric type; used by kernels that are
// written once for every dtype.
#define WEFT_SWITCH_ALL_TYPES(dtype, BODY, DEFAULT)          \
  switch (dtype) {                                           \
    WEFT_CASE_TYPE(DT_FLOAT, float, BODY)                    \
    WEFT_CASE_TYPE(DT_DOUBLE, double, BODY)                  \
    WEFT_CASE_TYPE(DT_INT32, int32_t, BODY)                  \
    WEFT_CASE_TYPE(DT_INT64, int64_t, BODY)                  \
    WEFT_CASE_TYPE(DT_UINT8, uint8_t, BODY)                  \
    WEFT_CASE_TYPE(DT_INT8, int8_t, BODY)                    \
    WEFT_CASE_TYPE(DT_INT16, int16_t, BODY)                  \
    WEFT_CASE_TYPE(DT_UINT16, uint16_t, BODY)                \
    WEFT_CASE_TYPE(DT_UINT32, uint32_t, BODY)                \
    WEFT_CASE_TYPE(DT_UINT64, uint64_t, BODY)                \
    WEFT_CASE_TYPE(DT_BOOL, bool, BODY)                      \
    WEFT_CASE_TYPE(DT_HALF, ::weft::Half, BODY)              \
    WEFT_CASE_TYPE(DT_BFLOAT16, ::weft::BFloat16, BODY)      \
    WEFT_CASE_TYPE(DT_COMPLEX64, ::weft::Complex64, BODY)    \
    WEFT_CASE_TYPE(DT_COMPLEX128, ::weft::Complex128, BODY)  \
    WEFT_CASE_TYPE(DT_STRING, std::string, BODY)             \
    WEFT_CASE_TYPE(DT_RESOURCE, ::weft::ResourceHandle, BODY) \
    default:                                                 \
      DEFAULT;                                               \
  }

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_TYPES_H_
