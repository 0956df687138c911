// Lookup tables, the resources behind TensorFlow's HashTable,
// MutableHashTable, MutableHashTableOfTensors and MutableDenseHashTable ops
// (ops/lookup_ops.cc; kernels: lookup_kernels.cc).
//
// LookupTable is the interface the LookupTable* kernels use; the kinds are
// made by MakeHashTable (lookup_hash_table.cc: a static table, initialized
// once, or a mutable one, both on absl::flat_hash_map) and
// MakeDenseHashTable (lookup_dense_table.cc: open addressing with
// TensorFlow's hash and probe sequence, so its exported buckets come out in
// TensorFlow's order). The checks every kind shares (dtypes, key and value
// shapes) live here and answer in TensorFlow's words.
//
// Thread safety: each table has one absl::Mutex; finds take it shared (a
// static table, read-only once initialized, serves them all at once),
// inserts, removes, imports and initialization take it exclusively.
#ifndef WEFT_OPS_CPU_LOOKUP_TABLE_H_
#define WEFT_OPS_CPU_LOOKUP_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/tensor.h"

namespace weft {

enum class TableKind { kStatic, kMutable, kMutableOfTensors, kDense };

class LookupTable : public ResourceBase {
 public:
  LookupTable(std::string name, DataType key_dtype, DataType value_dtype,
              TensorShape key_shape, TensorShape value_shape)
      : name_(std::move(name)), key_dtype_(key_dtype), value_dtype_(value_dtype),
        key_shape_(std::move(key_shape)), value_shape_(std::move(value_shape)) {}

  const std::string& name() const { return name_; }
  DataType key_dtype() const { return key_dtype_; }
  DataType value_dtype() const { return value_dtype_; }
  const TensorShape& key_shape() const { return key_shape_; }
  const TensorShape& value_shape() const { return value_shape_; }
  std::string DebugString() const override;

  // Static tables only: InitializeTable* work on them, Insert/Remove not.
  virtual bool initializable() const { return false; }
  virtual bool is_initialized() const { return false; }
  // Dense tables: Import takes the bucket tensors Export gives.
  virtual bool imports_buckets() const { return false; }

  virtual int64_t size() = 0;
  // Fills `out` (allocated with FindShape(keys)); `default_value` has the
  // value shape (one default for all) or out's shape (one per key).
  virtual absl::Status Find(OpKernelContext* c, const Tensor& keys,
                            const Tensor& default_value, Tensor* out) = 0;
  virtual absl::Status Insert(const Tensor& keys, const Tensor& values) = 0;
  virtual absl::Status Remove(const Tensor& keys) = 0;
  // Replaces the contents (a static table: initializes it).
  virtual absl::Status Import(const Tensor& keys, const Tensor& values) = 0;
  virtual absl::Status Export(Tensor* keys, Tensor* values) = 0;
  // Static tables: inserts keys[i] -> values[i] (vectors) and marks the
  // table initialized if `end` is OK or OUT_OF_RANGE (the reader's normal
  // end); otherwise returns `end` after inserting what came before it.
  // Already initialized: OK if `total` equals the size (TensorFlow compares
  // no more than that), FAILED_PRECONDITION otherwise.
  virtual absl::Status Initialize(const Tensor& keys, const Tensor& values,
                                  int64_t total, const absl::Status& end);

  // The shape Find outputs for `keys`: keys' shape less the key shape's
  // dimensions, then the value shape.
  TensorShape FindShape(const TensorShape& keys) const;
  // TensorFlow's argument checks, in its words.
  absl::Status CheckKeyShape(const TensorShape& keys) const;
  absl::Status CheckFind(const Tensor& keys, const Tensor& default_value) const;
  absl::Status CheckInsert(const Tensor& keys, const Tensor& values) const;
  absl::Status CheckRemove(const Tensor& keys) const;

 private:
  const std::string name_;
  const DataType key_dtype_;
  const DataType value_dtype_;
  const TensorShape key_shape_;
  const TensorShape value_shape_;
};

// True if TensorFlow has a CPU table of this kind for the pair (and Weft
// too: variant and resource values are left out).
bool TableDtypesSupported(TableKind kind, DataType key, DataType value);

// A static or mutable hash table (value_shape: [] but for
// kMutableOfTensors). INVALID_ARGUMENT for an unsupported dtype pair.
absl::StatusOr<std::shared_ptr<LookupTable>> MakeHashTable(
    TableKind kind, std::string name, DataType key_dtype, DataType value_dtype,
    const TensorShape& value_shape);

// A dense table; empty_key and deleted_key fix the key shape. TensorFlow's
// checks on the keys, the bucket count (a power of 2, at least 4) and the
// load factor
// (in (0, 1]).
absl::StatusOr<std::shared_ptr<LookupTable>> MakeDenseHashTable(
    std::string name, DataType value_dtype, const Tensor& empty_key,
    const Tensor& deleted_key, const TensorShape& value_shape,
    int64_t num_buckets, float max_load_factor);

// Calls f(K{}, V{}) with the C++ types of a (key, value) dtype pair among
// those tables hold (keys int32, int64, string; values int32, int64, float,
// double, bool, string); false for any other pair.
template <typename K, typename F>
bool VisitTableValue(DataType value, F&& f) {
  switch (value) {
    case DT_INT32: f(K{}, int32_t{}); return true;
    case DT_INT64: f(K{}, int64_t{}); return true;
    case DT_FLOAT: f(K{}, float{}); return true;
    case DT_DOUBLE: f(K{}, double{}); return true;
    case DT_BOOL: f(K{}, bool{}); return true;
    case DT_STRING: f(K{}, std::string{}); return true;
    default: return false;
  }
}
template <typename F>
bool VisitTableTypes(DataType key, DataType value, F&& f) {
  switch (key) {
    case DT_INT32: return VisitTableValue<int32_t>(value, f);
    case DT_INT64: return VisitTableValue<int64_t>(value, f);
    case DT_STRING: return VisitTableValue<std::string>(value, f);
    default: return false;
  }
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_LOOKUP_TABLE_H_
