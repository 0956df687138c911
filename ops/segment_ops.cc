// Segment reductions beyond UnsortedSegmentSum (math_extra_ops.cc): the
// sorted Segment{Sum,Mean,Prod,Min,Max} and their V2 forms (num_segments
// given), UnsortedSegment{Max,Min,Prod}, SparseSegment{Sum,Mean,SqrtN}
// (with and without num_segments) and their gradients
// SparseSegment*Grad(V2). OpDefs match TensorFlow 2.21's
// (tests/ops/op_def_compat_test).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array_shape_fns.h"
#include "ops/registration.h"
#include "ops/type_lists.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// TensorFlow's "realnumbertypes".
const char kRealNumberTypes[] =
    "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, "
    "half, uint32, uint64}";
const char kSparseFloatTypes[] = "{bfloat16, half, float, double}";

// Output [n] + data.shape[rows_rank:], n the constant at input `count` or,
// when count < 0 or not constant, unknown.
absl::Status RowsShape(InferenceContext* c, int data, int rows_rank,
                       int count) {
  const PartialShape& in = c->input(data);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  if (in.rank() < rows_rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": data must have rank at least ", rows_rank, ", got ",
        in.DebugString()));
  }
  int64_t n = -1;
  if (count >= 0) array_shapes::ConstScalar(c, count, &n);
  std::vector<int64_t> out = {n};
  for (int i = rows_rank; i < in.rank(); ++i) out.push_back(in.dim(i));
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

void RegisterSorted(OpRegistry* r) {
  const std::string number = absl::StrCat("T: ", kNumberTypes);
  const std::string real = absl::StrCat("T: ", kRealNumberTypes);
  for (const char* name : {"SegmentSum", "SegmentMean", "SegmentProd",
                           "SegmentMin", "SegmentMax"}) {
    const bool minmax = std::string(name) == "SegmentMin" ||
                        std::string(name) == "SegmentMax";
    r->Register(OpDefBuilder(name)
                    .Input("data: T")
                    .Input("segment_ids: Tindices")
                    .Output("output: T")
                    .Attr(minmax ? real : number)
                    .Attr("Tindices: {int32, int64}"),
                [](InferenceContext* c) {
                  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
                  return RowsShape(c, 0, 1, -1);
                });
  }
  for (const char* name : {"SegmentSumV2", "SegmentProdV2", "SegmentMinV2",
                           "SegmentMaxV2"}) {
    const bool minmax = std::string(name) == "SegmentMinV2" ||
                        std::string(name) == "SegmentMaxV2";
    r->Register(OpDefBuilder(name)
                    .Input("data: T")
                    .Input("segment_ids: Tindices")
                    .Input("num_segments: Tnumsegments")
                    .Output("output: T")
                    .Attr(minmax ? real : number)
                    .Attr("Tindices: {int32, int64}")
                    .Attr("Tnumsegments: {int32, int64} = int32"),
                [](InferenceContext* c) {
                  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
                  return RowsShape(c, 0, 1, 2);
                });
  }
}

void RegisterUnsorted(OpRegistry* r) {
  for (const char* name : {"UnsortedSegmentMax", "UnsortedSegmentMin",
                           "UnsortedSegmentProd"}) {
    const bool prod = std::string(name) == "UnsortedSegmentProd";
    r->Register(OpDefBuilder(name)
                    .Input("data: T")
                    .Input("segment_ids: Tindices")
                    .Input("num_segments: Tnumsegments")
                    .Output("output: T")
                    .Attr(absl::StrCat("T: ", prod ? kNumberTypes : kRealNumberTypes))
                    .Attr("Tindices: {int32, int64}")
                    .Attr("Tnumsegments: {int32, int64} = int32"),
                [](InferenceContext* c) {
                  const PartialShape& ids = c->input(1);
                  return RowsShape(c, 0, ids.known_rank() ? ids.rank() : 0, 2);
                });
  }
}

void RegisterSparse(OpRegistry* r) {
  for (const char* reduce : {"Sum", "Mean", "SqrtN"}) {
    const std::string t =
        absl::StrCat("T: ", std::string(reduce) == "Sum" ? kRealNumberTypes
                                                          : kSparseFloatTypes);
    r->Register(OpDefBuilder(absl::StrCat("SparseSegment", reduce))
                    .Input("data: T")
                    .Input("indices: Tidx")
                    .Input("segment_ids: Tsegmentids")
                    .Output("output: T")
                    .Attr(t)
                    .Attr("Tidx: {int32, int64} = int32")
                    .Attr("Tsegmentids: {int32, int64} = int32")
                    .Attr("sparse_gradient: bool = false"),
                [](InferenceContext* c) {
                  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
                  WEFT_RETURN_IF_ERROR(c->WithRank(2, 1));
                  return RowsShape(c, 0, 1, -1);
                });
    r->Register(OpDefBuilder(absl::StrCat("SparseSegment", reduce, "WithNumSegments"))
                    .Input("data: T")
                    .Input("indices: Tidx")
                    .Input("segment_ids: Tsegmentids")
                    .Input("num_segments: Tnumsegments")
                    .Output("output: T")
                    .Attr(t)
                    .Attr("Tidx: {int32, int64} = int32")
                    .Attr("Tnumsegments: {int32, int64} = int32")
                    .Attr("Tsegmentids: {int32, int64} = int32")
                    .Attr("sparse_gradient: bool = false"),
                [](InferenceContext* c) {
                  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
                  WEFT_RETURN_IF_ERROR(c->WithRank(2, 1));
                  return RowsShape(c, 0, 1, 3);
                });
    const std::string float_t = absl::StrCat("T: ", kSparseFloatTypes);
    r->Register(OpDefBuilder(absl::StrCat("SparseSegment", reduce, "Grad"))
                    .Input("grad: T")
                    .Input("indices: Tidx")
                    .Input("segment_ids: Tsegmentids")
                    .Input("output_dim0: int32")
                    .Output("output: T")
                    .Attr(float_t)
                    .Attr("Tidx: {int32, int64} = int32")
                    .Attr("Tsegmentids: {int32, int64} = int32"),
                [](InferenceContext* c) { return RowsShape(c, 0, 1, 3); });
    r->Register(OpDefBuilder(absl::StrCat("SparseSegment", reduce, "GradV2"))
                    .Input("grad: T")
                    .Input("indices: Tidx")
                    .Input("segment_ids: Tsegmentids")
                    .Input("dense_output_dim0: int32")
                    .Output("output: T")
                    .Output("sorted_unique_indices: Tidx")
                    .Attr(float_t)
                    .Attr("Tidx: {int32, int64} = int32")
                    .Attr("Tsegmentids: {int32, int64} = int32"),
                [](InferenceContext* c) {
                  WEFT_RETURN_IF_ERROR(RowsShape(c, 0, 1, -1));
                  c->set_output(1, PartialShape({-1}));
                  return absl::OkStatus();
                });
  }
}

}  // namespace

void RegisterSegmentOps(OpRegistry* r) {
  RegisterSorted(r);
  RegisterUnsorted(r);
  RegisterSparse(r);
}

}  // namespace weft
