// LookupTable's shared checks and the dtype pairs each table kind has on
// TensorFlow's CPU (lookup_table.h).
#include "ops/cpu/lookup_table.h"

#include <algorithm>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

bool In(DataType t, std::initializer_list<DataType> set) {
  return std::find(set.begin(), set.end(), t) != set.end();
}

}  // namespace

std::string LookupTable::DebugString() const {
  return absl::StrCat("lookup table '", name_, "' (", DataTypeString(key_dtype_),
                      " -> ", DataTypeString(value_dtype_), ")");
}

absl::Status LookupTable::Initialize(const Tensor&, const Tensor&, int64_t,
                                     const absl::Status&) {
  return absl::InvalidArgumentError(
      absl::StrCat("Table ", name_, " is not initializable"));
}

TensorShape LookupTable::FindShape(const TensorShape& keys) const {
  TensorShape out = keys;
  for (int i = 0; i < key_shape_.dims() && out.dims() > 0; ++i) {
    out.RemoveDim(out.dims() - 1);
  }
  for (int64_t d : value_shape_.dim_sizes()) out.AddDim(d);
  return out;
}

absl::Status LookupTable::CheckKeyShape(const TensorShape& keys) const {
  const int k = key_shape_.dims();
  bool ends_with = keys.dims() >= k;
  for (int i = 0; ends_with && i < k; ++i) {
    ends_with = keys.dim_size(keys.dims() - k + i) == key_shape_.dim_size(i);
  }
  if (!ends_with) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input key shape ", keys.DebugString(),
        " must end with the table's key shape ", key_shape_.DebugString()));
  }
  return absl::OkStatus();
}

absl::Status LookupTable::CheckFind(const Tensor& keys,
                                    const Tensor& default_value) const {
  WEFT_RETURN_IF_ERROR(CheckKeyShape(keys.shape()));
  const TensorShape full = FindShape(keys.shape());
  if (default_value.shape() != value_shape_ && default_value.shape() != full) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected shape ", value_shape_.DebugString(), " or ",
        full.DebugString(), " for default value, got ",
        default_value.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::Status LookupTable::CheckInsert(const Tensor& keys,
                                      const Tensor& values) const {
  if (keys.dtype() != key_dtype_) {
    return absl::InvalidArgumentError(
        absl::StrCat("Key must be type ", DataTypeString(key_dtype_),
                     " but got ", DataTypeString(keys.dtype())));
  }
  if (values.dtype() != value_dtype_) {
    return absl::InvalidArgumentError(
        absl::StrCat("Value must be type ", DataTypeString(value_dtype_),
                     " but got ", DataTypeString(values.dtype())));
  }
  WEFT_RETURN_IF_ERROR(CheckKeyShape(keys.shape()));
  const TensorShape expected = FindShape(keys.shape());
  if (values.shape() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected shape ", expected.DebugString(),
                     " for value, got ", values.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::Status LookupTable::CheckRemove(const Tensor& keys) const {
  if (keys.dtype() != key_dtype_) {
    return absl::InvalidArgumentError(
        absl::StrCat("Key must be type ", DataTypeString(key_dtype_),
                     " but got ", DataTypeString(keys.dtype())));
  }
  return CheckKeyShape(keys.shape());
}

bool TableDtypesSupported(TableKind kind, DataType key, DataType value) {
  const bool dense = kind == TableKind::kDense;
  switch (key) {
    case DT_INT32:
      return In(value, {DT_INT32, DT_FLOAT, DT_DOUBLE}) ||
             (kind == TableKind::kStatic && value == DT_STRING);
    case DT_INT64:
      return In(value, {DT_INT32, DT_INT64, DT_FLOAT, DT_DOUBLE}) ||
             (dense ? value == DT_BOOL : value == DT_STRING);
    case DT_STRING:
      return In(value, {DT_BOOL, DT_INT32, DT_INT64, DT_FLOAT, DT_DOUBLE}) ||
             (kind == TableKind::kStatic && value == DT_STRING);
    default:
      return false;
  }
}

}  // namespace weft
