// Gradients of the complex-number ops, with TensorFlow's formulas
// (math_grad.py, spectral_grad.py): for a real loss L of a complex z the
// gradient carried is dL/d(real z) + i dL/d(imag z).
//   Real: complex(g, 0)       Imag: complex(0, g)
//   Complex(re, im): real(g), imag(g), each reduced for broadcasting
//   Conj: conj(g)             ConjugateTranspose: the inverse permutation
//   Angle: -complex(g, 0) / complex(imag x, real x)
//   ComplexAbs: complex(g, 0) * x / complex(|x|, 0), 0 where |x| = 0
//   FFT: IFFT(g) * n          IFFT: FFT(g) / n    (n: the transformed size)
//   RFFT, IRFFT (1-3D): see RegisterRealFftGrads.
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

using grad_internal::RangeOf;
using grad_internal::RankOf;
using grad_internal::ReduceForBroadcast;
using grad_internal::ScalarLike;

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

// StridedSlice of x with the given masks (begin, end, strides: int32).
Output StridedSlice1(Scope_ s, const Output& x, std::vector<int32_t> begin,
                     std::vector<int32_t> end, std::vector<int32_t> strides,
                     int64_t begin_mask, int64_t end_mask,
                     int64_t ellipsis_mask, int64_t shrink_mask) {
  auto vec = [&](const std::vector<int32_t>& v) {
    return Const(s, v, TensorShape({static_cast<int64_t>(v.size())}));
  };
  return AddNode1(s, "StridedSlice",
                  {x, vec(begin), vec(end), vec(strides)},
                  {{"begin_mask", Attr(begin_mask)},
                   {"end_mask", Attr(end_mask)},
                   {"ellipsis_mask", Attr(ellipsis_mask)},
                   {"shrink_axis_mask", Attr(shrink_mask)}});
}

// The real FFTs crop each transformed dim of their input to what the
// transform reads (`used`, int32 [rank]), so the gradient of the dropped
// tail is zero: pads `d` (shaped like the used part) back to x's shape.
Output PadToInput(Scope_ s, const Output& d, const Output& x,
                  const Output& used, int rank) {
  Output inner = StridedSlice1(s, Shape(s, x), {-rank}, {0}, {1}, 0, 1, 0, 0);
  Output extra = Sub(s, inner, used);
  Output lead = Fill(
      s, Pack(s, {Sub(s, RankOf(s, x), Const(s, rank)), Const(s, 2)}),
      Const(s, 0));
  Output tail = Pack(s, {ZerosLike(s, extra), extra}, /*axis=*/1);
  return Pad(s, d, ConcatV2(s, {lead, tail}, Const(s, 0)));
}

// A column `c` ([..., n_1, .., n_{rank-1}, 1]) of a half spectrum summed
// against the inverse twiddles of the outer axes, as IRFFT would without
// the 1/n scaling: rank-1 IFFT times the outer size. Rank 1 has no outer
// axes: c itself.
Output OuterInverse(Scope_ s, const Output& c, int rank) {
  if (rank == 1) return c;
  const char* const kIfft[] = {"IFFT", "IFFT2D"};
  Output line = Squeeze(s, c, {-1});
  Output back = Mul(s, AddNode1(s, kIfft[rank - 2], {line}),
                    TransformSize(s, line, rank - 1));
  return ExpandDims(s, back, Const(s, -1));
}

// RFFT keeps only frequencies 0..n/2 of the innermost axis. Its adjoint
// applied to g is the sum over those kept frequencies; n * IRFFT(g) sums
// every interior frequency twice (once for its conjugate mirror) and the
// zero and (even n) Nyquist columns once, so
//   dx = (N * IRFFT(g) + real(col0) + [n even] real(colN) * (-1)^j) / 2
// with colK the column's outer inverse transform (N: the transform size),
// then zero-padded over any cropped tail of x.
// IRFFT's adjoint is RFFT(g) / N with the interior frequencies doubled
// (each stands for itself and its mirror); the zero and Nyquist ones are
// read once (their imaginary parts are dropped, and RFFT of a real g has
// none there).
void RegisterRealFftGrads(GradRegistry* r) {
  const char* const kSuffix[] = {"", "2D", "3D"};
  for (int rank = 1; rank <= 3; ++rank) {
    const std::string rfft = absl::StrCat("RFFT", kSuffix[rank - 1]);
    const std::string irfft = absl::StrCat("IRFFT", kSuffix[rank - 1]);
    r->Register(rfft, [rank, irfft](Scope_ s, In in, Dx dx) {
      const Output &x = in.x[0], &len = in.x[1], &g = in.dy[0];
      const DataType real = RealOf(g.dtype);
      Output last = StridedSlice1(s, len, {-1}, {0}, {1}, 0, 1, 0, 1);
      Output total = Cast(s, Prod(s, len, Const(s, 0)), real);
      Output twice = Mul(
          s,
          AddNode1(s, irfft, {g, len},
                   {{"Treal", Attr(real)}, {"Tcomplex", Attr(g.dtype)}}),
          total);
      Output col0 = StridedSlice1(s, g, {0, 0}, {0, 1}, {1, 1}, 0, 0, 1, 0);
      Output coln = StridedSlice1(s, g, {0, -1}, {0, 0}, {1, 1}, 0, 2, 1, 0);
      Output is_even = Cast(
          s, Equal(s, AddNode1(s, "FloorMod", {last, Const(s, 2)}),
                   Const(s, 0)),
          real);
      Output parity = Cast(
          s, AddNode1(s, "FloorMod", {RangeOf(s, Const(s, 0), last),
                                      Const(s, 2)}),
          real);
      Output sign = Sub(s, ScalarLike(s, 1.f, real),
                        Mul(s, ScalarLike(s, 2.f, real), parity));
      Output once = AddV2(
          s, Part(s, "Real", OuterInverse(s, col0, rank)),
          Mul(s, Part(s, "Real", OuterInverse(s, coln, rank)),
              Mul(s, sign, is_even)));
      Output d = Mul(s, AddV2(s, twice, once), ScalarLike(s, 0.5f, real));
      (*dx)[0] = PadToInput(s, d, x, len, rank);
      return absl::OkStatus();
    });
    r->Register(irfft, [rank, rfft](Scope_ s, In in, Dx dx) {
      const Output &x = in.x[0], &len = in.x[1], &g = in.dy[0];
      const DataType real = g.dtype;
      Output last = StridedSlice1(s, len, {-1}, {0}, {1}, 0, 1, 0, 1);
      Output half = AddV2(s, AddNode1(s, "FloorDiv", {last, Const(s, 2)}),
                          Const(s, 1));
      Output k = RangeOf(s, Const(s, 0), half);
      // 2 for interior frequencies, 1 for frequency 0 and Nyquist (2k = n).
      Output once = AddV2(
          s, Cast(s, Equal(s, k, Const(s, 0)), real),
          Cast(s, Equal(s, Mul(s, k, Const(s, 2)), last), real));
      Output total = Cast(s, Prod(s, len, Const(s, 0)), real);
      Output weight =
          RealDiv(s, Sub(s, ScalarLike(s, 2.f, real), once), total);
      const DataType complex = BaseType(x.dtype);
      Output spectrum =
          AddNode1(s, rfft, {g, len},
                   {{"Treal", Attr(real)}, {"Tcomplex", Attr(complex)}});
      Output d = Mul(s, spectrum,
                     MakeComplex(s, weight, ZerosLike(s, weight), complex));
      Output used = ConcatV2(
          s,
          {StridedSlice1(s, len, {0}, {-1}, {1}, 0, 0, 0, 0),
           ExpandDims(s, half, Const(s, 0))},
          Const(s, 0));
      (*dx)[0] = PadToInput(s, d, x, used, rank);
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
  RegisterRealFftGrads(r);
}

}  // namespace weft
