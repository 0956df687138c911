// Math and NN ops issue 36 names, as TensorFlow declares them: Bincount,
// DenseBincount, SparseBincount, DynamicPartition, UniqueV2, InTopKV2,
// NthElement, CumulativeLogsumexp, Betainc, MaxPoolV2 (ksize and strides
// as inputs) and BatchMatMulV3 (mixed input and output dtypes). Shape
// functions give what known shapes and constant inputs fix. Registered by
// RegisterArrayMiscOps; kernels: ops/cpu/array_misc_kernels.cc names their
// files.
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/array_shape_fns.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using array_shapes::Dims;

// Dim i of s, or -1 (unknown) when s has no known rank.
int64_t DimOr(const PartialShape& s, int i) { return s.known_rank() ? s.dim(i) : -1; }

constexpr char kCountTypes[] = "T: {int32, int64, float, double}";

// [size] for Bincount; DenseBincount: [size] for a vector input, [rows,
// size] for a matrix.
absl::Status BincountShape(InferenceContext* c) {
  int64_t size = -1;
  array_shapes::ConstScalar(c, 1, &size);
  const PartialShape& in = c->input(0);
  if (c->node().op() != "Bincount" && in.known_rank() && in.rank() == 2) {
    c->set_output(0, PartialShape(Dims{in.dim(0), size}));
  } else if (c->node().op() == "SparseBincount" || (in.known_rank() && in.rank() > 2)) {
    c->set_output(0, PartialShape::UnknownRank());
  } else {
    c->set_output(0, PartialShape(Dims{size}));
  }
  return absl::OkStatus();
}

// Output i: [?] + data's dims past partitions' rank.
absl::Status DynamicPartitionShape(InferenceContext* c) {
  const PartialShape& data = c->input(0);
  const PartialShape& parts = c->input(1);
  PartialShape out = PartialShape::UnknownRank();
  if (data.known_rank() && parts.known_rank()) {
    if (data.rank() < parts.rank()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data ", data.DebugString(), " must have partitions ", parts.DebugString(),
          " as a prefix"));
    }
    Dims dims = {-1};
    for (int d = parts.rank(); d < data.rank(); ++d) dims.push_back(data.dim(d));
    out = PartialShape(dims);
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

// UniqueV2 and UniqueWithCountsV2 (its count output too).
absl::Status UniqueV2Shape(InferenceContext* c) {
  c->set_output(0, PartialShape::UnknownRank());
  c->set_output(1, PartialShape(Dims{-1}));
  if (c->num_outputs() > 2) c->set_output(2, PartialShape(Dims{-1}));
  return absl::OkStatus();
}

absl::Status InTopKShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  c->set_output(0, PartialShape(Dims{DimOr(c->input(0), 0)}));
  return absl::OkStatus();
}

absl::Status NthElementShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims dims = array_shapes::DimsOf(in);
  int64_t n = -1;
  if (array_shapes::ConstScalar(c, 1, &n) && dims.back() >= 0 && dims.back() <= n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input must have last dimension > n = ", n));
  }
  dims.pop_back();
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// The merged shape of a, b and x (each the others' or a scalar).
absl::Status BetaincShape(InferenceContext* c) {
  PartialShape out = c->input(0);
  for (int i = 1; i < 3; ++i) {
    const PartialShape& s = c->input(i);
    if (s.known_rank() && s.rank() == 0) continue;
    if (out.known_rank() && out.rank() == 0) {
      out = s;
      continue;
    }
    absl::StatusOr<PartialShape> merged = array_shapes::Merge(out, s);
    if (!merged.ok()) return merged.status();
    out = *merged;
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status MaxPoolV2Shape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  const PartialShape& in = c->input(0);
  c->set_output(0, PartialShape(Dims{DimOr(in, 0), -1, -1, DimOr(in, 3)}));
  return absl::OkStatus();
}

}  // namespace

void RegisterMathMiscOps(OpRegistry* r) {
  r->Register(OpDefBuilder("Bincount")
                  .Input("arr: int32")
                  .Input("size: int32")
                  .Input("weights: T")
                  .Output("bins: T")
                  .Attr(kCountTypes),
              BincountShape);
  r->Register(OpDefBuilder("DenseBincount")
                  .Input("input: Tidx")
                  .Input("size: Tidx")
                  .Input("weights: T")
                  .Output("output: T")
                  .Attr("Tidx: {int32, int64}")
                  .Attr(kCountTypes)
                  .Attr("binary_output: bool = false"),
              BincountShape);
  r->Register(OpDefBuilder("SparseBincount")
                  .Input("indices: int64")
                  .Input("values: Tidx")
                  .Input("dense_shape: int64")
                  .Input("size: Tidx")
                  .Input("weights: T")
                  .Output("output: T")
                  .Attr("Tidx: {int32, int64}")
                  .Attr(kCountTypes)
                  .Attr("binary_output: bool = false"),
              BincountShape);
  r->Register(OpDefBuilder("DynamicPartition")
                  .Input("data: T")
                  .Input("partitions: int32")
                  .Output("outputs: num_partitions * T")
                  .Attr("num_partitions: int >= 1")
                  .Attr("T: type"),
              DynamicPartitionShape);
  for (const bool counts : {false, true}) {
    OpDefBuilder b(counts ? "UniqueWithCountsV2" : "UniqueV2");
    b.Input("x: T").Input("axis: Taxis").Output("y: T").Output("idx: out_idx");
    if (counts) b.Output("count: out_idx");
    b.Attr("T: type")
        .Attr("Taxis: {int32, int64} = DT_INT64")
        .Attr("out_idx: {int32, int64} = DT_INT32");
    r->Register(b, UniqueV2Shape);
  }
  r->Register(OpDefBuilder("InTopKV2")
                  .Input("predictions: float")
                  .Input("targets: T")
                  .Input("k: T")
                  .Output("precision: bool")
                  .Attr("T: {int32, int64} = DT_INT32"),
              InTopKShape);
  r->Register(OpDefBuilder("NthElement")
                  .Input("input: T")
                  .Input("n: int32")
                  .Output("values: T")
                  .Attr("reverse: bool = false")
                  .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, "
                        "uint16, half, uint32, uint64}"),
              NthElementShape);
  r->Register(OpDefBuilder("CumulativeLogsumexp")
                  .Input("x: T")
                  .Input("axis: Tidx")
                  .Output("out: T")
                  .Attr("exclusive: bool = false")
                  .Attr("reverse: bool = false")
                  .Attr("T: {bfloat16, half, float, double}")
                  .Attr("Tidx: {int32, int64} = DT_INT32"),
              UnchangedShape);
  r->Register(OpDefBuilder("Betainc")
                  .Input("a: T")
                  .Input("b: T")
                  .Input("x: T")
                  .Output("z: T")
                  .Attr("T: {float, double}"),
              BetaincShape);
  r->Register(OpDefBuilder("MaxPoolV2")
                  .Input("input: T")
                  .Input("ksize: int32")
                  .Input("strides: int32")
                  .Output("output: T")
                  .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, "
                        "int8, uint16, qint8} = DT_FLOAT")
                  .Attr("padding: {'SAME', 'VALID'}")
                  .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"),
              MaxPoolV2Shape);
  // The gradients TensorFlow emits for MaxPoolV2, the window as inputs.
  for (const char* op : {"MaxPoolGradV2", "MaxPoolGradGradV2"}) {
    const bool grad_grad = std::string(op) == "MaxPoolGradGradV2";
    r->Register(OpDefBuilder(op)
                    .Input("orig_input: T")
                    .Input("orig_output: T")
                    .Input("grad: T")
                    .Input("ksize: int32")
                    .Input("strides: int32")
                    .Output("output: T")
                    .Attr("padding: {'SAME', 'VALID'}")
                    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                    .Attr(absl::StrCat("T: {float, double, int32, uint8, int16, int8, int64, "
                                       "bfloat16, uint16, half, uint32, uint64}",
                                       grad_grad ? "" : " = DT_FLOAT")),
                [grad_grad](InferenceContext* c) {
                  // The input's shape; the pooled (orig_output's) for GradGrad.
                  c->set_output(0, c->input(grad_grad ? 1 : 0));
                  return absl::OkStatus();
                });
  }
  constexpr char kMatTypes[] =
      "{bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
      "complex128}";
  r->Register(OpDefBuilder("BatchMatMulV3")
                  .Input("x: Ta")
                  .Input("y: Tb")
                  .Output("output: Tout")
                  .Attr(absl::StrCat("Ta: ", kMatTypes))
                  .Attr(absl::StrCat("Tb: ", kMatTypes))
                  .Attr("Tout: {bfloat16, half, float, double, int16, int32, int64, "
                        "complex64, complex128}")
                  .Attr("adj_x: bool = false")
                  .Attr("adj_y: bool = false")
                  .Attr("grad_x: bool = false")
                  .Attr("grad_y: bool = false"),
              UnknownShape);
}

}  // namespace weft
