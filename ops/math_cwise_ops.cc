// TensorFlow's remaining element-wise math ops: the trigonometric and
// hyperbolic functions, the error and gamma families (Erf, Lgamma, Igamma,
// Zeta, ...), the Bessel functions (BesselI0 ... BesselY1), Dawsn, Expint,
// FresnelCos/FresnelSin and Spence, Expm1/Log1p, Rint, the
// IsFinite/IsNan/IsInf predicates, the bitwise ops and shifts, and Atan2,
// Xdivy, Xlogy, Xlog1py, TruncateDiv, TruncateMod. Unary ops keep their input's shape, binary ones broadcast.
// OpDefs match TensorFlow 2.21's (tests/ops/op_def_compat_test checks).
#include <string>

#include "ops/registration.h"

namespace weft {
namespace {

// TensorFlow's allowed-type lists, in its order.
const char kFloatComplexTypes[] =
    "{bfloat16, half, float, double, complex64, complex128}";
const char kFloatTypes[] = "{bfloat16, half, float, double}";
const char kXTypes[] =  // Xdivy, Xlogy, Xlog1py
    "{half, bfloat16, float, double, complex64, complex128}";
const char kBitwiseTypes[] =
    "{int8, int16, int32, int64, uint8, uint16, uint32, uint64}";
const char kTruncateDivTypes[] =
    "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64, complex64, complex128}";
const char kTruncateModTypes[] =
    "{int32, int64, bfloat16, half, float, double}";

// y = f(x), same shape; `out` is "T" or a fixed type (IsNan's bool).
void Unary(OpRegistry* r, const char* name, const char* types,
           const char* out = "T") {
  r->Register(OpDefBuilder(name)
                  .Input("x: T")
                  .Output(std::string("y: ") + out)
                  .Attr(std::string("T: ") + types),
              UnchangedShape);
}

// z = f(a, b) with broadcasting; `a` and `b` name the inputs.
void Binary(OpRegistry* r, const char* name, const char* types,
            const char* a = "x", const char* b = "y",
            bool commutative = false) {
  OpDefBuilder d(name);
  d.Input(std::string(a) + ": T")
      .Input(std::string(b) + ": T")
      .Output("z: T")
      .Attr(std::string("T: ") + types);
  if (commutative) d.SetIsCommutative();
  r->Register(d, BroadcastBinaryOpShape);
}

}  // namespace

void RegisterMathCwiseOps(OpRegistry* r) {
  for (const char* name :
       {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
        "Acosh", "Atanh", "Expm1", "Log1p"}) {
    Unary(r, name, kFloatComplexTypes);
  }
  for (const char* name :
       {"Erf", "Erfc", "Erfinv", "Ndtri", "Lgamma", "Digamma", "Rint"}) {
    Unary(r, name, kFloatTypes);
  }
  for (const char* name :
       {"BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "BesselJ0",
        "BesselJ1", "BesselK0", "BesselK0e", "BesselK1", "BesselK1e",
        "BesselY0", "BesselY1", "Dawsn", "Expint", "FresnelCos", "FresnelSin",
        "Spence"}) {
    Unary(r, name, kFloatTypes);
  }
  for (const char* name : {"IsFinite", "IsNan", "IsInf"}) {
    Unary(r, name, kFloatTypes, "bool");
  }
  Unary(r, "Invert", kBitwiseTypes);
  Unary(r, "PopulationCount", kBitwiseTypes, "uint8");

  Binary(r, "Atan2", kFloatTypes, "y", "x");
  for (const char* name : {"Xdivy", "Xlogy", "Xlog1py"}) {
    Binary(r, name, kXTypes);
  }
  Binary(r, "TruncateDiv", kTruncateDivTypes);
  Binary(r, "TruncateMod", kTruncateModTypes);
  for (const char* name : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    Binary(r, name, kBitwiseTypes, "x", "y", /*commutative=*/true);
  }
  Binary(r, "LeftShift", kBitwiseTypes);
  Binary(r, "RightShift", kBitwiseTypes);
  Binary(r, "Igamma", kFloatTypes, "a", "x");
  Binary(r, "Igammac", kFloatTypes, "a", "x");
  Binary(r, "Polygamma", "{float, double}", "a", "x");
  Binary(r, "IgammaGradA", "{float, double}", "a", "x");
  Binary(r, "Zeta", "{float, double}", "x", "q");
}

}  // namespace weft
