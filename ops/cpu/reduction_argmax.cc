// ArgMax / ArgMin: the index of the largest / smallest element along one
// axis. Ties go to the smallest index; NaN never wins (as TensorFlow's CPU
// kernels).
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
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
    const T* x = in.data<T>();
    Tout* o = out->data<Tout>();
    if (out->NumElements() == 0) return;
    if (inner == 1) {
      ParallelRange(c, outer, rows + 8, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const T* row = x + i * rows;
          T best = Worst<T, kMax>();
          int64_t best_r = 0;
          for (int64_t r = 0; r < rows; ++r) {
            if (Better<T, kMax>(row[r], best)) {
              best = row[r];
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
          std::unique_ptr<T[]> best(new T[kArgChunk]);
          for (int64_t u = b; u < e; ++u) {
            const int64_t i = u / chunks;
            const int64_t col = (u % chunks) * kArgChunk;
            const int64_t len = std::min(kArgChunk, inner - col);
            const T* base = x + i * rows * inner + col;
            Tout* idx = o + i * inner + col;
            for (int64_t k = 0; k < len; ++k) {
              best[k] = Worst<T, kMax>();
              idx[k] = 0;
            }
            for (int64_t r = 0; r < rows; ++r) {
              const T* row = base + r * inner;
              for (int64_t k = 0; k < len; ++k) {
                if (Better<T, kMax>(row[k], best[k])) {
                  best[k] = row[k];
                  idx[k] = static_cast<Tout>(r);
                }
              }
            }
          }
        });
  }
};

template <typename T>
void RegisterArgOps(KernelRegistry* r) {
  const DataType t = DataTypeToEnum<T>::value;
  r->Register(KernelDef("ArgMax", kDeviceTypeCpu)
                  .TypeConstraint("T", t)
                  .TypeConstraint("output_type", DT_INT64),
              MakeKernel<ArgOp<T, int64_t, true>>);
  r->Register(KernelDef("ArgMax", kDeviceTypeCpu)
                  .TypeConstraint("T", t)
                  .TypeConstraint("output_type", DT_INT32),
              MakeKernel<ArgOp<T, int32_t, true>>);
  r->Register(KernelDef("ArgMin", kDeviceTypeCpu)
                  .TypeConstraint("T", t)
                  .TypeConstraint("output_type", DT_INT64),
              MakeKernel<ArgOp<T, int64_t, false>>);
  r->Register(KernelDef("ArgMin", kDeviceTypeCpu)
                  .TypeConstraint("T", t)
                  .TypeConstraint("output_type", DT_INT32),
              MakeKernel<ArgOp<T, int32_t, false>>);
}

}  // namespace

void RegisterArgMinMaxKernels(KernelRegistry* r) {
  RegisterArgOps<float>(r);
  RegisterArgOps<double>(r);
  RegisterArgOps<int32_t>(r);
  RegisterArgOps<int64_t>(r);
}

}  // namespace weft
