// Gradients of the complex-number ops, with TensorFlow's formulas
// (math_grad.py, spectral_grad.py): for a real loss L of a complex z the
// gradient carried is dL/d(real z) + i dL/d(imag z).
//   Real: complex(g, 0)       Imag: complex(0, g)
//   Complex(re, im): real(g), imag(g), each reduced for broadcasting
//   Conj: conj(g)             ConjugateTranspose: the inverse permutation
//   Angle: -complex(g, 0) / complex(imag x, real x)
//   ComplexAbs: complex(g, 0) * x / complex(|x|, 0), 0 where |x| = 0
//   FFT: IFFT(g) * n          IFFT: FFT(g) / n    (n: the transformed size)
// RFFT and IRFFT have none yet (TensorFlow's mixes in the Hermitian
// weights); AddGradients names them when a path needs one.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::ReduceForBroadcast;

using Scope_ = const Scope&;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

DataType RealOf(DataType complex) {
  return BaseType(complex) == DT_COMPLEX128 ? DT_DOUBLE : DT_FLOAT;
}

Output MakeComplex(Scope_ s, const Output& re, const Output& im,
                   DataType complex) {
  return AddNode1(s, "Complex", {re, im}, {{"Tout", Attr(BaseType(complex))}});
}

// Real(x) or Imag(x) of a complex x.
Output Part(Scope_ s, const char* op, const Output& x) {
  return AddNode1(s, op, {x}, {{"Tout", Attr(RealOf(x.dtype))}});
}

// The number of elements of x's last `rank` dims, as a complex scalar of
// x's dtype.
Output TransformSize(Scope_ s, const Output& x, int rank) {
  Output dims = AddNode1(s, "StridedSlice",
                         {Shape(s, x), Const(s, {-rank}), Const(s, {0}),
                          Const(s, {1})},
                         {{"end_mask", Attr(1)}});
  Output n = Cast(s, Prod(s, dims, Const(s, 0)), RealOf(x.dtype));
  return MakeComplex(s, n, ZerosLike(s, n), x.dtype);
}

void RegisterFftGrads(GradRegistry* r) {
  const char* const kSuffix[] = {"", "2D", "3D"};
  for (int rank = 1; rank <= 3; ++rank) {
    const std::string fft = absl::StrCat("FFT", kSuffix[rank - 1]);
    const std::string ifft = absl::StrCat("IFFT", kSuffix[rank - 1]);
    r->Register(fft, [rank, ifft](Scope_ s, In in, Dx dx) {
      const Output& g = in.dy[0];
      (*dx)[0] = Mul(s, AddNode1(s, ifft, {g}), TransformSize(s, g, rank));
      return absl::OkStatus();
    });
    r->Register(ifft, [rank, fft](Scope_ s, In in, Dx dx) {
      const Output& g = in.dy[0];
      (*dx)[0] = RealDiv(s, AddNode1(s, fft, {g}), TransformSize(s, g, rank));
      return absl::OkStatus();
    });
  }
}

}  // namespace

void RegisterComplexGrads(GradRegistry* r) {
  r->Register("Real", [](Scope_ s, In in, Dx dx) {
    const Output& g = in.dy[0];
    (*dx)[0] = MakeComplex(s, g, ZerosLike(s, g), in.x[0].dtype);
    return absl::OkStatus();
  });
  r->Register("Imag", [](Scope_ s, In in, Dx dx) {
    const Output& g = in.dy[0];
    (*dx)[0] = MakeComplex(s, ZerosLike(s, g), g, in.x[0].dtype);
    return absl::OkStatus();
  });
  r->Register("Complex", [](Scope_ s, In in, Dx dx) {
    const Output& g = in.dy[0];
    Output gx = Part(s, "Real", g), gy = Part(s, "Imag", g);
    ReduceForBroadcast(s, in.x[0], in.x[1], &gx, &gy);
    (*dx)[0] = gx;
    (*dx)[1] = gy;
    return absl::OkStatus();
  });
  r->Register("Conj", [](Scope_ s, In in, Dx dx) {
    (*dx)[0] = AddNode1(s, "Conj", {in.dy[0]});
    return absl::OkStatus();
  });
  r->Register("ConjugateTranspose", [](Scope_ s, In in, Dx dx) {
    Output inv =
        AddNode1(s, "InvertPermutation", {Cast(s, in.x[1], DT_INT32)});
    (*dx)[0] = AddNode1(s, "ConjugateTranspose", {in.dy[0], inv});
    return absl::OkStatus();
  });
  r->Register("Angle", [](Scope_ s, In in, Dx dx) {
    const Output &x = in.x[0], &g = in.dy[0];
    Output z = Reciprocal(
        s, MakeComplex(s, Part(s, "Imag", x), Part(s, "Real", x), x.dtype));
    (*dx)[0] = Neg(s, Mul(s, MakeComplex(s, g, ZerosLike(s, g), x.dtype), z));
    return absl::OkStatus();
  });
  r->Register("ComplexAbs", [](Scope_ s, In in, Dx dx) {
    const Output &x = in.x[0], &y = in.y[0], &g = in.dy[0];
    Output gc = MakeComplex(s, g, ZerosLike(s, g), x.dtype);
    Output yc = MakeComplex(s, y, ZerosLike(s, y), x.dtype);
    (*dx)[0] = AddNode1(s, "DivNoNan", {Mul(s, gc, x), yc});
    return absl::OkStatus();
  });
  RegisterFftGrads(r);
}

}  // namespace weft
