// Gradients of the element-wise math functions of ops/math_cwise_ops.cc,
// with TensorFlow's formulas (math_grad.py): the trigonometric and
// hyperbolic functions, Erf/Erfc/Erfinv/Ndtri, Lgamma/Digamma/Polygamma,
// Expm1/Log1p, the Bessel functions, Dawsn, Expint, FresnelCos/Sin, Spence,
// and the broadcasting Atan2, Xdivy, Xlogy, Xlog1py, Igamma/Igammac and
// Zeta (q only). The predicates, Rint, TruncateDiv and the bitwise ops have
// none, as in TensorFlow.
#include <cmath>
#include <string>

#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::ReduceForBroadcast;
using grad_internal::ScalarLike;

using Scope_ = const Scope&;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

// A scalar of `dtype`: built in double for double, so that constants such
// as 2 / sqrt(pi) keep their full precision there.
Output Scalar(Scope_ s, double v, DataType dtype) {
  if (BaseType(dtype) == DT_DOUBLE) return Const(s, v);
  return ScalarLike(s, static_cast<float>(v), dtype);
}

Output Op(Scope_ s, const char* op, const Output& x) {
  return AddNode1(s, op, {x});
}
Output Op(Scope_ s, const char* op, const Output& x, const Output& y) {
  return AddNode1(s, op, {x, y});
}

// dx = g * f(x, y) for a unary op with input x and output y.
template <typename F>
GradFn Times(F f) {
  return [f](Scope_ s, In in, Dx dx) {
    const Output& g = in.dy[0];
    (*dx)[0] = Mul(s, g, f(s, in.x[0], in.y[0], BaseType(g.dtype)));
    return absl::OkStatus();
  };
}

// 1 - x^2 and 1 + x^2.
Output OneMinusSquare(Scope_ s, const Output& x, DataType t) {
  return Sub(s, Scalar(s, 1, t), Square(s, x));
}
Output OnePlusSquare(Scope_ s, const Output& x, DataType t) {
  return Add(s, Scalar(s, 1, t), Square(s, x));
}

void RegisterTrigGrads(GradRegistry* r) {
  r->Register("Sin", Times([](Scope_ s, const Output& x, const Output&,
                              DataType) { return Op(s, "Cos", x); }));
  r->Register("Cos", [](Scope_ s, In in, Dx dx) {
    (*dx)[0] = Mul(s, Neg(s, in.dy[0]), Op(s, "Sin", in.x[0]));
    return absl::OkStatus();
  });
  r->Register("Tan", Times([](Scope_ s, const Output& x, const Output&,
                              DataType) {
    return Square(s, Reciprocal(s, Op(s, "Cos", x)));
  }));
  r->Register("Asin", Times([](Scope_ s, const Output& x, const Output&,
                               DataType t) {
    return Reciprocal(s, Sqrt(s, OneMinusSquare(s, x, t)));
  }));
  r->Register("Acos", [](Scope_ s, In in, Dx dx) {
    const DataType t = BaseType(in.dy[0].dtype);
    Output inv = Reciprocal(s, Sqrt(s, OneMinusSquare(s, in.x[0], t)));
    (*dx)[0] = Mul(s, Neg(s, in.dy[0]), inv);
    return absl::OkStatus();
  });
  r->Register("Atan", Times([](Scope_ s, const Output& x, const Output&,
                               DataType t) {
    return Reciprocal(s, OnePlusSquare(s, x, t));
  }));
  r->Register("Sinh", Times([](Scope_ s, const Output& x, const Output&,
                               DataType) { return Op(s, "Cosh", x); }));
  r->Register("Cosh", Times([](Scope_ s, const Output& x, const Output&,
                               DataType) { return Op(s, "Sinh", x); }));
  // d asinh(x) = 1 / cosh(y), d acosh(x) = 1 / sinh(y): as TensorFlow,
  // g divided by them.
  r->Register("Asinh", [](Scope_ s, In in, Dx dx) {
    (*dx)[0] = RealDiv(s, in.dy[0], Op(s, "Cosh", in.y[0]));
    return absl::OkStatus();
  });
  r->Register("Acosh", [](Scope_ s, In in, Dx dx) {
    (*dx)[0] = RealDiv(s, in.dy[0], Op(s, "Sinh", in.y[0]));
    return absl::OkStatus();
  });
  r->Register("Atanh", Times([](Scope_ s, const Output& x, const Output&,
                                DataType t) {
    return Reciprocal(s, OneMinusSquare(s, x, t));
  }));
}

void RegisterSpecialGrads(GradRegistry* r) {
  const double kPi = 3.14159265358979323846;
  // 2 / sqrt(pi) exp(-x^2), and its negation for Erfc.
  for (double sign : {1.0, -1.0}) {
    r->Register(sign > 0 ? "Erf" : "Erfc",
                Times([sign, kPi](Scope_ s, const Output& x, const Output&,
                                  DataType t) {
      return Mul(s, Scalar(s, sign * 2 / std::sqrt(kPi), t),
                 Exp(s, Neg(s, Square(s, x))));
    }));
  }
  r->Register("Erfinv", Times([kPi](Scope_ s, const Output&, const Output& y,
                                    DataType t) {
    return Mul(s, Scalar(s, std::sqrt(kPi) / 2, t), Exp(s, Square(s, y)));
  }));
  r->Register("Ndtri", Times([kPi](Scope_ s, const Output&, const Output& y,
                                   DataType t) {
    return Mul(s, Scalar(s, std::sqrt(2 * kPi), t),
               Exp(s, RealDiv(s, Square(s, y), Scalar(s, 2, t))));
  }));
  r->Register("Lgamma", Times([](Scope_ s, const Output& x, const Output&,
                                 DataType) { return Op(s, "Digamma", x); }));
  r->Register("Digamma", Times([](Scope_ s, const Output& x, const Output&,
                                  DataType t) {
    return Op(s, "Polygamma", Scalar(s, 1, t), x);
  }));
  r->Register("Expm1", Times([](Scope_ s, const Output& x, const Output&,
                                DataType) { return Exp(s, x); }));
  r->Register("Log1p", Times([](Scope_ s, const Output& x, const Output&,
                                DataType t) {
    return Reciprocal(s, Add(s, Scalar(s, 1, t), x));
  }));
  // Polygamma(n, x): d/dx = Polygamma(n + 1, x); none for n.
  r->Register("Polygamma", [](Scope_ s, In in, Dx dx) {
    const Output &n = in.x[0], &x = in.x[1], &g = in.dy[0];
    Output n1 = Add(s, n, Scalar(s, 1, BaseType(g.dtype)));
    Output none, gx = Mul(s, Op(s, "Polygamma", n1, x), g);
    ReduceForBroadcast(s, n, x, &none, &gx);
    (*dx)[1] = gx;
    return absl::OkStatus();
  });
}

// e, except the constant v where x == at (TensorFlow's where_v2).
Output Where(Scope_ s, const Output& x, double at, double v, DataType t,
             const Output& e) {
  return AddNode1(s, "SelectV2",
                  {Equal(s, x, Scalar(s, at, t)), Scalar(s, v, t), e});
}

// f(x) = g(x) - y / x, the derivative of the order-1 Bessel functions.
Output MinusYOverX(Scope_ s, const Output& f, const Output& x,
                   const Output& y) {
  return Sub(s, f, RealDiv(s, y, x));
}

void RegisterBesselGrads(GradRegistry* r) {
  // I0' = I1, K0' = -K1, J0' = -J1, Y0' = -Y1.
  r->Register("BesselI0", Times([](Scope_ s, const Output& x, const Output&,
                                   DataType) { return Op(s, "BesselI1", x); }));
  for (const char* op : {"BesselK0", "BesselJ0", "BesselY0"}) {
    const std::string one = std::string(op, 7) + "1";
    r->Register(op, Times([one](Scope_ s, const Output& x, const Output&,
                                DataType) {
      return Neg(s, AddNode1(s, one, {x}));
    }));
  }
  // The scaled ones: I0e' = I1e - sign(x) I0e, K0e' = K0e - K1e.
  r->Register("BesselI0e", Times([](Scope_ s, const Output& x,
                                    const Output& y, DataType) {
    return Sub(s, Op(s, "BesselI1e", x), Mul(s, Sign(s, x), y));
  }));
  r->Register("BesselK0e", Times([](Scope_ s, const Output& x,
                                    const Output& y, DataType) {
    return Sub(s, y, Op(s, "BesselK1e", x));
  }));
  // I1' = I0 - I1 / x and J1' = J0 - J1 / x, at 0 TensorFlow's constants:
  // 1/2 for J1, and 1 for I1 (whose true derivative there is 1/2).
  r->Register("BesselI1", Times([](Scope_ s, const Output& x,
                                   const Output& y, DataType t) {
    return Where(s, x, 0, 1, t, MinusYOverX(s, Op(s, "BesselI0", x), x, y));
  }));
  r->Register("BesselJ1", Times([](Scope_ s, const Output& x,
                                   const Output& y, DataType t) {
    return Where(s, x, 0, 0.5, t, MinusYOverX(s, Op(s, "BesselJ0", x), x, y));
  }));
  // I1e' = I0e - I1e (sign(x) + 1 / x), 1/2 at 0.
  r->Register("BesselI1e", Times([](Scope_ s, const Output& x,
                                    const Output& y, DataType t) {
    Output scale = Add(s, Sign(s, x), Reciprocal(s, x));
    return Where(s, x, 0, 0.5, t,
                 Sub(s, Op(s, "BesselI0e", x), Mul(s, y, scale)));
  }));
  // K1' = -K0 - K1 / x, Y1' = Y0 - Y1 / x, K1e' = K1e (1 - 1 / x) - K0e.
  r->Register("BesselK1", Times([](Scope_ s, const Output& x,
                                   const Output& y, DataType) {
    return MinusYOverX(s, Neg(s, Op(s, "BesselK0", x)), x, y);
  }));
  r->Register("BesselY1", Times([](Scope_ s, const Output& x,
                                   const Output& y, DataType) {
    return MinusYOverX(s, Op(s, "BesselY0", x), x, y);
  }));
  r->Register("BesselK1e", Times([](Scope_ s, const Output& x,
                                    const Output& y, DataType t) {
    Output scale = Sub(s, Scalar(s, 1, t), Reciprocal(s, x));
    return Sub(s, Mul(s, y, scale), Op(s, "BesselK0e", x));
  }));
}

void RegisterIntegralGrads(GradRegistry* r) {
  const double kPi = 3.14159265358979323846;
  // Dawsn' = 1 - 2 x y; Ei'(x) = exp(x) / x.
  r->Register("Dawsn", Times([](Scope_ s, const Output& x, const Output& y,
                                DataType t) {
    return Sub(s, Scalar(s, 1, t), Mul(s, Mul(s, Scalar(s, 2, t), x), y));
  }));
  r->Register("Expint", Times([](Scope_ s, const Output& x, const Output&,
                                 DataType) {
    return RealDiv(s, Exp(s, x), x);
  }));
  // C'(x) = cos(pi x^2 / 2), S'(x) = sin(pi x^2 / 2).
  for (const char* op : {"FresnelCos", "FresnelSin"}) {
    const char* trig = op[7] == 'C' ? "Cos" : "Sin";
    r->Register(op, Times([trig, kPi](Scope_ s, const Output& x,
                                      const Output&, DataType t) {
      return Op(s, trig, Mul(s, Scalar(s, kPi / 2, t), Square(s, x)));
    }));
  }
  // Spence'(x) = log(x) / (1 - x), -1 at x = 1.
  r->Register("Spence", Times([](Scope_ s, const Output& x, const Output&,
                                 DataType t) {
    return Where(s, x, 1, -1, t,
                 RealDiv(s, Log(s, x), Sub(s, Scalar(s, 1, t), x)));
  }));
}

// A broadcasting binary op: f sets the unreduced gradients of x and y.
template <typename F>
GradFn Binary(F f) {
  return [f](Scope_ s, In in, Dx dx) {
    const Output &x = in.x[0], &y = in.x[1], &g = in.dy[0];
    Output gx, gy;
    f(s, x, y, g, BaseType(g.dtype), &gx, &gy);
    ReduceForBroadcast(s, x, y, &gx, &gy);
    (*dx)[0] = gx;
    (*dx)[1] = gy;
    return absl::OkStatus();
  };
}

// 1 where x != 0, else 0, in x's type.
Output NotZero(Scope_ s, const Output& x, DataType t) {
  return Cast(s, Op(s, "NotEqual", x, Scalar(s, 0, t)), t);
}

// Igamma(a, x): IgammaGradA(a, x) for a, and for x the density
// exp(-x + (a - 1) log(x) - lgamma(a)); Igammac = 1 - Igamma negates both.
void RegisterIgammaGrads(GradRegistry* r) {
  for (double sign : {1.0, -1.0}) {
    r->Register(sign > 0 ? "Igamma" : "Igammac",
                Binary([sign](Scope_ s, const Output& a, const Output& x,
                              const Output& g, DataType t, Output* ga,
                              Output* gx) {
      Output gs = sign > 0 ? g : Neg(s, g);
      Output log_density = Sub(
          s, Add(s, Neg(s, x), Mul(s, Sub(s, a, Scalar(s, 1, t)), Log(s, x))),
          Op(s, "Lgamma", a));
      *ga = Mul(s, Op(s, "IgammaGradA", a, x), gs);
      *gx = Mul(s, Exp(s, log_density), gs);
    }));
  }
  // Zeta(x, q): d/dq = -x Zeta(x + 1, q); none for x, as in TensorFlow.
  r->Register("Zeta", [](Scope_ s, In in, Dx dx) {
    const Output &x = in.x[0], &q = in.x[1], &g = in.dy[0];
    Output x1 = Add(s, x, Scalar(s, 1, BaseType(g.dtype)));
    Output none, gq = Mul(s, Mul(s, Neg(s, x), Op(s, "Zeta", x1, q)), g);
    ReduceForBroadcast(s, x, q, &none, &gq);
    (*dx)[1] = gq;
    return absl::OkStatus();
  });
}

void RegisterBinaryGrads(GradRegistry* r) {
  // Atan2(y, x): g x / (x^2 + y^2) for y, -g y / (x^2 + y^2) for x.
  r->Register("Atan2", Binary([](Scope_ s, const Output& y, const Output& x,
                                 const Output& g, DataType, Output* gy,
                                 Output* gx) {
    Output inv = RealDiv(s, g, Add(s, Square(s, y), Square(s, x)));
    *gy = Mul(s, x, inv);
    *gx = Mul(s, Neg(s, y), inv);
  }));
  r->Register("Xdivy", Binary([](Scope_ s, const Output& x, const Output& y,
                                 const Output& g, DataType t, Output* gx,
                                 Output* gy) {
    *gx = Mul(s, Op(s, "Xdivy", NotZero(s, x, t), y), g);
    *gy = Mul(s, Op(s, "Xdivy", Neg(s, x), Square(s, y)), g);
  }));
  r->Register("Xlogy", Binary([](Scope_ s, const Output& x, const Output& y,
                                 const Output& g, DataType t, Output* gx,
                                 Output* gy) {
    *gx = Mul(s, Op(s, "Xlogy", NotZero(s, x, t), y), g);
    *gy = Mul(s, Op(s, "Xdivy", x, y), g);
  }));
  r->Register("Xlog1py", Binary([](Scope_ s, const Output& x, const Output& y,
                                   const Output& g, DataType t, Output* gx,
                                   Output* gy) {
    *gx = Mul(s, Op(s, "Xlog1py", NotZero(s, x, t), y), g);
    *gy = Mul(s, Op(s, "Xdivy", x, Add(s, y, Scalar(s, 1, t))), g);
  }));
}

}  // namespace

void RegisterMathFuncGrads(GradRegistry* r) {
  RegisterTrigGrads(r);
  RegisterSpecialGrads(r);
  RegisterBesselGrads(r);
  RegisterIntegralGrads(r);
  RegisterBinaryGrads(r);
  RegisterIgammaGrads(r);
  for (const char* op :
       {"IsFinite", "IsNan", "IsInf", "Rint", "TruncateDiv", "BitwiseAnd",
        "BitwiseOr", "BitwiseXor", "Invert", "PopulationCount", "LeftShift",
        "RightShift"}) {
    r->RegisterNoGradient(op);
  }
}

}  // namespace weft
