// Gradients of reductions (Sum, Mean, Max, Min, Prod) and scans (Cumsum,
// Cumprod).
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::KeptShape;
using grad_internal::RangeOf;
using grad_internal::RankOf;
using grad_internal::ReductionGrad;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

absl::Status SumGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = ReductionGrad(s, in.x[0], in.x[1], in.dy[0]);
  return absl::OkStatus();
}

absl::Status MeanGrad(const Scope& s, In in, Dx dx) {
  DataType t = BaseType(in.dy[0].dtype);
  Output sum_grad = ReductionGrad(s, in.x[0], in.x[1], in.dy[0]);
  Output n_in = AddNode1(s, "Size", {in.x[0]}, {{"out_type", Attr(DT_INT32)}});
  Output n_out = AddNode1(s, "Size", {in.y[0]}, {{"out_type", Attr(DT_INT32)}});
  Output factor = RealDiv(s, Cast(s, n_in, t), Cast(s, n_out, t));
  (*dx)[0] = RealDiv(s, sum_grad, factor);
  return absl::OkStatus();
}

// Max / Min: the gradient is shared equally by the elements equal to the
// extremum (ties split it, as in TensorFlow).
absl::Status ExtremumGrad(const Scope& s, In in, Dx dx) {
  const Output &x = in.x[0], &axes = in.x[1];
  Output kept = KeptShape(s, x, axes);
  Output hit = Cast(s, Equal(s, Reshape(s, in.y[0], kept), x),
                    BaseType(x.dtype));
  Output count = Sum(s, hit, axes, /*keep_dims=*/true);
  (*dx)[0] = Mul(s, RealDiv(s, hit, count), Reshape(s, in.dy[0], kept));
  return absl::OkStatus();
}

// Prod: d prod / d x_i is the product of the other elements of x_i's
// reduction group, computed without division (so zeros are fine) as the
// product of exclusive cumulative products from both ends.
absl::Status ProdGrad(const Scope& s, In in, Dx dx) {
  const Output& x = in.x[0];
  Output zero = Const(s, 0);
  Output shape = Shape(s, x);
  Output rank = RankOf(s, x);
  Output axes = grad_internal::NonNegativeAxes(s, in.x[1], rank);
  std::vector<Output> diff =
      AddNode(s, "ListDiff", {RangeOf(s, zero, rank), axes});
  if (diff.size() != 2) return s.status();
  const Output& others = diff[0];
  // Reduced dims first, flattened to [reduced, others].
  Output perm = ConcatV2(s, {axes, others}, zero);
  Output permuted = Transpose(s, x, perm);
  Output n_reduced = Prod(s, GatherV2(s, shape, axes, zero), zero);
  Output n_others = Prod(s, GatherV2(s, shape, others, zero), zero);
  Output flat = Reshape(s, permuted, Pack(s, {n_reduced, n_others}));
  AttrList exclusive = {{"exclusive", Attr(true)}};
  AttrList exclusive_rev = {{"exclusive", Attr(true)}, {"reverse", Attr(true)}};
  Output left = AddNode1(s, "Cumprod", {flat, zero}, exclusive);
  Output right = AddNode1(s, "Cumprod", {flat, zero}, exclusive_rev);
  Output others_prod = Reshape(s, Mul(s, left, right), Shape(s, permuted));
  Output inv = AddNode1(s, "InvertPermutation", {perm});
  (*dx)[0] = Mul(s, ReductionGrad(s, x, in.x[1], in.dy[0]),
                 Transpose(s, others_prod, inv));
  return absl::OkStatus();
}

// The scan attrs with `reverse` flipped: a scan's gradient runs backwards.
absl::Status ReversedScanAttrs(const tensorflow::NodeDef& node,
                               AttrList* attrs) {
  bool exclusive = false, reverse = false;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(node, "exclusive", &exclusive));
  WEFT_RETURN_IF_ERROR(GetNodeAttr(node, "reverse", &reverse));
  *attrs = {{"exclusive", Attr(exclusive)}, {"reverse", Attr(!reverse)}};
  return absl::OkStatus();
}

absl::Status CumsumGrad(const Scope& s, In in, Dx dx) {
  AttrList attrs;
  WEFT_RETURN_IF_ERROR(ReversedScanAttrs(*in.node, &attrs));
  (*dx)[0] = AddNode1(s, "Cumsum", {in.dy[0], in.x[1]}, attrs);
  return absl::OkStatus();
}

// Cumprod: sum over the later outputs of g * y, divided by x (as TensorFlow
// does; not defined where x is 0).
absl::Status CumprodGrad(const Scope& s, In in, Dx dx) {
  AttrList attrs;
  WEFT_RETURN_IF_ERROR(ReversedScanAttrs(*in.node, &attrs));
  Output sums =
      AddNode1(s, "Cumsum", {Mul(s, in.y[0], in.dy[0]), in.x[1]}, attrs);
  (*dx)[0] = RealDiv(s, sums, in.x[0]);
  return absl::OkStatus();
}

}  // namespace

void RegisterReductionGrads(GradRegistry* r) {
  r->Register("Sum", SumGrad);
  r->Register("Mean", MeanGrad);
  r->Register("Max", ExtremumGrad);
  r->Register("Min", ExtremumGrad);
  r->Register("Prod", ProdGrad);
  r->Register("Cumsum", CumsumGrad);
  r->Register("Cumprod", CumprodGrad);
}

}  // namespace weft
