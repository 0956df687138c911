// Reduction kernels (Sum, Mean, Prod, Max, Min, All, Any) over any axis set.
//
// A ReductionPlan (reduction_plan.h) turns the axes into alternating groups
// of kept and reduced dims. The innermost reduced group is folded first, in
// [outer, reduced, inner] form, then the next, until none is left:
//
//   inner == 1: each output is one contiguous row     (Sum over the last axis)
//   inner  > 1: rows are accumulated into the output  (Sum over the batch)
//
// Both loops are Eigen array expressions (vectorised); they run over
// threads by outer rows or inner chunks, and a reduction to a few values
// splits the reduced axis into partial results instead.
//
// A Reducer says how to fold:
//   struct SumReducer {
//     static constexpr int kCost = 1;
//     template <typename T> static T Identity();       // value of an empty fold
//     template <typename V> static auto Fold(const V& v);  // v: a row, to a scalar
//     template <typename A, typename B>
//     static void Accumulate(A& acc, const B& row);    // acc = fold(acc, row)
//   };
//
// Include only from ops/cpu/*.cc: it pulls in Eigen.
#ifndef WEFT_OPS_CPU_REDUCTION_OPS_H_
#define WEFT_OPS_CPU_REDUCTION_OPS_H_

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/reduction_plan.h"
#include "ops/cpu/wrapping.h"
#include "runtime/core/status.h"

namespace weft {

struct SumReducer {
  static constexpr int kCost = 1;
  template <typename T>
  static T Identity() { return T(0); }
  template <typename V>
  static auto Fold(const V& v) { return WrapSum(v); }
  template <typename A, typename B>
  static void Accumulate(A& acc, const B& row) { acc = WrapAdd(acc, row); }
};

struct ProdReducer {
  static constexpr int kCost = 1;
  template <typename T>
  static T Identity() { return T(1); }
  template <typename V>
  static auto Fold(const V& v) { return WrapProd(v); }
  template <typename A, typename B>
  static void Accumulate(A& acc, const B& row) { acc = WrapMul(acc, row); }
};

// Max and Min propagate NaN, as TensorFlow's.
struct MaxReducer {
  static constexpr int kCost = 1;
  template <typename T>
  static T Identity() {
    return std::numeric_limits<T>::has_infinity
               ? -std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::lowest();
  }
  template <typename V>
  static auto Fold(const V& v) { return v.template maxCoeff<Eigen::PropagateNaN>(); }
  template <typename A, typename B>
  static void Accumulate(A& acc, const B& row) {
    using T = typename A::Scalar;
    acc = acc.binaryExpr(row, Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>());
  }
};

struct MinReducer {
  static constexpr int kCost = 1;
  template <typename T>
  static T Identity() {
    return std::numeric_limits<T>::has_infinity
               ? std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::max();
  }
  template <typename V>
  static auto Fold(const V& v) { return v.template minCoeff<Eigen::PropagateNaN>(); }
  template <typename A, typename B>
  static void Accumulate(A& acc, const B& row) {
    using T = typename A::Scalar;
    acc = acc.binaryExpr(row, Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>());
  }
};

struct AllReducer {
  static constexpr int kCost = 1;
  template <typename T>
  static T Identity() { return true; }
  template <typename V>
  static bool Fold(const V& v) { return v.all(); }
  template <typename A, typename B>
  static void Accumulate(A& acc, const B& row) { acc = acc && row; }
};

struct AnyReducer {
  static constexpr int kCost = 1;
  template <typename T>
  static T Identity() { return false; }
  template <typename V>
  static bool Fold(const V& v) { return v.any(); }
  template <typename A, typename B>
  static void Accumulate(A& acc, const B& row) { acc = acc || row; }
};

// Columns handled together when accumulating rows: the partial results
// stay in L1 while the rows stream past.
inline constexpr int64_t kReduceChunk = 4096;
// Rows folded before their partial result joins the total.
inline constexpr int64_t kReduceBlockRows = 128;

// out[o, i] = fold over r of in[o, r, i]; rows >= 1. With c == nullptr it
// runs on the calling thread.
template <typename R, typename T>
void ReduceOuterRowsInner(OpKernelContext* c, const T* in, T* out,
                          int64_t outer, int64_t rows, int64_t inner) {
  const int64_t threads =
      c == nullptr ? 1 : c->intra_op_pool()->NumThreads() + 1;
  const bool split_rows = threads > 1 && outer == 1 && rows >= 4 * threads &&
                          rows * inner * R::kCost >= 4 * kParallelMinCost &&
                          (inner + kReduceChunk - 1) / kReduceChunk < threads;
  if (split_rows) {
    // Few outputs, many rows: fold row blocks into partials, then those.
    const int64_t blocks = std::min<int64_t>(4 * threads, rows);
    std::unique_ptr<T[]> partial(new T[blocks * inner]);
    ParallelRange(c, blocks, rows / blocks * inner * R::kCost,
                  [&](int64_t b, int64_t e) {
                    for (int64_t k = b; k < e; ++k) {
                      const int64_t r0 = rows * k / blocks;
                      const int64_t r1 = rows * (k + 1) / blocks;
                      ReduceOuterRowsInner<R>(nullptr, in + r0 * inner,
                                              partial.get() + k * inner, 1,
                                              r1 - r0, inner);
                    }
                  });
    ReduceOuterRowsInner<R>(nullptr, partial.get(), out, 1, blocks, inner);
    return;
  }
  if (inner == 1) {
    auto fold_rows = [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        out[o] = R::Fold(ConstArrayMap<T>(in + o * rows, rows));
      }
    };
    if (c == nullptr) {
      fold_rows(0, outer);
    } else {
      ParallelRange(c, outer, rows * R::kCost + 8, fold_rows);
    }
    return;
  }
  const int64_t chunks = (inner + kReduceChunk - 1) / kReduceChunk;
  // Folds rows [r0, r1) of one chunk into `acc`.
  auto fold_block = [](const T* base, int64_t stride, int64_t r0, int64_t r1,
                       ArrayMap<T>& acc) {
    acc = ConstArrayMap<T>(base + r0 * stride, acc.size());
    for (int64_t r = r0 + 1; r < r1; ++r) {
      R::Accumulate(acc, ConstArrayMap<T>(base + r * stride, acc.size()));
    }
  };
  auto fold_chunks = [&](int64_t b, int64_t e) {
    // Long columns are folded in blocks of kReduceBlockRows, then the block
    // results: float sums then round off like sqrt(rows), not like rows.
    T block_buf[kReduceChunk];
    for (int64_t u = b; u < e; ++u) {
      const int64_t o = u / chunks;
      const int64_t col = (u % chunks) * kReduceChunk;
      const int64_t len = std::min(kReduceChunk, inner - col);
      const T* base = in + o * rows * inner + col;
      ArrayMap<T> acc(out + o * inner + col, len);
      fold_block(base, inner, 0, std::min(rows, kReduceBlockRows), acc);
      ArrayMap<T> block(block_buf, len);
      for (int64_t r0 = kReduceBlockRows; r0 < rows; r0 += kReduceBlockRows) {
        fold_block(base, inner, r0, std::min(rows, r0 + kReduceBlockRows), block);
        R::Accumulate(acc, block);
      }
    }
  };
  if (c == nullptr) {
    fold_chunks(0, outer * chunks);
  } else {
    ParallelRange(c, outer * chunks,
                  rows * std::min(kReduceChunk, inner) * R::kCost, fold_chunks);
  }
}

// Reduces `in` (laid out as plan.dims) into `out` (plan.out_shape's
// elements), one reduced group at a time, innermost first.
template <typename R, typename T>
absl::Status ReduceWithPlan(OpKernelContext* c, const ReductionPlan& plan,
                            const T* in, T* out) {
  const int64_t out_n = plan.out_shape.num_elements();
  if (out_n == 0) return absl::OkStatus();
  std::vector<int64_t> dims(plan.dims.begin(), plan.dims.end());
  std::vector<bool> reduced(plan.reduced.begin(), plan.reduced.end());
  for (int64_t d : dims) {
    if (d == 0) {  // nothing to fold: every output is the identity
      std::fill(out, out + out_n, R::template Identity<T>());
      return absl::OkStatus();
    }
  }
  if (plan.IsIdentity()) {
    std::memcpy(out, in, out_n * sizeof(T));
    return absl::OkStatus();
  }
  Tensor temps[2];
  const T* src = in;
  for (int stage = 0;; ++stage) {
    int j = static_cast<int>(dims.size()) - 1;
    while (!reduced[j]) --j;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < j; ++i) outer *= dims[i];
    for (size_t i = j + 1; i < dims.size(); ++i) inner *= dims[i];
    bool last = true;
    for (int i = 0; i < j; ++i) last = last && !reduced[i];
    T* dst = out;
    if (!last) {
      Tensor& t = temps[stage % 2];
      WEFT_RETURN_IF_ERROR(c->allocate_temp(DataTypeToEnum<T>::value,
                                            TensorShape({outer * inner}), &t));
      dst = t.data<T>();
    }
    ReduceOuterRowsInner<R>(c, src, dst, outer, dims[j], inner);
    if (last) return absl::OkStatus();
    src = dst;
    // Drop group j; its kept neighbours become one group.
    dims.erase(dims.begin() + j);
    reduced.erase(reduced.begin() + j);
    if (j > 0 && j < static_cast<int>(dims.size()) && !reduced[j - 1] &&
        !reduced[j]) {
      dims[j - 1] *= dims[j];
      dims.erase(dims.begin() + j);
      reduced.erase(reduced.begin() + j);
    }
  }
}

// The plan for reducing input 0 over the axes in input 1, or nullopt when
// the kernel is done: the axes were bad (the error is set on `c`), or no
// axis is folded and input 0 was forwarded as output 0, reshaped.
inline std::optional<ReductionPlan> PlanReduction(OpKernelContext* c,
                                                  bool keep_dims) {
  const Tensor& in = c->input(0);
  absl::StatusOr<ReductionPlan> plan =
      MakeReductionPlan(in.shape(), c->input(1), keep_dims);
  if (!plan.ok()) {
    c->SetStatus(plan.status());
    return std::nullopt;
  }
  if (plan->IsIdentity() && in.NumElements() > 0) {
    c->set_output(0, in.Reshaped(plan->out_shape));
    return std::nullopt;
  }
  return *std::move(plan);
}

// Sum / Prod / Max / Min / All / Any; Mean when kMean (sum, then divide by
// the count: integers truncate, like TensorFlow; an empty float mean is NaN
// and an empty integer mean 0).
template <typename R, typename T, bool kMean = false>
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    std::optional<ReductionPlan> plan = PlanReduction(c, keep_dims_);
    if (!plan) return;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, plan->out_shape, &out));
    OP_REQUIRES_OK(c, ReduceWithPlan<R>(c, *plan, in.data<T>(), out->data<T>()));
    if constexpr (kMean) {
      ArrayMap<T> o(out->data<T>(), out->NumElements());
      const int64_t count = plan->reduced_count;
      if constexpr (std::is_integral_v<T>) {
        if (count == 0) {
          o.setZero();
        } else {
          o = o / static_cast<T>(count);
        }
      } else {
        o = o / static_cast<T>(count);  // 0 / 0 = NaN when empty
      }
    }
  }

 private:
  bool keep_dims_ = false;
};

}  // namespace weft

#endif  // WEFT_OPS_CPU_REDUCTION_OPS_H_
