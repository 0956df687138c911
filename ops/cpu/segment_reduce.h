// The reductions of the segment kernels (math_segment_kernels.cc,
// segment_sorted_kernels.cc, sparse_segment_kernels.cc) and the checks on
// segment ids they share.
//
//   FloatIfNarrow<Half> is float: half and bfloat16 segments are reduced in
//   float and rounded once, as TensorFlow's sparse segment kernels do.
//
// Reducers: Init() (an empty segment's value before any Finish) and
// Combine(acc, x); Sum, Prod, Max (Init lowest) and Min (Init highest).
#ifndef WEFT_OPS_CPU_SEGMENT_REDUCE_H_
#define WEFT_OPS_CPU_SEGMENT_REDUCE_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/cpu/wrapping.h"
#include "runtime/core/tensor.h"
#include "runtime/core/types.h"

namespace weft {

// Integer sums and products wrap, as TensorFlow's (wrapping.h).
struct SumReducer {
  template <typename A>
  static A Init() { return A(0); }
  template <typename A>
  static A Combine(A a, A x) { return WrappingAddOp<A>()(a, x); }
};
struct ProdReducer {
  template <typename A>
  static A Init() { return A(1); }
  template <typename A>
  static A Combine(A a, A x) { return WrappingMulOp<A>()(a, x); }
};
struct MaxReducer {
  template <typename A>
  static A Init() { return std::numeric_limits<A>::lowest(); }
  template <typename A>
  static A Combine(A a, A x) { return x > a ? x : a; }
};
struct MinReducer {
  template <typename A>
  static A Init() { return std::numeric_limits<A>::max(); }
  template <typename A>
  static A Combine(A a, A x) { return x < a ? x : a; }
};

// The lowest/highest value of T itself (half's, not float's), as the
// initial value of an empty unsorted segment.
template <typename T, typename R>
T EmptySegmentValue() {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    if constexpr (std::is_same_v<R, MaxReducer>) {
      return FromFloat<T>(std::is_same_v<T, Half> ? -65504.0f : -3.38953139e38f);
    } else if constexpr (std::is_same_v<R, MinReducer>) {
      return FromFloat<T>(std::is_same_v<T, Half> ? 65504.0f : 3.38953139e38f);
    } else {
      return FromFloat<T>(R::template Init<float>());
    }
  } else {
    return R::template Init<T>();
  }
}

// The output rows of a sorted segment reduction (Segment*,
// SparseSegment*): num_segments when given (non-null; a scalar), else last
// id + 1 (0 when there are none; "segment ids must be >= 0" when
// negative). Then checks the ids are non-decreasing ("segment ids are not
// increasing") and inside the rows ("Segment id X out of range [0, rows),
// possibly because 'segment_ids' input is not sorted.", or `past_end` for
// an id past num_segments when set): TensorFlow's messages.
absl::Status SortedSegmentOutputRows(const Tensor* num_segments,
                                     const std::vector<int64_t>& ids,
                                     const char* past_end, int64_t* rows);

// The output shape of a segment reduction: `rows`, then data's dims from
// `first_inner_dim` on. INVALID_ARGUMENT when it would hold more than
// int64's elements (a huge id or num_segments).
absl::StatusOr<TensorShape> SegmentOutputShape(int64_t rows, const TensorShape& data,
                                               int first_inner_dim);

// [begin, end) of each run of equal ids, in order.
std::vector<std::pair<int64_t, int64_t>> SegmentRuns(
    const std::vector<int64_t>& ids);

// For each run of equal (sorted) ids, out's row ids[first] =
// finish(R-reduction of the rows row(i), i in the run, in order; count).
// Each row has `inner` elements; runs are spread over the intra-op pool.
template <typename T, typename R, typename RowFn, typename FinishFn>
void ReduceSortedRuns(OpKernelContext* c, const std::vector<int64_t>& ids,
                      int64_t inner, RowFn row, FinishFn finish, T* out) {
  using A = FloatIfNarrow<T>;
  if (inner == 0 || ids.empty()) return;
  const auto runs = SegmentRuns(ids);
  ParallelRange(
      c, static_cast<int64_t>(runs.size()),
      inner * static_cast<int64_t>(ids.size() / runs.size() + 1),
      [&](int64_t b, int64_t e) {
        std::vector<A> acc(inner);
        for (int64_t r = b; r < e; ++r) {
          const auto [first, last] = runs[r];
          const T* in = row(first);
          for (int64_t j = 0; j < inner; ++j) acc[j] = ToFloatIfNarrow(in[j]);
          for (int64_t i = first + 1; i < last; ++i) {
            in = row(i);
            for (int64_t j = 0; j < inner; ++j) {
              acc[j] = R::Combine(acc[j], ToFloatIfNarrow(in[j]));
            }
          }
          T* o = out + ids[first] * inner;
          for (int64_t j = 0; j < inner; ++j) {
            o[j] = FromFloatIfNarrow<T>(finish(acc[j], last - first));
          }
        }
      });
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_SEGMENT_REDUCE_H_
