// ArgMax / ArgMin: the index of the largest / smallest element along one
// axis. Ties go to the smallest index; NaN never wins (as TensorFlow's CPU
// kernels). Half and bfloat16 are compared as the floats they widen to
// (exactly); every real type and bool, with TensorFlow's output types.
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/cpu/reduction_register.h"

namespace weft {
namespace {

template <typename T, bool kMax>
inline bool Better(T candidate, T best) {
  return kMax ? candidate > best : candidate < best;
}

template <typename T, bool kMax>
constexpr T Worst() {
  if constexpr (std::numeric_limits<T>::has_infinity) {
    return kMax ? -std::numeric_limits<T>::infinity()
                : std::numeric_limits<T>::infinity();
  } else {
    return kMax ? std::numeric_limits<T>::lowest()
                : std::numeric_limits<T>::max();
  }
}

// Reads the scalar `dimension` input (int16, int32 or int64).
absl::StatusOr<int64_t> ScalarIndex(const Tensor& t) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("dim must be a scalar, but received tensor of shape: ",
                     t.shape().DebugString()));
  }
  switch (t.dtype()) {
    case DT_INT16:
      return t.scalar<int16_t>();
    case DT_INT32:
      return t.scalar<int32_t>();
    case DT_INT64:
      return t.scalar<int64_t>();
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "dimension must be an integer, got ", DataTypeString(t.dtype())));
  }
}

// Columns scanned together when the axis is not the innermost one.
constexpr int64_t kArgChunk = 1024;

template <typename T, typename Tout, bool kMax>
class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    absl::StatusOr<int64_t> dim = ScalarIndex(c->input(1));
    OP_REQUIRES_OK(c, dim.status());
    const int rank = in.dims();
    int64_t axis = *dim;
    OP_REQUIRES(c, axis >= -rank && axis < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected dimension in the range [", -rank, ", ", rank,
                    "), but got ", axis)));
    if (axis < 0) axis += rank;
    OP_REQUIRES(c, in.dim_size(axis) > 0,
                absl::InvalidArgumentError(
                    absl::StrCat("Reduction axis ", *dim, " is empty in shape ",
                                 in.shape().DebugString())));
    TensorShape out_shape = in.shape();
    out_shape.RemoveDim(static_cast<int>(axis));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= in.dim_size(i);
    for (int i = axis + 1; i < rank; ++i) inner *= in.dim_size(i);
    const int64_t rows = in.dim_size(axis);
    using K = FloatIfNarrow<T>;
    const T* x = in.data<T>();
    Tout* o = out->data<Tout>();
    if (out->NumElements() == 0) return;
    if (inner == 1) {
      ParallelRange(c, outer, rows + 8, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const T* row = x + i * rows;
          K best = Worst<K, kMax>();
          int64_t best_r = 0;
          for (int64_t r = 0; r < rows; ++r) {
            const K v = ToFloatIfNarrow(row[r]);
            if (Better<K, kMax>(v, best)) {
              best = v;
              best_r = r;
            }
          }
          o[i] = static_cast<Tout>(best_r);
        }
      });
      return;
    }
    const int64_t chunks = (inner + kArgChunk - 1) / kArgChunk;
    ParallelRange(
        c, outer * chunks, rows * std::min(inner, kArgChunk),
        [&](int64_t b, int64_t e) {
          std::unique_ptr<K[]> best(new K[kArgChunk]);
          for (int64_t u = b; u < e; ++u) {
            const int64_t i = u / chunks;
            const int64_t col = (u % chunks) * kArgChunk;
            const int64_t len = std::min(kArgChunk, inner - col);
            const T* base = x + i * rows * inner + col;
            Tout* idx = o + i * inner + col;
            for (int64_t k = 0; k < len; ++k) {
              best[k] = Worst<K, kMax>();
              idx[k] = 0;
            }
            for (int64_t r = 0; r < rows; ++r) {
              const T* row = base + r * inner;
              for (int64_t k = 0; k < len; ++k) {
                const K v = ToFloatIfNarrow(row[k]);
                if (Better<K, kMax>(v, best[k])) {
                  best[k] = v;
                  idx[k] = static_cast<Tout>(r);
                }
              }
            }
          }
        });
  }
};

template <typename T, bool kMax, typename Tout>
void RegisterArg(KernelRegistry* r) {
  r->Register(KernelDef(kMax ? "ArgMax" : "ArgMin", kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value)
                  .TypeConstraint("output_type", DataTypeToEnum<Tout>::value),
              MakeKernel<ArgOp<T, Tout, kMax>>);
}

// ArgMax's output_type is one of int16, uint16, int32, int64; ArgMin's
// int32 or int64 (TensorFlow's OpDefs).
template <typename T>
void RegisterArgOps(KernelRegistry* r) {
  RegisterArg<T, true, int16_t>(r);
  RegisterArg<T, true, uint16_t>(r);
  RegisterArg<T, true, int32_t>(r);
  RegisterArg<T, true, int64_t>(r);
  RegisterArg<T, false, int32_t>(r);
  RegisterArg<T, false, int64_t>(r);
}

}  // namespace

void RegisterArgMinMaxKernels(KernelRegistry* r) {
  RegisterArgOps<float>(r);
  RegisterArgOps<double>(r);
  RegisterArgOps<Half>(r);
  RegisterArgOps<BFloat16>(r);
  RegisterArgOps<int8_t>(r);
  RegisterArgOps<int16_t>(r);
  RegisterArgOps<int32_t>(r);
  RegisterArgOps<int64_t>(r);
  RegisterArgOps<uint8_t>(r);
  RegisterArgOps<uint16_t>(r);
  RegisterArgOps<uint32_t>(r);
  RegisterArgOps<uint64_t>(r);
  RegisterArgOps<bool>(r);
}

}  // namespace weft
