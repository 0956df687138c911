// Numeric checks (grad_check.h) of the real FFTs' gradients
// (graph/builder/complex_grad.cc) in double, without TensorFlow: RFFT,
// IRFFT and their 2D and 3D forms, even and odd innermost lengths, inputs
// cropped to fft_length on each transformed axis, and length 1. IRFFT's
// input is Complex(re, im) of two fed tensors, so both parts are checked,
// the imaginary parts of the zero and Nyquist frequencies (which IRFFT
// ignores) included. tf_grad_compare_test compares the same gradients
// with TensorFlow's.
#include <cstdint>
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::S;
using testing_builder::X;

const char* const kRfft[] = {"RFFT", "RFFT2D", "RFFT3D"};
const char* const kIrfft[] = {"IRFFT", "IRFFT2D", "IRFFT3D"};

Output Lengths(S s, const std::vector<int32_t>& n) {
  return Const(s, n, TensorShape({static_cast<int64_t>(n.size())}));
}

DataType ComplexOf(DataType real) {
  return real == DT_DOUBLE ? DT_COMPLEX128 : DT_COMPLEX64;
}

// A real function of complex z reading both parts, not linear in either:
// real(w)^2 + imag(w) with w = z * (0.6 - 0.8i).
Output OfBothParts(S s, const Output& z, DataType real) {
  const DataType complex = ComplexOf(real);
  auto part = [&](const char* op, const Output& v) {
    return AddNode1(s, op, {v}, {{"Tout", Attr(real)}});
  };
  Output c = AddNode1(s, "Complex",
                      {Cast(s, Const(s, 0.6), real),
                       Cast(s, Const(s, -0.8), real)},
                      {{"Tout", Attr(complex)}});
  Output w = Mul(s, z, c);
  return AddV2(s, Square(s, part("Real", w)), part("Imag", w));
}

struct Case {
  TensorShape shape;
  std::vector<int32_t> n;
};

TEST(FftGradientsTest, Rfft) {
  const std::vector<Case> cases = {
      {{2, 6}, {6}},          {{2, 5}, {5}},       {{2, 7}, {4}},
      {{3, 5}, {3}},          {{4}, {1}},          {{2, 3, 4}, {3, 4}},
      {{3, 5}, {2, 3}},       {{4, 4}, {3, 1}},    {{2, 3, 4}, {2, 3, 4}},
      {{3, 4, 5}, {2, 3, 4}}, {{2, 2, 3}, {1, 1, 1}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shape.DebugString() + " n " + std::to_string(c.n.back()));
    Check({c.shape}, [&c](S s, X x) {
      const DataType real = x[0].dtype;
      Output f = AddNode1(s, kRfft[c.n.size() - 1], {x[0], Lengths(s, c.n)},
                          {{"Treal", Attr(real)},
                           {"Tcomplex", Attr(ComplexOf(real))}});
      return OfBothParts(s, f, real);
    });
  }
}

TEST(FftGradientsTest, Irfft) {
  const std::vector<Case> cases = {
      {{2, 4}, {6}},          {{2, 4}, {7}},          {{2, 5}, {4}},
      {{2, 4}, {5}},          {{3}, {2}},             {{2}, {1}},
      {{3, 4}, {3, 6}},       {{3, 5}, {2, 5}},       {{2, 3, 4}, {2, 3, 6}},
      {{2, 3, 4}, {2, 2, 4}}, {{2, 3, 4}, {1, 3, 5}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shape.DebugString() + " n " + std::to_string(c.n.back()));
    Check({c.shape, c.shape}, [&c](S s, X x) {
      const DataType real = x[0].dtype;
      Output z = AddNode1(s, "Complex", {x[0], x[1]},
                          {{"Tout", Attr(ComplexOf(real))}});
      Output t = AddNode1(s, kIrfft[c.n.size() - 1], {z, Lengths(s, c.n)},
                          {{"Treal", Attr(real)},
                           {"Tcomplex", Attr(ComplexOf(real))}});
      return Mul(s, t, t);
    });
  }
}

}  // namespace
}  // namespace weft
