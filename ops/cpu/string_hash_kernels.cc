// StringToHashBucket (TensorFlow's legacy Hash64), StringToHashBucketFast
// (FarmHash Fingerprint64), StringToHashBucketStrong (SipHash-2-4 keyed by
// the `key` attr) and Fingerprint ("farmhash64": each row of `data`
// fingerprinted, the 8 bytes little-endian). Hashes: string_hash.h; big
// tensors are hashed in parallel (ParallelRange).
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/string_hash.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

enum class HashKind { kLegacy, kFarm, kSip };

template <HashKind kKind>
class StringToHashBucketOp : public OpKernel {
 public:
  explicit StringToHashBucketOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("num_buckets", &num_buckets_));
    if (!c->status().ok()) return;
    if (num_buckets_ < 1) {
      c->SetStatus(absl::InvalidArgumentError(
          absl::StrCat("num_buckets must be >= 1, got ", num_buckets_)));
      return;
    }
    if constexpr (kKind == HashKind::kSip) {
      std::vector<int64_t> key;
      c->SetStatus(c->GetAttr("key", &key));
      if (!c->status().ok()) return;
      if (key.size() != 2) {
        c->SetStatus(absl::InvalidArgumentError("Key must have 2 elements"));
        return;
      }
      k0_ = static_cast<uint64_t>(key[0]);
      k1_ = static_cast<uint64_t>(key[1]);
    }
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    const std::string* s = in.data<std::string>();
    int64_t* o = out->data<int64_t>();
    const uint64_t buckets = static_cast<uint64_t>(num_buckets_);
    ParallelRange(c, in.NumElements(), 200, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        uint64_t h;
        if constexpr (kKind == HashKind::kLegacy) {
          h = LegacyHash64(s[i]);
        } else if constexpr (kKind == HashKind::kFarm) {
          h = Fingerprint64(s[i]);
        } else {
          h = SipHash24(k0_, k1_, s[i]);
        }
        o[i] = static_cast<int64_t>(h % buckets);
      }
    });
  }

 private:
  int64_t num_buckets_ = 1;
  uint64_t k0_ = 0, k1_ = 0;
};

void PutLittleEndian(uint64_t v, uint8_t* out) {
  for (int k = 0; k < 8; ++k) out[k] = static_cast<uint8_t>(v >> (8 * k));
}

class FingerprintOp : public OpKernel {
 public:
  explicit FingerprintOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& method = c->input(1);
    OP_REQUIRES(c, method.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "`method` should be a scalar string: ",
                    method.shape().DebugString())));
    const std::string& m = method.scalar<std::string>();
    OP_REQUIRES(c, m == "farmhash64",
                absl::InvalidArgumentError(
                    absl::StrCat("Unsupported fingerprint method: ", m)));
    OP_REQUIRES(c, data.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "`data` should have at least one dimension: ",
                    data.shape().DebugString())));
    const int64_t rows = data.dim_size(0);
    const int64_t per_row = rows == 0 ? 0 : data.NumElements() / rows;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({rows, 8}), &out));
    uint8_t* o = out->data<uint8_t>();
    if (data.dtype() == DT_STRING) {
      const std::string* s = data.data<std::string>();
      // A row of several strings: the fingerprint of their fingerprints.
      ParallelRange(c, rows, 100 * (per_row + 1), [&](int64_t b, int64_t e) {
        std::string buf(8 * per_row, '\0');
        for (int64_t r = b; r < e; ++r) {
          if (per_row == 1) {
            PutLittleEndian(Fingerprint64(s[r]), o + 8 * r);
            continue;
          }
          for (int64_t k = 0; k < per_row; ++k) {
            PutLittleEndian(Fingerprint64(s[r * per_row + k]),
                            reinterpret_cast<uint8_t*>(&buf[8 * k]));
          }
          PutLittleEndian(Fingerprint64(buf), o + 8 * r);
        }
      });
      return;
    }
    const size_t size = DataTypeSize(data.dtype());
    OP_REQUIRES(c, size > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Fingerprint does not support dtype ",
                    DataTypeString(data.dtype()))));
    const char* bytes = static_cast<const char*>(data.raw_data());
    const size_t row_bytes = per_row * size;
    ParallelRange(c, rows, row_bytes + 50, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        PutLittleEndian(
            Fingerprint64(absl::string_view(bytes + r * row_bytes, row_bytes)),
            o + 8 * r);
      }
    });
  }
};

}  // namespace

void RegisterStringHashKernels(KernelRegistry* r) {
  r->Register(KernelDef("StringToHashBucket", kDeviceTypeCpu),
              MakeKernel<StringToHashBucketOp<HashKind::kLegacy>>);
  r->Register(KernelDef("StringToHashBucketFast", kDeviceTypeCpu),
              MakeKernel<StringToHashBucketOp<HashKind::kFarm>>);
  r->Register(KernelDef("StringToHashBucketStrong", kDeviceTypeCpu),
              MakeKernel<StringToHashBucketOp<HashKind::kSip>>);
  r->Register(KernelDef("Fingerprint", kDeviceTypeCpu),
              MakeKernel<FingerprintOp>);
}

}  // namespace weft
