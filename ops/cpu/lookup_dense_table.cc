// TensorFlow's MutableDenseHashTable (lookup_table.h): open addressing in
// two bucket tensors, keys [num_buckets, key_size] and values
// [num_buckets, value_size], an empty_key marking free buckets and a
// deleted_key marking removed ones. Written to land every key in the bucket
// TensorFlow's table puts it in, so LookupTableExport (which hands out the
// buckets themselves) agrees with TensorFlow's row for row:
//   - a key's hash: an integer's value as uint64; a string's MurmurHash64A
//     (seed 0xDECAFCAFFE, TensorFlow's Hash64); a vector key's element
//     hashes folded with h ^ (e + 0x9e3779b97f4a7800 + (h << 10) + (h >> 4));
//   - probing: bucket = hash & (num_buckets - 1), then + 1, + 2, + 3, ...
//     (triangular steps, which visit every bucket of a power-of-2 table);
//   - an insert takes the key's bucket, or else the first empty or deleted
//     one on its path; before it, the table doubles while entries + keys
//     would exceed num_buckets * max_load_factor, re-inserting the old
//     entries in bucket order;
//   - a remove writes deleted_key over the key (its value stays);
//   - empty_key or deleted_key as a key is INVALID_ARGUMENT.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/lookup_table.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

uint64_t MurmurHash64(const std::string& s) {
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ULL;
  constexpr int kShift = 47;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  uint64_t h = 0xDECAFCAFFEULL ^ (n * kMul);
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t k = 0;
    for (int b = 7; b >= 0; --b) k = (k << 8) | p[b];  // little-endian load
    k *= kMul;
    k ^= k >> kShift;
    k *= kMul;
    h ^= k;
    h *= kMul;
  }
  if (n > 0) {
    for (size_t b = n; b-- > 0;) h ^= static_cast<uint64_t>(p[b]) << (8 * b);
    h *= kMul;
  }
  h ^= h >> kShift;
  h *= kMul;
  h ^= h >> kShift;
  return h;
}

template <typename K>
uint64_t HashScalar(const K& k) {
  if constexpr (std::is_same_v<K, std::string>) {
    return MurmurHash64(k);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(k));
  }
}

template <typename K, typename V>
class DenseHashTable : public LookupTable {
 public:
  DenseHashTable(std::string name, DataType value_dtype, const Tensor& empty,
                 const Tensor& deleted, const TensorShape& value_shape,
                 int64_t num_buckets, float max_load_factor)
      : LookupTable(std::move(name), empty.dtype(), value_dtype, empty.shape(),
                    value_shape),
        key_size_(empty.NumElements()),
        value_size_(value_shape.num_elements()),
        max_load_factor_(max_load_factor),
        empty_(empty.DeepCopy()),
        deleted_(deleted.DeepCopy()) {
    absl::MutexLock lock(&mu_);
    Allocate(num_buckets);
  }

  bool ok() {
    absl::MutexLock lock(&mu_);
    return keys_.IsInitialized() && values_.IsInitialized();
  }

  bool imports_buckets() const override { return true; }

  int64_t size() override {
    absl::ReaderMutexLock lock(&mu_);
    return num_entries_;
  }

  absl::Status Find(OpKernelContext* c, const Tensor& keys,
                    const Tensor& default_value, Tensor* out) override {
    const int64_t n = keys.dims() == 0 ? 1 : keys.dim_size(0);
    WEFT_RETURN_IF_ERROR(CheckBatch(keys, n));
    const K* k = keys.data<K>();
    for (int64_t i = 0; i < n; ++i) WEFT_RETURN_IF_ERROR(CheckKey(k + i * key_size_));
    absl::ReaderMutexLock lock(&mu_);
    const V* d = default_value.data<V>();
    // TensorFlow's dense table uses the default's first row for every
    // missing key, whatever the default's shape.
    V* o = out->data<V>();
    const V* vb = values_.data<V>();
    const int64_t vs = value_size_;
    ParallelRange(c, n, 60 + 4 * (key_size_ + vs), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t at = Probe(k + i * key_size_, /*for_insert=*/false);
        const V* src = at >= 0 ? vb + at * vs : d;
        std::copy(src, src + vs, o + i * vs);
      }
    });
    return absl::OkStatus();
  }

  absl::Status Insert(const Tensor& keys, const Tensor& values) override {
    const int64_t n = keys.dims() == 0 ? 1 : keys.dim_size(0);
    WEFT_RETURN_IF_ERROR(CheckBatch(keys, n));
    absl::MutexLock lock(&mu_);
    const int64_t pending = num_entries_ + n;
    if (pending > num_buckets_ * max_load_factor_) {
      int64_t grown = num_buckets_;
      do {
        grown <<= 1;
      } while (pending > grown * max_load_factor_ && grown < (int64_t{1} << 40));
      WEFT_RETURN_IF_ERROR(Rebucket(grown));
    }
    return InsertLocked(keys.data<K>(), values.data<V>(), n);
  }

  absl::Status Remove(const Tensor& keys) override {
    const int64_t n = keys.dims() == 0 ? 1 : keys.dim_size(0);
    WEFT_RETURN_IF_ERROR(CheckBatch(keys, n));
    const K* k = keys.data<K>();
    for (int64_t i = 0; i < n; ++i) WEFT_RETURN_IF_ERROR(CheckKey(k + i * key_size_));
    absl::MutexLock lock(&mu_);
    const K* del = deleted_.data<K>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = Probe(k + i * key_size_, false);
      if (at < 0) continue;
      std::copy(del, del + key_size_, keys_.data<K>() + at * key_size_);
      --num_entries_;
    }
    return absl::OkStatus();
  }

  absl::Status Import(const Tensor& keys, const Tensor& values) override {
    const int64_t n = keys.dims() == 2 ? keys.dim_size(0) : -1;
    if (n < 1 || (n & (n - 1)) != 0 || keys.dim_size(1) != key_size_ ||
        values.shape() != TensorShape({n, value_size_})) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected keys of shape [num_buckets,", key_size_,
          "] with num_buckets a power of 2 and values of shape [num_buckets,",
          value_size_, "] (what LookupTableExport gives), got ",
          keys.shape().DebugString(), " and ", values.shape().DebugString()));
    }
    absl::MutexLock lock(&mu_);
    num_buckets_ = n;
    keys_ = keys.DeepCopy();
    values_ = values.DeepCopy();
    num_entries_ = 0;
    for (int64_t b = 0; b < n; ++b) {
      const K* row = keys_.data<K>() + b * key_size_;
      if (!Equal(row, empty_.data<K>()) && !Equal(row, deleted_.data<K>())) {
        ++num_entries_;
      }
    }
    return absl::OkStatus();
  }

  absl::Status Export(Tensor* keys, Tensor* values) override {
    absl::ReaderMutexLock lock(&mu_);
    *keys = keys_.DeepCopy();
    *values = values_.DeepCopy();
    if (!keys->IsInitialized() || !values->IsInitialized()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("no memory to export ", DebugString()));
    }
    return absl::OkStatus();
  }

 private:
  bool Equal(const K* a, const K* b) const {
    return std::equal(a, a + key_size_, b);
  }

  absl::Status CheckKey(const K* k) const {
    if (Equal(k, empty_.data<K>())) {
      return absl::InvalidArgumentError(
          "Using the empty_key as a table key is not allowed");
    }
    if (Equal(k, deleted_.data<K>())) {
      return absl::InvalidArgumentError(
          "Using the deleted_key as a table key is not allowed");
    }
    return absl::OkStatus();
  }

  absl::Status CheckBatch(const Tensor& keys, int64_t n) const {
    if (keys.NumElements() != n * key_size_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected key shape ", key_shape().DebugString(), " or [", n, ",",
          key_size_, "], got ", keys.shape().DebugString()));
    }
    return absl::OkStatus();
  }

  uint64_t Hash(const K* k) const {
    if (key_size_ == 1) return HashScalar(k[0]);
    uint64_t h = 0;
    for (int64_t j = 0; j < key_size_; ++j) {
      h ^= HashScalar(k[j]) + 0x9e3779b97f4a7800ULL + (h << 10) + (h >> 4);
    }
    return h;
  }

  // The bucket holding `k`, or -1. With for_insert, the bucket to write it
  // to: its own, or the first empty or deleted one on its path (-2: none).
  int64_t Probe(const K* k, bool for_insert) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    const uint64_t mask = static_cast<uint64_t>(num_buckets_) - 1;
    uint64_t b = Hash(k) & mask;
    const K* kb = keys_.data<K>();
    for (int64_t probes = 0; probes < num_buckets_; ++probes) {
      const K* row = kb + b * key_size_;
      if (Equal(row, k)) return static_cast<int64_t>(b);
      if (Equal(row, empty_.data<K>())) {
        return for_insert ? static_cast<int64_t>(b) : -1;
      }
      if (for_insert && Equal(row, deleted_.data<K>())) {
        return static_cast<int64_t>(b);
      }
      b = (b + static_cast<uint64_t>(probes) + 1) & mask;
    }
    return for_insert ? -2 : -1;
  }

  absl::Status InsertLocked(const K* k, const V* v, int64_t n)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (int64_t i = 0; i < n; ++i) {
      const K* key = k + i * key_size_;
      WEFT_RETURN_IF_ERROR(CheckKey(key));
      const int64_t at = Probe(key, true);
      if (at == -2) {
        return absl::InternalError(
            "Internal error in MutableDenseHashTable insert");
      }
      K* row = keys_.data<K>() + at * key_size_;
      if (!Equal(row, key)) {
        std::copy(key, key + key_size_, row);
        ++num_entries_;
      }
      std::copy(v + i * value_size_, v + (i + 1) * value_size_,
                values_.data<V>() + at * value_size_);
    }
    return absl::OkStatus();
  }

  void Allocate(int64_t num_buckets) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    num_buckets_ = num_buckets;
    num_entries_ = 0;
    keys_ = Tensor(key_dtype(), TensorShape({num_buckets, key_size_}));
    values_ = Tensor(value_dtype(), TensorShape({num_buckets, value_size_}));
    if (!keys_.IsInitialized() || !values_.IsInitialized()) return;
    K* kb = keys_.data<K>();
    const K* e = empty_.data<K>();
    for (int64_t b = 0; b < num_buckets; ++b) {
      std::copy(e, e + key_size_, kb + b * key_size_);
    }
    std::fill(values_.data<V>(), values_.data<V>() + values_.NumElements(), V{});
  }

  absl::Status Rebucket(int64_t num_buckets) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Tensor old_keys = std::move(keys_);
    Tensor old_values = std::move(values_);
    const int64_t old_n = num_buckets_;
    Allocate(num_buckets);
    if (!keys_.IsInitialized() || !values_.IsInitialized()) {
      keys_ = std::move(old_keys);
      values_ = std::move(old_values);
      num_buckets_ = old_n;
      return absl::ResourceExhaustedError(absl::StrCat(
          "no memory to grow ", DebugString(), " to ", num_buckets, " buckets"));
    }
    for (int64_t b = 0; b < old_n; ++b) {
      const K* row = old_keys.data<K>() + b * key_size_;
      if (Equal(row, empty_.data<K>()) || Equal(row, deleted_.data<K>())) continue;
      WEFT_RETURN_IF_ERROR(
          InsertLocked(row, old_values.data<V>() + b * value_size_, 1));
    }
    return absl::OkStatus();
  }

  const int64_t key_size_;
  const int64_t value_size_;
  const float max_load_factor_;
  const Tensor empty_;
  const Tensor deleted_;
  mutable absl::Mutex mu_;
  int64_t num_buckets_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t num_entries_ ABSL_GUARDED_BY(mu_) = 0;
  Tensor keys_ ABSL_GUARDED_BY(mu_);    // [num_buckets, key_size]
  Tensor values_ ABSL_GUARDED_BY(mu_);  // [num_buckets, value_size]
};

}  // namespace

absl::StatusOr<std::shared_ptr<LookupTable>> MakeDenseHashTable(
    std::string name, DataType value_dtype, const Tensor& empty_key,
    const Tensor& deleted_key, const TensorShape& value_shape,
    int64_t num_buckets, float max_load_factor) {
  if (empty_key.dims() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Empty key must be a scalar or a vector, got shape ",
                     empty_key.shape().DebugString()));
  }
  if (value_shape.dims() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Empty value must be a scalar or a vector, got shape ",
                     value_shape.DebugString()));
  }
  if (empty_key.shape() != deleted_key.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Empty and deleted keys must have same shape, got shapes: ",
        empty_key.shape().DebugString(), " and ",
        deleted_key.shape().DebugString()));
  }
  if (num_buckets < 4 || (num_buckets & (num_buckets - 1)) != 0 ||
      num_buckets > (int64_t{1} << 40)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Number of buckets must be at least 4 and a power of 2, got: ",
        num_buckets));
  }
  if (!(max_load_factor > 0 && max_load_factor < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_load_factor must be between 0 and 1, got: ", max_load_factor));
  }
  const DataType key_dtype = empty_key.dtype();
  std::shared_ptr<LookupTable> table;
  bool fits = true;
  bool equal = false;
  if (TableDtypesSupported(TableKind::kDense, key_dtype, value_dtype)) {
    VisitTableTypes(key_dtype, value_dtype, [&](auto k, auto v) {
      using K = decltype(k);
      const K* e = empty_key.data<K>();
      equal = std::equal(e, e + empty_key.NumElements(), deleted_key.data<K>());
      if (equal) return;
      auto t = std::make_shared<DenseHashTable<K, decltype(v)>>(
          name, value_dtype, empty_key, deleted_key, value_shape, num_buckets,
          max_load_factor);
      fits = t->ok();
      table = std::move(t);
    });
  }
  if (equal) {
    return absl::InvalidArgumentError("Empty and deleted keys cannot be equal");
  }
  if (!fits) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "lookup table '", name, "': no memory for ", num_buckets, " buckets"));
  }
  if (table == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lookup table '", name, "': no CPU dense table of ",
        DataTypeString(key_dtype), " keys and ", DataTypeString(value_dtype),
        " values"));
  }
  return table;
}

}  // namespace weft
