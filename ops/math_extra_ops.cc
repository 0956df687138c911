// Math ops that gradients and optimizers emit: BatchMatMulV2, ClipByValue,
// Cumsum/Cumprod, DivNoNan, ReciprocalGrad and UnsortedSegmentSum. OpDefs
// match TensorFlow 2.21's (tests/ops/op_def_compat_test checks).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array_shape_fns.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// [..., m, k] x [..., k, n] -> [broadcast(...), m, n], with adj_x/adj_y
// swapping the last two dims of x/y.
absl::Status BatchMatMulShape(InferenceContext* c) {
  bool adj_x = false, adj_y = false;
  WEFT_RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  WEFT_RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(1, 2));
  const PartialShape& x = c->input(0);
  const PartialShape& y = c->input(1);
  if (!x.known_rank() || !y.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  const int rx = x.rank(), ry = y.rank();
  const int64_t m = x.dim(adj_x ? rx - 1 : rx - 2);
  const int64_t kx = x.dim(adj_x ? rx - 2 : rx - 1);
  const int64_t ky = y.dim(adj_y ? ry - 1 : ry - 2);
  const int64_t n = y.dim(adj_y ? ry - 2 : ry - 1);
  if (kx >= 0 && ky >= 0 && kx != ky) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Matrix size-incompatible: In[0]: ", x.DebugString(),
        ", In[1]: ", y.DebugString(), "; inner dimensions ", kx, " and ", ky,
        " must be equal"));
  }
  std::vector<int64_t> xb(x.dims().begin(), x.dims().end() - 2);
  std::vector<int64_t> yb(y.dims().begin(), y.dims().end() - 2);
  absl::StatusOr<PartialShape> batch =
      BroadcastShapes(PartialShape(xb), PartialShape(yb));
  if (!batch.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch dimensions of ", x.DebugString(), " and ", y.DebugString(),
        " do not broadcast"));
  }
  std::vector<int64_t> out(batch->dims().begin(), batch->dims().end());
  out.push_back(m);
  out.push_back(n);
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// [num_segments] + data.shape[rank(segment_ids):].
absl::Status UnsortedSegmentShape(InferenceContext* c) {
  const PartialShape& data = c->input(0);
  const PartialShape& ids = c->input(1);
  if (!data.known_rank() || !ids.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  if (ids.rank() > data.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "segment_ids ", ids.DebugString(), " must be a prefix of data ",
        data.DebugString()));
  }
  for (int i = 0; i < ids.rank(); ++i) {
    if (ids.dim(i) >= 0 && data.dim(i) >= 0 && ids.dim(i) != data.dim(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "segment_ids ", ids.DebugString(), " must be a prefix of data ",
          data.DebugString()));
    }
  }
  int64_t segments = -1;  // unknown unless num_segments is a known constant
  array_shapes::ConstScalar(c, 2, &segments);
  std::vector<int64_t> out = {segments};
  for (int i = ids.rank(); i < data.rank(); ++i) out.push_back(data.dim(i));
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

const char kNumberTypes[] =  // TensorFlow's "numbertype"
    "{float, double, int32, uint8, int16, int8, complex64, int64, qint8, "
    "quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, "
    "uint32, uint64}";

}  // namespace

// segment_ops.cc: the other segment reductions and their gradient ops.
void RegisterSegmentOps(OpRegistry* r);

void RegisterMathExtraOps(OpRegistry* r) {
  RegisterSegmentOps(r);
  r->Register(OpDefBuilder("BatchMatMulV2")
                  .Input("x: T")
                  .Input("y: T")
                  .Output("output: T")
                  .Attr("T: {bfloat16, half, float, double, int16, int32, "
                        "int64, uint8, uint16, uint32, uint64, complex64, "
                        "complex128}")
                  .Attr("adj_x: bool = false")
                  .Attr("adj_y: bool = false")
                  .Attr("grad_x: bool = false")
                  .Attr("grad_y: bool = false"),
              BatchMatMulShape);
  r->Register(OpDefBuilder("ClipByValue")
                  .Input("t: T")
                  .Input("clip_value_min: T")
                  .Input("clip_value_max: T")
                  .Output("output: T")
                  .Attr(absl::StrCat("T: ", kNumberTypes)),
              UnchangedShape);
  for (const char* name : {"Cumsum", "Cumprod"}) {
    r->Register(OpDefBuilder(name)
                    .Input("x: T")
                    .Input("axis: Tidx")
                    .Output("out: T")
                    .Attr("exclusive: bool = false")
                    .Attr("reverse: bool = false")
                    .Attr(absl::StrCat("T: ", kNumberTypes))
                    .Attr("Tidx: {int32, int64} = int32"),
                UnchangedShape);
  }
  r->Register(OpDefBuilder("DivNoNan")
                  .Input("x: T")
                  .Input("y: T")
                  .Output("z: T")
                  .Attr("T: {half, float, bfloat16, double, complex64, "
                        "complex128}"),
              BroadcastBinaryOpShape);
  r->Register(OpDefBuilder("ReciprocalGrad")
                  .Input("y: T")
                  .Input("dy: T")
                  .Output("z: T")
                  .Attr("T: {bfloat16, half, float, double, complex64, "
                        "complex128}"),
              UnchangedShape);
  r->Register(OpDefBuilder("UnsortedSegmentSum")
                  .Input("data: T")
                  .Input("segment_ids: Tindices")
                  .Input("num_segments: Tnumsegments")
                  .Output("output: T")
                  .Attr(absl::StrCat("T: ", kNumberTypes))
                  .Attr("Tindices: {int16, int32, int64}")
                  .Attr("Tnumsegments: {int32, int64} = int32"),
              UnsortedSegmentShape);
}

}  // namespace weft
