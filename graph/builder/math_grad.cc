// Gradients of math ops: elementwise (broadcast-aware), ClipByValue, AddN
// and Cast. MatMuls are in matmul_grad.cc, reductions and scans in
// reduction_grad.cc.
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::ConjIfComplex;
using grad_internal::ReduceForBroadcast;
using grad_internal::ScalarLike;

using Scope_ = const Scope&;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

// A broadcasting binary op: `f` computes the unreduced gradients of x, y.
template <typename F>
GradFn Binary(F f) {
  return [f](Scope_ s, In in, Dx dx) {
    const Output &x = in.x[0], &y = in.x[1], &g = in.dy[0];
    Output gx, gy;
    f(s, x, y, in.y[0], g, &gx, &gy);
    ReduceForBroadcast(s, x, y, &gx, &gy);
    (*dx)[0] = gx;
    (*dx)[1] = gy;
    return absl::OkStatus();
  };
}

// A unary op: dx = f(scope, x, y, g).
template <typename F>
GradFn Unary(F f) {
  return [f](Scope_ s, In in, Dx dx) {
    (*dx)[0] = f(s, in.x[0], in.y[0], in.dy[0]);
    return absl::OkStatus();
  };
}

void AddGrad(Scope_, const Output&, const Output&, const Output&,
             const Output& g, Output* gx, Output* gy) {
  *gx = g;
  *gy = g;
}

// Maximum / Minimum: the gradient goes to x where `pick(x, y)` holds.
template <Output (*Pick)(const Scope&, const Output&, const Output&)>
void SelectGrad(Scope_ s, const Output& x, const Output& y, const Output&,
                const Output& g, Output* gx, Output* gy) {
  Output mask = Cast(s, Pick(s, x, y), BaseType(g.dtype));
  *gx = Mul(s, g, mask);
  *gy = Sub(s, g, *gx);
}

void RegisterBinaryGrads(GradRegistry* r) {
  r->Register("Add", Binary(AddGrad));
  r->Register("AddV2", Binary(AddGrad));
  r->Register("Sub", Binary([](Scope_ s, const Output&, const Output&,
                               const Output&, const Output& g, Output* gx,
                               Output* gy) {
    *gx = g;
    *gy = Neg(s, g);
  }));
  r->Register("Mul", Binary([](Scope_ s, const Output& x, const Output& y,
                               const Output&, const Output& g, Output* gx,
                               Output* gy) {
    *gx = Mul(s, g, ConjIfComplex(s, y));
    *gy = Mul(s, ConjIfComplex(s, x), g);
  }));
  // Div is RealDiv for the float types gradients are taken in.
  for (const char* op : {"RealDiv", "Div"}) {
    r->Register(op, Binary([](Scope_ s, const Output& x, const Output& y,
                              const Output&, const Output& g, Output* gx,
                              Output* gy) {
      const Output xc = ConjIfComplex(s, x), yc = ConjIfComplex(s, y);
      *gx = RealDiv(s, g, yc);
      *gy = Mul(s, g, RealDiv(s, RealDiv(s, Neg(s, xc), yc), yc));
    }));
  }
  // As RealDiv, with DivNoNan throughout: no gradient where y == 0.
  r->Register("DivNoNan", Binary([](Scope_ s, const Output& x, const Output& y,
                                    const Output&, const Output& g, Output* gx,
                                    Output* gy) {
    auto div = [&s](const Output& a, const Output& b) {
      return AddNode1(s, "DivNoNan", {a, b});
    };
    *gx = div(g, y);
    *gy = Mul(s, g, div(div(Neg(s, x), y), y));
  }));
  r->Register("SquaredDifference",
              Binary([](Scope_ s, const Output& x, const Output& y,
                        const Output&, const Output& g, Output* gx,
                        Output* gy) {
                // d/dx (x - y)^2 = 2 (x - y); d/dy is its negation.
                Output two = ScalarLike(s, 2.f, g.dtype);
                *gx = Mul(s, g, Mul(s, two, Sub(s, x, y)));
                *gy = Neg(s, *gx);
              }));
  r->Register("Maximum", Binary(SelectGrad<GreaterEqual>));
  r->Register("Minimum", Binary(SelectGrad<LessEqual>));
  r->Register("Pow", Binary([](Scope_ s, const Output& x, const Output& y,
                               const Output& z, const Output& g, Output* gx,
                               Output* gy) {
    // dz/dx = y * x^(y-1); dz/dy = z * log(x), taken as 0 where x <= 0.
    DataType t = BaseType(g.dtype);
    Output one = ScalarLike(s, 1.f, t), zero = ScalarLike(s, 0.f, t);
    *gx = Mul(s, g, Mul(s, y, Pow(s, x, Sub(s, y, one))));
    Output positive = Greater(s, x, zero);
    Output safe_x = AddNode1(s, "SelectV2", {positive, x, OnesLike(s, x)});
    Output log_x = AddNode1(s, "SelectV2",
                            {positive, Log(s, safe_x), ZerosLike(s, x)});
    *gy = Mul(s, g, Mul(s, z, log_x));
  }));
}

void RegisterUnaryGrads(GradRegistry* r) {
  r->Register("Abs", Unary([](Scope_ s, const Output& x, const Output&,
                              const Output& g) { return Mul(s, g, Sign(s, x)); }));
  r->Register("Neg", Unary([](Scope_ s, const Output&, const Output&,
                              const Output& g) { return Neg(s, g); }));
  r->Register("Square", Unary([](Scope_ s, const Output& x, const Output&,
                                 const Output& g) {
    return Mul(s, g, Mul(s, ConjIfComplex(s, x), ScalarLike(s, 2.f, g.dtype)));
  }));
  r->Register("Sqrt", Unary([](Scope_ s, const Output&, const Output& y,
                               const Output& g) {
    return RealDiv(s, Mul(s, g, ScalarLike(s, 0.5f, g.dtype)), y);
  }));
  r->Register("Rsqrt", Unary([](Scope_ s, const Output&, const Output& y,
                                const Output& g) {
    Output y3 = Mul(s, Square(s, y), y);
    return Mul(s, g, Mul(s, y3, ScalarLike(s, -0.5f, g.dtype)));
  }));
  r->Register("Exp", Unary([](Scope_ s, const Output&, const Output& y,
                              const Output& g) {
    return Mul(s, g, ConjIfComplex(s, y));
  }));
  r->Register("Log", Unary([](Scope_ s, const Output& x, const Output&,
                              const Output& g) {
    return RealDiv(s, g, ConjIfComplex(s, x));
  }));
  r->Register("Reciprocal", Unary([](Scope_ s, const Output&, const Output& y,
                                     const Output& g) {
    return Neg(s, Mul(s, g, Square(s, y)));
  }));
  r->Register("Tanh", Unary([](Scope_ s, const Output&, const Output& y,
                               const Output& g) {
    return Mul(s, g, Sub(s, ScalarLike(s, 1.f, g.dtype), Square(s, y)));
  }));
  r->Register("Sigmoid", Unary([](Scope_ s, const Output&, const Output& y,
                                  const Output& g) {
    return Mul(s, g, Mul(s, y, Sub(s, ScalarLike(s, 1.f, g.dtype), y)));
  }));
}

absl::Status AddNGrad(Scope_, In in, Dx dx) {
  for (auto& d : *dx) d = in.dy[0];
  return absl::OkStatus();
}

// ClipByValue(t, lo, hi): t's gradient where lo <= t <= hi; lo's where
// t < lo and hi's where t > hi, each reduced to its own (broadcast) shape.
absl::Status ClipByValueGrad(Scope_ s, In in, Dx dx) {
  const Output &t = in.x[0], &lo = in.x[1], &hi = in.x[2], &g = in.dy[0];
  Output zeros = ZerosLike(s, g);
  Output below = Less(s, t, lo), above = Greater(s, t, hi);
  Output g_lo = SelectV2(s, below, g, zeros);
  Output g_hi = SelectV2(s, above, g, zeros);
  Output g_t = SelectV2(s, AddNode1(s, "LogicalOr", {below, above}), zeros, g);
  Output none;
  ReduceForBroadcast(s, t, lo, &none, &g_lo);
  ReduceForBroadcast(s, t, hi, &none, &g_hi);
  (*dx)[0] = g_t;
  (*dx)[1] = g_lo;
  (*dx)[2] = g_hi;
  return absl::OkStatus();
}

bool IsFloat(DataType t) {
  t = BaseType(t);
  return t == DT_FLOAT || t == DT_DOUBLE || t == tensorflow::DT_HALF ||
         t == tensorflow::DT_BFLOAT16;
}

absl::Status CastGrad(Scope_ s, In in, Dx dx) {
  if (IsFloat(in.x[0].dtype) && IsFloat(in.y[0].dtype)) {
    (*dx)[0] = Cast(s, in.dy[0], BaseType(in.x[0].dtype));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterMathGrads(GradRegistry* r) {
  RegisterBinaryGrads(r);
  RegisterUnaryGrads(r);
  r->Register("AddN", AddNGrad);
  r->Register("ClipByValue", ClipByValueGrad);
  r->Register("Cast", CastGrad);
  for (const char* op : {"Equal", "NotEqual", "Greater", "GreaterEqual",
                         "Less", "LessEqual", "ArgMax", "ArgMin",
                         "LogicalAnd", "LogicalOr", "LogicalNot", "Floor",
                         "Ceil", "Round", "Sign", "FloorDiv", "FloorMod",
                         "All", "Any"}) {
    r->RegisterNoGradient(op);
  }
}

}  // namespace weft
