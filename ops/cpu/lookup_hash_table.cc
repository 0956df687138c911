// The hash tables of lookup_table.h: TensorFlow's HashTable (static:
// filled once by InitializeTable*/Import, read-only after), and its
// MutableHashTable and MutableHashTableOfTensors (Insert/Remove/Import at
// any time). One class serves all three: a flat_hash_map from key to the
// key's value_size values (one for scalar values, held inline).
//
// Semantics, as TensorFlow's:
//   - static: Find before initialization is FAILED_PRECONDITION, Size 0,
//     Export ABORTED; a key given twice with different values is
//     FAILED_PRECONDITION (what came before it stays, uninitialized);
//     initializing an initialized table succeeds if the new data has as
//     many entries as the table, else FAILED_PRECONDITION; Insert and
//     Remove are UNIMPLEMENTED.
//   - mutable: a later value for a key replaces the earlier one (in one
//     Insert too); Import replaces the contents.
//   - Find: a key's values, or the default's (one default for all, or one
//     per key); large finds are split over the intra-op threads.
// Export order is the map's, not TensorFlow's (callers compare sorted).
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/lookup_table.h"

namespace weft {
namespace {

// A key or value as TensorFlow's messages print it (bool as 0 or 1).
template <typename T>
std::string Fmt(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else {
    return absl::StrCat(v);
  }
}

template <typename K, typename V>
class HashTable : public LookupTable {
 public:
  HashTable(TableKind kind, std::string name, DataType key_dtype,
            DataType value_dtype, const TensorShape& value_shape)
      : LookupTable(std::move(name), key_dtype, value_dtype, TensorShape(),
                    value_shape),
        static_(kind == TableKind::kStatic),
        value_size_(value_shape.num_elements()) {}

  bool initializable() const override { return static_; }
  bool is_initialized() const override {
    absl::ReaderMutexLock lock(&mu_);
    return initialized_;
  }

  int64_t size() override {
    absl::ReaderMutexLock lock(&mu_);
    return static_ && !initialized_ ? 0 : static_cast<int64_t>(map_.size());
  }

  absl::Status Find(OpKernelContext* c, const Tensor& keys,
                    const Tensor& default_value, Tensor* out) override {
    absl::ReaderMutexLock lock(&mu_);
    if (static_ && !initialized_) {
      return absl::FailedPreconditionError("Table not initialized.");
    }
    const K* k = keys.data<K>();
    const V* d = default_value.data<V>();
    V* o = out->data<V>();
    const int64_t vs = value_size_;
    // A mutable table takes one default per key when given as many;
    // TensorFlow's static HashTable always uses the default's first value.
    const bool per_key =
        !static_ && default_value.NumElements() == out->NumElements();
    ParallelRange(c, keys.NumElements(), 40 + 4 * vs,
                  [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i) {
                      auto it = map_.find(k[i]);
                      const V* src = it != map_.end() ? it->second.data()
                                     : per_key        ? d + i * vs
                                                      : d;
                      std::copy(src, src + vs, o + i * vs);
                    }
                  });
    return absl::OkStatus();
  }

  absl::Status Insert(const Tensor& keys, const Tensor& values) override {
    if (static_) {
      return absl::UnimplementedError(
          "Insert not supported by InitializableLookupTable implementations");
    }
    absl::MutexLock lock(&mu_);
    InsertLocked(keys, values);
    return absl::OkStatus();
  }

  absl::Status Remove(const Tensor& keys) override {
    if (static_) {
      return absl::UnimplementedError(
          "Remove not supported by InitializableLookupTable implementations");
    }
    absl::MutexLock lock(&mu_);
    for (const K& k : keys.flat<K>()) map_.erase(k);
    return absl::OkStatus();
  }

  absl::Status Import(const Tensor& keys, const Tensor& values) override {
    if (static_) {
      return Initialize(keys, values, keys.NumElements(), absl::OkStatus());
    }
    absl::MutexLock lock(&mu_);
    map_.clear();
    InsertLocked(keys, values);
    return absl::OkStatus();
  }

  absl::Status Export(Tensor* keys, Tensor* values) override {
    absl::ReaderMutexLock lock(&mu_);
    if (static_ && !initialized_) {
      return absl::AbortedError("HashTable is not initialized.");
    }
    const int64_t n = static_cast<int64_t>(map_.size());
    TensorShape value_shape({n});
    for (int64_t d : this->value_shape().dim_sizes()) value_shape.AddDim(d);
    *keys = Tensor(key_dtype(), TensorShape({n}));
    *values = Tensor(value_dtype(), value_shape);
    if (!keys->IsInitialized() || !values->IsInitialized()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "no memory to export the ", n, " entries of ", DebugString()));
    }
    K* k = keys->data<K>();
    V* v = values->data<V>();
    for (const auto& [key, vals] : map_) {
      *k++ = key;
      v = std::copy(vals.begin(), vals.end(), v);
    }
    return absl::OkStatus();
  }

  absl::Status Initialize(const Tensor& keys, const Tensor& values,
                          int64_t total, const absl::Status& end) override {
    absl::MutexLock lock(&mu_);
    if (initialized_) {
      if (total == static_cast<int64_t>(map_.size())) return absl::OkStatus();
      return absl::FailedPreconditionError(
          "Table was already initialized with different data.");
    }
    const K* k = keys.data<K>();
    const V* v = values.data<V>();
    for (int64_t i = 0; i < keys.NumElements(); ++i) {
      auto [it, inserted] = map_.try_emplace(k[i], v + i, v + i + 1);
      if (!inserted && !(it->second[0] == v[i])) {
        return absl::FailedPreconditionError(absl::StrCat(
            "HashTable has different value for same key. Key ", Fmt(k[i]),
            " has ", Fmt(it->second[0]), " and trying to add value ",
            Fmt(v[i])));
      }
    }
    if (!end.ok() && !absl::IsOutOfRange(end)) return end;
    initialized_ = true;
    return absl::OkStatus();
  }

 private:
  void InsertLocked(const Tensor& keys, const Tensor& values)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const K* k = keys.data<K>();
    const V* v = values.data<V>();
    const int64_t vs = value_size_;
    for (int64_t i = 0; i < keys.NumElements(); ++i) {
      map_[k[i]].assign(v + i * vs, v + (i + 1) * vs);
    }
  }

  const bool static_;
  const int64_t value_size_;
  mutable absl::Mutex mu_;
  bool initialized_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<K, absl::InlinedVector<V, 1>> map_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::shared_ptr<LookupTable>> MakeHashTable(
    TableKind kind, std::string name, DataType key_dtype, DataType value_dtype,
    const TensorShape& value_shape) {
  std::shared_ptr<LookupTable> table;
  if (TableDtypesSupported(kind, key_dtype, value_dtype)) {
    VisitTableTypes(key_dtype, value_dtype, [&](auto k, auto v) {
      table = std::make_shared<HashTable<decltype(k), decltype(v)>>(
          kind, name, key_dtype, value_dtype, value_shape);
    });
  }
  if (table == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lookup table '", name, "': no CPU table of ",
        DataTypeString(key_dtype), " keys and ", DataTypeString(value_dtype),
        " values"));
  }
  return table;
}

}  // namespace weft
