// Gradients of the segment reductions, as TensorFlow's math_grad defines
// them:
//   SegmentSum          dy gathered at segment_ids
//   SegmentMean         dy / count gathered at segment_ids (count: the
//                       SegmentSum of ones shaped [n, 1, ...])
//   SegmentMin/Max      dy shared among the rows equal to their segment's
//                       result (dy / how many), zero elsewhere
//   UnsortedSegmentMin/Max  the same through UnsortedSegmentSum, rows with
//                       a negative id (dropped) get zero
//   SparseSegment{Sum,Mean,SqrtN}(WithNumSegments)
//                       SparseSegment*Grad(dy, indices, segment_ids, rows
//                       of data)
// The ids, indices and num_segments inputs get no gradient.
#include <string>

#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::RankOf;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

absl::Status SegmentSumGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = GatherV2(s, in.dy[0], in.x[1], Const(s, 0));
  return absl::OkStatus();
}

// ones of shape ids.shape + [1] * (rank(data) - rank(ids)), data's dtype.
Output OnesForCount(const Scope& s, const Output& data, const Output& ids) {
  Output extra = Sub(s, RankOf(s, data), RankOf(s, ids));
  Output shape = ConcatV2(
      s, {Shape(s, ids), Fill(s, ExpandDims(s, extra, Const(s, 0)), Const(s, 1))},
      Const(s, 0));
  return Fill(s, shape, Cast(s, Const(s, 1), BaseType(data.dtype)));
}

absl::Status SegmentMeanGrad(const Scope& s, In in, Dx dx) {
  const Output &data = in.x[0], &ids = in.x[1];
  Output counts = AddNode1(s, "SegmentSum", {OnesForCount(s, data, ids), ids});
  (*dx)[0] = GatherV2(s, RealDiv(s, in.dy[0], counts), ids, Const(s, 0));
  return absl::OkStatus();
}

// params gathered at ids, zero where an id is negative; *kept: ids >= 0,
// shaped to broadcast against the gathered rows.
Output GatherDropNegatives(const Scope& s, const Output& params,
                           const Output& ids, Output* kept) {
  Output zero_ids = ZerosLike(s, ids);
  Output gathered = GatherV2(s, params, Maximum(s, ids, zero_ids), Const(s, 0));
  Output extra = Sub(s, RankOf(s, gathered), RankOf(s, ids));
  Output ones = Fill(s, ExpandDims(s, extra, Const(s, 0)), Const(s, 1));
  *kept = Reshape(s, GreaterEqual(s, ids, zero_ids),
                  ConcatV2(s, {Shape(s, ids), ones}, Const(s, 0)));
  return SelectV2(s, *kept, gathered, ZerosLike(s, gathered));
}

// Min/Max, sorted (num_segments invalid) or unsorted.
absl::Status MinOrMaxGrad(const Scope& s, In in, Dx dx, bool unsorted) {
  const Output &data = in.x[0], &ids = in.x[1];
  Output kept;
  Output at = unsorted ? GatherDropNegatives(s, in.y[0], ids, &kept)
                       : GatherV2(s, in.y[0], ids, Const(s, 0));
  Output selected = Equal(s, data, at);
  if (unsorted) selected = AddNode1(s, "LogicalAnd", {selected, kept});
  Output ones = Cast(s, selected, BaseType(data.dtype));
  Output count = unsorted
                     ? AddNode1(s, "UnsortedSegmentSum", {ones, ids, in.x[2]})
                     : AddNode1(s, "SegmentSum", {ones, ids});
  Output share = RealDiv(s, in.dy[0], count);
  Output spread = unsorted ? GatherDropNegatives(s, share, ids, &kept)
                           : GatherV2(s, share, ids, Const(s, 0));
  (*dx)[0] = SelectV2(s, selected, spread, ZerosLike(s, data));
  return absl::OkStatus();
}

GradFn SparseSegmentGrad(std::string grad_op) {
  return [grad_op](const Scope& s, In in, Dx dx) {
    const Output &data = in.x[0], &indices = in.x[1], &ids = in.x[2];
    Output rows = GatherV2(s, Shape(s, data), Const(s, 0), Const(s, 0));
    (*dx)[0] = AddNode1(s, grad_op, {in.dy[0], indices, ids, rows});
    return absl::OkStatus();
  };
}

}  // namespace

void RegisterSegmentGrads(GradRegistry* r) {
  r->Register("SegmentSum", SegmentSumGrad);
  r->Register("SegmentMean", SegmentMeanGrad);
  r->Register("SegmentMin", [](const Scope& s, In in, Dx dx) {
    return MinOrMaxGrad(s, in, dx, false);
  });
  r->Register("SegmentMax", [](const Scope& s, In in, Dx dx) {
    return MinOrMaxGrad(s, in, dx, false);
  });
  r->Register("UnsortedSegmentMin", [](const Scope& s, In in, Dx dx) {
    return MinOrMaxGrad(s, in, dx, true);
  });
  r->Register("UnsortedSegmentMax", [](const Scope& s, In in, Dx dx) {
    return MinOrMaxGrad(s, in, dx, true);
  });
  for (const char* reduce : {"Sum", "Mean", "SqrtN"}) {
    const std::string base = std::string("SparseSegment") + reduce;
    r->Register(base, SparseSegmentGrad(base + "Grad"));
    r->Register(base + "WithNumSegments", SparseSegmentGrad(base + "Grad"));
  }
}

}  // namespace weft
