// Array ops that fit no other family, as TensorFlow declares them: Empty,
// EnsureShape, Bitcast, Reverse (v1, a bool per dim), LinSpace,
// UnravelIndex, LowerBound / UpperBound (searchsorted) and the layout
// helpers Keras graphs emit for NCHW models (DataFormatDimMap,
// DataFormatVecPermute). Shape functions give what known shapes and
// constant inputs fix; RegisterArrayMiscOps also registers the ops of
// math_misc_ops.cc. Kernels: ops/cpu/array_misc_kernels.cc and the files
// it names.
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

// Bitcast's dtypes (TensorFlow's list; the quantized ones are declared but
// have no kernel here).
constexpr char kBitcastTypes[] =
    "{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, "
    "uint64, int8, int16, complex64, complex128, qint8, quint8, qint16, "
    "quint16, qint32}";

absl::Status EmptyShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  c->set_output(0, c->InputAsShape(0));
  return absl::OkStatus();
}

absl::Status EnsureShapeShape(InferenceContext* c) {
  PartialShape want;
  WEFT_RETURN_IF_ERROR(c->GetAttr("shape", &want));
  absl::StatusOr<PartialShape> merged = array_shapes::Merge(c->input(0), want);
  if (!merged.ok()) return merged.status();
  c->set_output(0, *merged);
  return absl::OkStatus();
}

// Equal sizes keep the shape; a wider input gains a last dim of
// in/out elements; a narrower one loses its last dim, which must be
// out/in.
absl::Status BitcastShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  DataType from = c->input_type(0), to = DT_INVALID;
  WEFT_RETURN_IF_ERROR(c->GetAttr("type", &to));
  const int64_t in_size = DataTypeSize(from), out_size = DataTypeSize(to);
  if (!in.known_rank() || in_size == 0 || out_size == 0) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims dims = array_shapes::DimsOf(in);
  if (in_size > out_size) {
    dims.push_back(in_size / out_size);
  } else if (in_size < out_size) {
    if (dims.empty()) {
      return absl::InvalidArgumentError(
          "Cannot bitcast from a scalar to a larger type");
    }
    const int64_t last = dims.back();
    if (last >= 0 && last != out_size / in_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Cannot bitcast due to shape. ", last, " does not match ",
          out_size / in_size));
    }
    dims.pop_back();
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status LinSpaceShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));
  WEFT_RETURN_IF_ERROR(c->WithRank(2, 0));
  int64_t num = -1;
  if (array_shapes::ConstScalar(c, 2, &num) && num <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Requires num > 0: ", num));
  }
  c->set_output(0, PartialShape(Dims{num}));
  return absl::OkStatus();
}

// [len(dims)] for a scalar index, else [len(dims), indices.size].
absl::Status UnravelIndexShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  const PartialShape& indices = c->input(0);
  const int64_t n = DimOr(c->input(1), 0);
  if (!indices.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
  } else if (indices.rank() == 0) {
    c->set_output(0, PartialShape(Dims{n}));
  } else {
    int64_t count = 1;
    for (int64_t d : array_shapes::DimsOf(indices)) count = array_shapes::MulDims(count, d);
    c->set_output(0, PartialShape(Dims{n, count}));
  }
  return absl::OkStatus();
}

absl::Status SearchSortedShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 2));
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

absl::Status ReverseShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  const PartialShape& in = c->input(0);
  const int64_t n = DimOr(c->input(1), 0);
  if (in.known_rank() && n >= 0 && n != in.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'dims' must have the same number of elements as 'tensor'. "
        "tensor has rank ", in.rank(), ", dims has ", n, " elements"));
  }
  return UnchangedShape(c);
}

constexpr char kFormat[] = "src_format: string = 'NHWC'";
constexpr char kDstFormat[] = "dst_format: string = 'NCHW'";

}  // namespace

// math_misc_ops.cc: Bincount, DynamicPartition, UniqueV2, BatchMatMulV3, ...
void RegisterMathMiscOps(OpRegistry* r);

void RegisterArrayMiscOps(OpRegistry* r) {
  RegisterMathMiscOps(r);
  r->Register(OpDefBuilder("Empty")
                  .Input("shape: int32")
                  .Output("output: dtype")
                  .Attr("dtype: type")
                  .Attr("init: bool = false")
                  .SetIsStateful(),
              EmptyShape);
  r->Register(OpDefBuilder("EnsureShape")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr("shape: shape")
                  .Attr("T: type"),
              EnsureShapeShape);
  r->Register(OpDefBuilder("Bitcast")
                  .Input("input: T")
                  .Output("output: type")
                  .Attr(absl::StrCat("T: ", kBitcastTypes))
                  .Attr(absl::StrCat("type: ", kBitcastTypes)),
              BitcastShape);
  r->Register(OpDefBuilder("Reverse")
                  .Input("tensor: T")
                  .Input("dims: bool")
                  .Output("output: T")
                  .Attr("T: {uint8, int8, uint16, int16, uint32, int32, uint64, "
                        "int64, bool, bfloat16, half, float, double, complex64, "
                        "complex128, string}"),
              ReverseShape);
  r->Register(OpDefBuilder("LinSpace")
                  .Input("start: T")
                  .Input("stop: T")
                  .Input("num: Tidx")
                  .Output("output: T")
                  .Attr("T: {bfloat16, half, float, double}")
                  .Attr("Tidx: {int32, int64} = DT_INT32"),
              LinSpaceShape);
  r->Register(OpDefBuilder("UnravelIndex")
                  .Input("indices: Tidx")
                  .Input("dims: Tidx")
                  .Output("output: Tidx")
                  .Attr("Tidx: {int32, int64} = DT_INT32"),
              UnravelIndexShape);
  for (const char* op : {"LowerBound", "UpperBound"}) {
    r->Register(OpDefBuilder(op)
                    .Input("sorted_inputs: T")
                    .Input("values: T")
                    .Output("output: out_type")
                    .Attr("T: type")
                    .Attr("out_type: {int32, int64} = DT_INT32"),
                SearchSortedShape);
  }
  for (const char* op : {"DataFormatDimMap", "DataFormatVecPermute"}) {
    r->Register(OpDefBuilder(op)
                    .Input("x: T")
                    .Output("y: T")
                    .Attr("T: {int32, int64} = DT_INT32")
                    .Attr(kFormat)
                    .Attr(kDstFormat),
                UnchangedShape);
  }
}

}  // namespace weft
