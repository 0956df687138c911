// Gradients of the element-wise math functions of ops/math_cwise_ops.cc,
// with TensorFlow's formulas (math_grad.py): the trigonometric and
// hyperbolic functions, Erf/Erfc/Erfinv/Ndtri, Lgamma/Digamma/Polygamma,
// Expm1/Log1p, and the broadcasting Atan2, Xdivy, Xlogy, Xlog1py. The
// predicates, Rint, TruncateDiv and the bitwise ops have none, as in
// TensorFlow.
#include <cmath>

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
  RegisterBinaryGrads(r);
  for (const char* op :
       {"IsFinite", "IsNan", "IsInf", "Rint", "TruncateDiv", "BitwiseAnd",
        "BitwiseOr", "BitwiseXor", "Invert", "PopulationCount", "LeftShift",
        "RightShift"}) {
    r->RegisterNoGradient(op);
  }
}

}  // namespace weft
