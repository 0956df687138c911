// Gradients of MatMul and BatchMatMulV2 (and V3's, the same), and of Einsum. The matmuls use the
// same four transpose cases; BatchMatMulV2 then sums each gradient over the
// batch dims its input was broadcast along. Einsum's gradients are Einsums.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using In = const GradInputs&;
using Dx = std::vector<Output>*;
using MatMulFn = std::function<Output(const Output&, const Output&, bool, bool)>;

// For c = op(a) @ op(b) (op: transpose when ta / tb) with gradient g:
// the unreduced gradients of a and b.
void MatMulCases(const MatMulFn& mm, const Output& a, const Output& b,
                 const Output& g, bool ta, bool tb, Output* da, Output* db) {
  if (!ta && !tb) {
    *da = mm(g, b, false, true);
    *db = mm(a, g, true, false);
  } else if (!ta && tb) {
    *da = mm(g, b, false, false);
    *db = mm(g, a, true, false);
  } else if (ta && !tb) {
    *da = mm(b, g, false, true);
    *db = mm(a, g, false, false);
  } else {
    *da = mm(b, g, true, true);
    *db = mm(g, a, true, true);
  }
}

absl::Status MatMulGrad(const Scope& s, In in, Dx dx) {
  bool ta = false, tb = false;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "transpose_a", &ta));
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "transpose_b", &tb));
  MatMulCases(
      [&s](const Output& x, const Output& y, bool tx, bool ty) {
        return MatMul(s, x, y, tx, ty);
      },
      grad_internal::ConjIfComplex(s, in.x[0]),
      grad_internal::ConjIfComplex(s, in.x[1]), in.dy[0], ta, tb, &(*dx)[0],
      &(*dx)[1]);
  return absl::OkStatus();
}

// x's shape without its last two (matrix) dims.
Output BatchShape(const Scope& s, const Output& x) {
  Output shape = Shape(s, x);
  Output n = Sub(s, grad_internal::RankOf(s, x), Const(s, 2));
  return Slice(s, shape, Const(s, {0}), ExpandDims(s, n, Const(s, 0)));
}

absl::Status BatchMatMulV2Grad(const Scope& s, In in, Dx dx) {
  bool adj_x = false, adj_y = false;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "adj_x", &adj_x));
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "adj_y", &adj_y));
  const Output &x = in.x[0], &y = in.x[1];
  Output gx, gy;
  MatMulCases(
      [&s](const Output& a, const Output& b, bool ta, bool tb) {
        return BatchMatMulV2(s, a, b, ta, tb);
      },
      x, y, in.dy[0], adj_x, adj_y, &gx, &gy);
  // gx, gy have the broadcast batch dims in front; those are also the dims
  // BroadcastGradientArgs names for the batch shapes.
  BroadcastArgs r =
      BroadcastGradientArgs(s, BatchShape(s, x), BatchShape(s, y));
  (*dx)[0] = Reshape(s, Sum(s, gx, r.r0), Shape(s, x));
  (*dx)[1] = Reshape(s, Sum(s, gy, r.r1), Shape(s, y));
  return absl::OkStatus();
}

Output Einsum(const Scope& s, const std::vector<Output>& inputs,
              const std::string& equation) {
  return AddNode1(s, "Einsum", {Input(inputs)}, {{"equation", Attr(equation)}});
}

// Einsum is linear in each operand: for y = einsum("a,b->o", A, B) with
// gradient g, dA = einsum("o,b->a", g, B) and dB = einsum("a,o->b", A, g),
// and for a transpose "a->o", dA = einsum("o->a", g). That holds when every
// label of an operand is in the output or the other operand and none
// repeats within one; other equations (diagonals, summed-out labels,
// broadcast ellipses) are UNIMPLEMENTED, naming the node.
absl::Status EinsumGrad(const Scope& s, In in, Dx dx) {
  std::string equation;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "equation", &equation));
  std::vector<std::string> sides = absl::StrSplit(equation, "->");
  std::vector<std::string> ops;
  if (sides.size() == 2) ops = absl::StrSplit(sides[0], ',');
  const std::string& out = sides.back();
  auto covered = [&](const std::string& a, const std::string& other) {
    for (char ch : a) {
      if (std::count(a.begin(), a.end(), ch) != 1 ||
          (out.find(ch) == std::string::npos && other.find(ch) == std::string::npos)) {
        return false;
      }
    }
    return true;
  };
  const bool ok = sides.size() == 2 && equation.find('.') == std::string::npos &&
                  ops.size() == in.x.size() &&
                  (ops.size() == 1 ? covered(ops[0], "")
                                   : ops.size() == 2 && covered(ops[0], ops[1]) &&
                                         covered(ops[1], ops[0]));
  if (!ok) {
    return absl::UnimplementedError(absl::StrCat(
        "gradient of Einsum node '", in.node->name(), "' with equation '",
        equation, "': only transposes and products whose every label is in "
        "the output or the other operand (no diagonals, ellipses or summed-out "
        "labels) are differentiated"));
  }
  const Output& g = in.dy[0];
  if (ops.size() == 1) {
    (*dx)[0] = Einsum(s, {g}, absl::StrCat(out, "->", ops[0]));
    return absl::OkStatus();
  }
  (*dx)[0] = Einsum(s, {g, in.x[1]}, absl::StrCat(out, ",", ops[1], "->", ops[0]));
  (*dx)[1] = Einsum(s, {in.x[0], g}, absl::StrCat(ops[0], ",", out, "->", ops[1]));
  return absl::OkStatus();
}

}  // namespace

void RegisterMatMulGrads(GradRegistry* r) {
  r->Register("Einsum", EinsumGrad);
  r->Register("MatMul", MatMulGrad);
  r->Register("BatchMatMulV2", BatchMatMulV2Grad);
  r->Register("BatchMatMulV3", BatchMatMulV2Grad);  // same dtypes: as V2
}

}  // namespace weft
