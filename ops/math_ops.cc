// Math ops: element-wise arithmetic, comparisons, Cast, MatMul and the
// reductions. OpDefs match TensorFlow 2.21's exactly (arg and attr names,
// types, defaults, allowed types, attr order); tests/ops/math_op_defs_test
// checks them against TensorFlow's own.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array_shape_fns.h"
#include "ops/registration.h"
#include "ops/type_lists.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// ---- Shape functions -------------------------------------------------------

// The shape two shapes agree on (unknown parts filled from either).
absl::StatusOr<PartialShape> MergeShapes(const PartialShape& a,
                                         const PartialShape& b) {
  if (!a.known_rank()) return b;
  if (!b.known_rank()) return a;
  auto mismatch = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("shapes ", a.DebugString(), " and ", b.DebugString(),
                     " must be equal"));
  };
  if (a.rank() != b.rank()) return mismatch();
  std::vector<int64_t> dims(a.rank());
  for (int i = 0; i < a.rank(); ++i) {
    if (a.dim(i) >= 0 && b.dim(i) >= 0 && a.dim(i) != b.dim(i)) {
      return mismatch();
    }
    dims[i] = a.dim(i) >= 0 ? a.dim(i) : b.dim(i);
  }
  return PartialShape(dims);
}

// Every input has the same shape, and so has the output (AddN).
absl::Status MergedInputsShape(InferenceContext* c) {
  PartialShape merged = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    absl::StatusOr<PartialShape> m = MergeShapes(merged, c->input(i));
    if (!m.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "all inputs must have the same shape: ", m.status().message()));
    }
    merged = *m;
  }
  c->set_output(0, merged);
  return absl::OkStatus();
}

// Equal / NotEqual: with incompatible_shape_error=false, shapes that do not
// broadcast give a scalar rather than an error.
absl::Status EqualityShape(InferenceContext* c) {
  bool shape_error = true;
  WEFT_RETURN_IF_ERROR(c->GetAttr("incompatible_shape_error", &shape_error));
  absl::StatusOr<PartialShape> s = BroadcastShapes(c->input(0), c->input(1));
  if (s.ok()) {
    // Unknown dims might still turn out not to broadcast.
    const bool known =
        c->input(0).IsFullyDefined() && c->input(1).IsFullyDefined();
    c->set_output(0, shape_error || known ? *s : PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  if (shape_error) return s.status();
  c->set_output(0, PartialShape({}));
  return absl::OkStatus();
}

absl::Status MatMulShape(InferenceContext* c) {
  bool ta = false, tb = false;
  WEFT_RETURN_IF_ERROR(c->GetAttr("transpose_a", &ta));
  WEFT_RETURN_IF_ERROR(c->GetAttr("transpose_b", &tb));
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 2));
  const PartialShape& a = c->input(0);
  const PartialShape& b = c->input(1);
  auto dim = [](const PartialShape& s, int i) {
    return s.known_rank() ? s.dim(i) : int64_t{-1};
  };
  const int64_t m = dim(a, ta ? 1 : 0);
  const int64_t ka = dim(a, ta ? 0 : 1);
  const int64_t kb = dim(b, tb ? 1 : 0);
  const int64_t n = dim(b, tb ? 0 : 1);
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Matrix size-incompatible: In[0]: ", a.DebugString(),
        ta ? " (transposed)" : "", ", In[1]: ", b.DebugString(),
        tb ? " (transposed)" : "", "; inner dimensions ", ka, " and ", kb,
        " must be equal"));
  }
  c->set_output(0, PartialShape({m, n}));
  return absl::OkStatus();
}

// Sum, Mean, Max, Min, Prod, All, Any.
absl::Status ReductionShape(InferenceContext* c) {
  bool keep_dims = false;
  WEFT_RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  const int rank = in.rank();
  array_shapes::Dims axis_values;
  if (!array_shapes::ConstInts(c, 1, &axis_values)) {
    // An empty axis list reduces nothing; else only keep_dims fixes the rank.
    const PartialShape& axes_shape = c->input(1);
    if (axes_shape.known_rank() && axes_shape.rank() == 1 &&
        axes_shape.dim(0) == 0) {
      c->set_output(0, in);
    } else if (keep_dims) {
      c->set_output(0, PartialShape(std::vector<int64_t>(rank, -1)));
    } else {
      c->set_output(0, PartialShape::UnknownRank());
    }
    return absl::OkStatus();
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : axis_values) {
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid reduction dimension ", axis, " for input with ",
                       rank, " dimension(s)"));
    }
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  std::vector<int64_t> out;
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      out.push_back(in.dim(i));
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// ArgMax / ArgMin: the input without the `dimension` axis.
absl::Status ArgOpShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  const int rank = in.rank();
  if (rank == 0) {  // as TensorFlow: the kernel, not the graph, rejects it
    c->set_output(0, PartialShape({}));
    return absl::OkStatus();
  }
  int64_t axis = 0;
  if (!array_shapes::ConstScalar(c, 1, &axis)) {
    c->set_output(0, PartialShape(std::vector<int64_t>(rank - 1, -1)));
    return absl::OkStatus();
  }
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected dimension in the range [", -rank, ", ", rank,
                     "), but got ", axis));
  }
  if (axis < 0) axis += rank;
  std::vector<int64_t> out;
  for (int i = 0; i < rank; ++i) {
    if (i != axis) out.push_back(in.dim(i));
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// ---- Registration helpers --------------------------------------------------

// z = f(x, y) with broadcasting; `types` is the allowed list of attr T.
void BinaryOp(OpRegistry* r, const char* name, const std::string& types,
              bool commutative = false) {
  OpDefBuilder b(name);
  b.Input("x: T").Input("y: T").Output("z: T").Attr("T: " + types);
  if (commutative) b.SetIsCommutative();
  r->Register(b, BroadcastBinaryOpShape);
}

// y = f(x), same shape.
void UnaryOp(OpRegistry* r, const char* name, const std::string& types) {
  r->Register(OpDefBuilder(name).Input("x: T").Output("y: T").Attr("T: " + types),
              UnchangedShape);
}

// Comparisons: bool result, broadcasting.
void ComparisonOp(OpRegistry* r, const char* name) {
  r->Register(OpDefBuilder(name)
                  .Input("x: T")
                  .Input("y: T")
                  .Output("z: bool")
                  .Attr("T: {float, double, int32, uint8, int16, int8, int64, "
                        "bfloat16, uint16, half, uint32, uint64}"),
              BroadcastBinaryOpShape);
}

// Gradients of unary ops: z = f(y, dy) for the op's output y. As in
// TensorFlow, the kernel needs only equal element counts.
void UnaryGradOp(OpRegistry* r, const char* name) {
  r->Register(OpDefBuilder(name)
                  .Input("y: T")
                  .Input("dy: T")
                  .Output("z: T")
                  .Attr("T: {bfloat16, half, float, double, complex64, "
                        "complex128}"),
              UnchangedShape);
}

void ReductionOp(OpRegistry* r, const char* name, const std::string& types) {
  OpDefBuilder b(name);
  b.Input("input: T")
      .Input("reduction_indices: Tidx")
      .Output("output: T")
      .Attr("keep_dims: bool = false")
      .Attr("T: " + types)
      .Attr("Tidx: {int32, int64} = int32");
  r->Register(b, ReductionShape);
}

void BoolReductionOp(OpRegistry* r, const char* name) {
  r->Register(OpDefBuilder(name)
                  .Input("input: bool")
                  .Input("reduction_indices: Tidx")
                  .Output("output: bool")
                  .Attr("keep_dims: bool = false")
                  .Attr("Tidx: {int32, int64} = int32"),
              ReductionShape);
}

void ArgOp(OpRegistry* r, const char* name, const char* tidx_types,
           const char* output_types) {
  r->Register(OpDefBuilder(name)
                  .Input("input: T")
                  .Input("dimension: Tidx")
                  .Output("output: output_type")
                  .Attr("T: {float, double, int32, uint8, int16, int8, int64, "
                        "bfloat16, uint16, half, uint32, uint64, qint8, quint8, "
                        "qint32, qint16, quint16, bool}")
                  .Attr(absl::StrCat("Tidx: ", tidx_types, " = int32"))
                  .Attr(absl::StrCat("output_type: ", output_types, " = int64")),
              ArgOpShape);
}

// TensorFlow's allowed-type lists, named by the ops that use them.
const char kAddTypes[] =
    "{bfloat16, half, float, double, uint8, int8, int16, int32, int64, "
    "complex64, complex128, string}";
const char kAddV2Types[] =
    "{bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, "
    "int16, int32, int64, complex64, complex128}";
const char kSubTypes[] =
    "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "int64, complex64, complex128, uint32, uint64}";
const char kMulDivTypes[] =
    "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64, complex64, complex128}";
const char kFloorModTypes[] =
    "{int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, "
    "half, float, double}";
const char kMaxMinTypes[] =
    "{bfloat16, half, float, double, int8, uint8, int16, uint16, int32, "
    "uint32, int64, uint64}";
const char kPowTypes[] =
    "{bfloat16, float, half, double, int8, int16, int32, int64, complex64, "
    "complex128}";
const char kSquaredDifferenceTypes[] =
    "{bfloat16, half, float, double, int32, int64, complex64, complex128}";
const char kSignedTypes[] =  // Neg, Reciprocal, Sign, Round
    "{bfloat16, half, float, double, int8, int16, int32, int64, complex64, "
    "complex128}";
const char kSquareTypes[] =
    "{bfloat16, half, float, double, int8, int16, int32, int64, uint8, "
    "uint16, uint32, uint64, complex64, complex128}";
const char kFloatComplexTypes[] =
    "{bfloat16, half, float, double, complex64, complex128}";
const char kAbsTypes[] =
    "{bfloat16, half, float, double, int8, int16, int32, int64}";
const char kFloatTypes[] = "{bfloat16, half, float, double}";
const char* const kSumTypes = kNumberTypes;  // Sum, Mean, Prod
const char kMaxTypes[] =  // Max, Min
    "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, "
    "half, uint32, uint64, qint8, quint8, qint32, qint16, quint16}";

}  // namespace

void RegisterMathOps(OpRegistry* r) {
  // Binary arithmetic.
  BinaryOp(r, "Add", kAddTypes);
  r->Register(OpDefBuilder("AddV2")
                  .Input("x: T")
                  .Input("y: T")
                  .Output("z: T")
                  .Attr(absl::StrCat("T: ", kAddV2Types))
                  .SetIsCommutative()
                  .SetIsAggregate(),
              BroadcastBinaryOpShape);
  BinaryOp(r, "Sub", kSubTypes);
  BinaryOp(r, "Mul", kMulDivTypes, /*commutative=*/true);
  BinaryOp(r, "RealDiv", kMulDivTypes);
  BinaryOp(r, "Div", kMulDivTypes);
  BinaryOp(r, "FloorDiv", kMulDivTypes);
  BinaryOp(r, "FloorMod", kFloorModTypes);
  BinaryOp(r, "Maximum", kMaxMinTypes);
  BinaryOp(r, "Minimum", kMaxMinTypes);
  BinaryOp(r, "Pow", kPowTypes);
  BinaryOp(r, "SquaredDifference", kSquaredDifferenceTypes,
           /*commutative=*/true);
  r->Register(OpDefBuilder("AddN")
                  .Input("inputs: N * T")
                  .Output("sum: T")
                  .Attr("N: int >= 1")
                  .Attr("T: {float, double, int32, uint8, int16, int8, "
                        "complex64, int64, qint8, quint8, qint32, bfloat16, "
                        "qint16, quint16, uint16, complex128, half, uint32, "
                        "uint64, variant}")
                  .SetIsCommutative()
                  .SetIsAggregate(),
              MergedInputsShape);

  // Unary.
  UnaryOp(r, "Neg", kSignedTypes);
  UnaryOp(r, "Square", kSquareTypes);
  for (const char* name : {"Sqrt", "Rsqrt", "Exp", "Log", "Tanh", "Sigmoid"}) {
    UnaryOp(r, name, kFloatComplexTypes);
  }
  UnaryOp(r, "Reciprocal", kSignedTypes);
  UnaryOp(r, "Abs", kAbsTypes);
  UnaryOp(r, "Sign", kSignedTypes);
  UnaryOp(r, "Floor", kFloatTypes);
  UnaryOp(r, "Ceil", kFloatTypes);
  UnaryOp(r, "Round", kSignedTypes);
  for (const char* name : {"TanhGrad", "SigmoidGrad", "RsqrtGrad", "SqrtGrad"}) {
    UnaryGradOp(r, name);
  }

  // Comparisons and logic.
  for (const char* name : {"Greater", "Less", "GreaterEqual", "LessEqual"}) {
    ComparisonOp(r, name);
  }
  for (const char* name : {"Equal", "NotEqual"}) {
    r->Register(OpDefBuilder(name)
                    .Input("x: T")
                    .Input("y: T")
                    .Output("z: bool")
                    .Attr("T: type")
                    .Attr("incompatible_shape_error: bool = true")
                    .SetIsCommutative(),
                EqualityShape);
  }
  for (const char* name : {"LogicalAnd", "LogicalOr"}) {
    r->Register(OpDefBuilder(name)
                    .Input("x: bool")
                    .Input("y: bool")
                    .Output("z: bool")
                    .SetIsCommutative(),
                BroadcastBinaryOpShape);
  }
  r->Register(OpDefBuilder("LogicalNot").Input("x: bool").Output("y: bool"),
              UnchangedShape);

  r->Register(OpDefBuilder("Cast")
                  .Input("x: SrcT")
                  .Output("y: DstT")
                  .Attr("SrcT: type")
                  .Attr("DstT: type")
                  .Attr("Truncate: bool = false"),
              UnchangedShape);

  r->Register(OpDefBuilder("MatMul")
                  .Input("a: T")
                  .Input("b: T")
                  .Output("product: T")
                  .Attr("transpose_a: bool = false")
                  .Attr("transpose_b: bool = false")
                  .Attr("T: {bfloat16, half, float, double, int32, int64, "
                        "uint8, uint16, uint32, uint64, complex64, "
                        "complex128}")
                  .Attr("grad_a: bool = false")
                  .Attr("grad_b: bool = false"),
              MatMulShape);
  // TensorFlow's grappler writes it into optimized graphs (MatMul and the
  // BiasAdd and activation after it, fused).
  r->Register(OpDefBuilder("_FusedMatMul")
                  .Input("a: T")
                  .Input("b: T")
                  .Input("args: num_args * T")
                  .Output("product: T")
                  .Attr("transpose_a: bool = false")
                  .Attr("transpose_b: bool = false")
                  .Attr("T: {bfloat16, half, float}")
                  .Attr("num_args: int >= 0")
                  .Attr("fused_ops: list(string) = []")
                  .Attr("epsilon: float = 0.0001")
                  .Attr("leakyrelu_alpha: float = 0.2"),
              MatMulShape);

  // Reductions.
  ReductionOp(r, "Sum", kSumTypes);
  ReductionOp(r, "Mean", kSumTypes);
  ReductionOp(r, "Prod", kSumTypes);
  ReductionOp(r, "Max", kMaxTypes);
  ReductionOp(r, "Min", kMaxTypes);
  BoolReductionOp(r, "All");
  BoolReductionOp(r, "Any");
  ArgOp(r, "ArgMax", "{int16, int32, int64}", "{int16, uint16, int32, int64}");
  ArgOp(r, "ArgMin", "{int32, int64}", "{int32, int64}");
}

}  // namespace weft
