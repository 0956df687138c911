// Builds one graph with a scalar term per op whose gradient the builder
// gained with the gradient registry's second batch (StridedSlice,
// GatherV2, BatchMatMulV2, the activations, ClipByValue, scans, Pad, Split,
// the reductions, the dense cross-entropy, second derivatives, the special
// functions, ...), sums the terms into "loss", adds Weft's symbolic
// gradients of each term and of the loss, and writes the GraphDef and
// Weft's values (argv[1], argv[2]; dump_graph_values.h). tf_compare_test.py then runs the graph in
// TensorFlow and checks each of Weft's gradients against tf.gradients.
#include <cmath>
#include <iostream>
#include <utility>
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/gradients.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "tests/builder/dump_graph_values.h"

namespace weft {
namespace {

// Distinct, deterministic values in about [-1.3, 1.3] (no ties).
Output Wavy(const Scope& s, const char* name, const TensorShape& shape,
              double phase) {
  std::vector<float> v;
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    v.push_back(static_cast<float>(1.3 * std::sin(1.7 * i + phase) +
                                   0.01 * i));
  }
  return Const(s.WithOpName(name), v, shape);
}

Output Vec(const Scope& s, std::vector<int32_t> v) {
  return Const(s, v, TensorShape({static_cast<int64_t>(v.size())}));
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: dump_grad_graph GRAPH_OUT VALUES_OUT\n";
    return 2;
  }
  Scope root = Scope::NewRoot();
  Output x = Wavy(root, "x", {3, 4}, 0.3);
  Output batch = Wavy(root, "batch", {2, 3, 4}, 1.1);
  Output w = Wavy(root, "w", {4, 5}, 2.0);
  Output row = Wavy(root, "row", {4}, 0.7);
  Output lo = Const(root.WithOpName("lo"), -0.6f);
  Output hi = Const(root.WithOpName("hi"), 0.8f);
  Output label_logits = Wavy(root, "label_logits", {3, 4}, 2.9);
  Output sig = Wavy(root, "sig", {2, 3, 5}, 0.4);  // for the real FFTs
  Scope s = root.NewSubScope("terms");
  std::vector<Output> terms;
  auto add = [&](const Output& t) {
    terms.push_back(testing_builder::SumOfSquares(s, t));
  };
  add(AddNode1(s, "StridedSlice",
               {x, Vec(s, {0, 3}), Vec(s, {3, 0}), Vec(s, {1, -2})}));
  add(GatherV2(s, Mul(s, x, x), Const(s, {2, 0, 2}), Const(s, 0)));
  add(GatherV2(s, batch, Const(s, {{1, 3}, {0, 0}}), Const(s, -1)));
  add(AddNode1(s, "GatherV2",
               {batch, Const(s, {{3, 0, 3}, {1, 2, 2}}), Const(s, 2)},
               {{"batch_dims", Attr(1)}}));
  add(BatchMatMulV2(s, batch, w));
  add(BatchMatMulV2(s, batch, batch, /*adj_x=*/true, /*adj_y=*/false));
  for (const char* op : {"Relu6", "Elu", "Selu", "Softplus", "Softsign"}) {
    add(AddNode1(s, op, {Mul(s, x, Const(s, 5.f))}));
  }
  add(AddNode1(s, "LeakyRelu", {x}, {{"alpha", Attr(0.3f)}}));
  add(AddNode1(s, "ClipByValue", {x, lo, hi}));
  add(AddNode1(s, "Cumsum", {x, Const(s, 1)},
               {{"exclusive", Attr(true)}, {"reverse", Attr(true)}}));
  add(AddNode1(s, "Cumprod", {x, Const(s, 0)}));
  add(Pad(s, x, Const(s, {{1, 0}, {0, 2}})));
  std::vector<Output> parts = AddNode(s, "SplitV",
      {batch, Const(s, {1, 3}), Const(s, 2)}, {{"num_split", Attr(2)}});
  if (parts.size() == 2) add(Mul(s, parts[0], Const(s, 3.f)));
  parts = AddNode(s, "Split", {Const(s, 1), x}, {{"num_split", Attr(2)}});
  if (parts.size() == 2) add(Exp(s, parts[1]));
  add(AddNode1(s, "BroadcastTo", {row, Const(s, {3, 4})}));
  std::vector<Output> xent = AddNode(s, "SoftmaxCrossEntropyWithLogits",
                                     {x, Softmax(s, label_logits)});
  if (xent.size() == 2) add(xent[0]);
  add(AddNode1(s, "L2Loss", {w}));
  add(AddNode1(s, "DivNoNan", {x, AddV2(s, Abs(s, row), Const(s, 0.5f))}));
  add(Abs(s, Sub(s, x, row)));
  for (auto reduce : {Max, Min, Prod}) {
    add(reduce(s, batch, Const(s, {0, 2}), false));
  }
  add(Max(s, x, Const(s, -1), true));
  add(Transpose(s, batch, Const(s, {2, 0, 1})));
  // Ops whose gradients the first batch had, with the new ones' helpers.
  Output positive = AddV2(s, Abs(s, x), Const(s, 0.5f));
  add(Pow(s, positive, Mul(s, row, Const(s, 0.5f))));
  add(Maximum(s, x, row));
  add(Minimum(s, x, Mul(s, row, Const(s, 0.5f))));
  add(AddNode1(s, "Div", {x, AddV2(s, Square(s, row), Const(s, 1.f))}));
  add(Mean(s, batch, Const(s, 1)));
  add(Squeeze(s, ExpandDims(s, Reshape(s, x, Const(s, {4, 3})), Const(s, 1)),
              {1}));
  add(Cast(s, Square(s, Cast(s, x, DT_DOUBLE)), DT_FLOAT));
  add(AddNode1(s, "DynamicStitch",
               {Input(std::vector<Output>{Const(s, {2, 0}), Const(s, {1})}),
                Input(std::vector<Output>{
                    Slice(s, x, Const(s, {0, 0}), Const(s, {2, 4})),
                    Slice(s, x, Const(s, {2, 0}), Const(s, {1, 4}))})}));
  add(AddNode1(s, "UnsortedSegmentSum",
               {Reshape(s, batch, Const(s, {6, 4})),
                Const(s, {1, 0, -1, 1, 2, 0}), Const(s, 3)}));
  add(AddNode1(s, "PadV2", {x, Const(s, {{0, 1}, {2, 0}}), Const(s, 0.5f)}));
  // The special functions' gradients (math_func_grad.cc), also at 0 and 1
  // where TensorFlow puts a constant: x - (a copy of x) is 0 and still
  // depends on x, and 1 is added to those terms (0 there) so that the
  // square's derivative does not vanish.
  Output zero = Sub(s, x, Wavy(s, "x_again", {3, 4}, 0.3));
  Output twice = Mul(s, x, Const(s, 2.f));
  Output above = AddV2(s, Abs(s, twice), Const(s, 0.1f));
  for (const char* op : {"BesselI0", "BesselI0e", "BesselI1", "BesselI1e",
                         "BesselJ0", "BesselJ1", "Dawsn", "FresnelCos",
                         "FresnelSin"}) {
    add(AddNode1(s, op, {twice}));
  }
  for (const char* op : {"BesselK0", "BesselK0e", "BesselK1", "BesselK1e",
                         "BesselY0", "BesselY1", "Expint", "Spence"}) {
    add(AddNode1(s, op, {above}));
  }
  Output one = Const(s, 1.f);
  for (const char* op : {"BesselI1", "BesselI1e", "BesselJ1"}) {
    add(AddV2(s, AddNode1(s, op, {zero}), one));
  }
  add(AddV2(s, AddNode1(s, "Spence", {AddV2(s, zero, one)}), one));
  Output row_above = AddV2(s, Abs(s, row), Const(s, 0.2f));
  add(AddNode1(s, "Igamma", {positive, row_above}));
  add(AddNode1(s, "Igammac", {row_above, positive}));
  add(AddNode1(s, "Zeta", {AddV2(s, row_above, Const(s, 1.5f)), positive}));
  // Complex numbers: real losses of complex intermediates, through each
  // complex op's gradient and the conjugating Mul, RealDiv, Square, Exp,
  // Log and MatMul. z is at least 0.7 from 0 (its imaginary part).
  {
    auto cplx = [&](const Output& re, const Output& im) {
      return AddNode1(s, "Complex", {re, im}, {{"Tout", Attr(DT_COMPLEX64)}});
    };
    auto part = [&](const char* op, const Output& v) {
      return AddNode1(s, op, {v}, {{"Tout", Attr(DT_FLOAT)}});
    };
    Output lifted = AddV2(s, row, Const(s, 2.f));
    Output z = cplx(x, lifted);  // broadcast: [3, 4] and [4]
    Output u = cplx(lifted, Mul(s, x, Const(s, 0.5f)));
    add(part("Real", Mul(s, z, u)));
    add(part("Imag", RealDiv(s, z, u)));
    add(part("Real", Square(s, z)));
    add(part("Imag", Exp(s, Mul(s, z, cplx(Const(s, 0.3f), Const(s, 0.f))))));
    add(part("Real", Log(s, z)));
    add(AddNode1(s, "ComplexAbs", {z}, {{"Tout", Attr(DT_FLOAT)}}));
    add(AddNode1(s, "Angle", {u}, {{"Tout", Attr(DT_FLOAT)}}));
    add(part("Real", Mul(s, AddNode1(s, "Conj", {z}), u)));
    add(part("Imag", Mul(s, AddNode1(s, "ConjugateTranspose",
                                      {z, Const(s, {1, 0})}),
                         AddNode1(s, "ConjugateTranspose",
                                  {u, Const(s, {1, 0})}))));
    add(part("Real", MatMul(s, z, cplx(w, Mul(s, w, Const(s, -1.f))))));
    for (const char* op : {"FFT", "FFT2D"}) add(part("Real", AddNode1(s, op, {z})));
    for (const char* op : {"IFFT", "IFFT2D"}) add(part("Imag", AddNode1(s, op, {u})));
    Output zb = cplx(batch, Mul(s, batch, batch));
    add(part("Real", AddNode1(s, "FFT3D", {zb})));
    add(part("Imag", AddNode1(s, "IFFT3D", {zb})));
  }
  // The real FFTs. TensorFlow differentiates RFFT, IRFFT and their 2D
  // forms when no dim is cropped; those are compared with tf.gradients of
  // the same term. The 3D forms (no gradient in TensorFlow) and cropped
  // inputs (TensorFlow's formula assumes none) are compared with
  // TensorFlow's gradient of a twin built from FFT, IFFT, slices and
  // concats, equal in value: Weft's gradient of the term against
  // tf.gradients of the twin (kept out of "loss").
  std::vector<std::pair<Output, Output>> twinned;  // (term, twin)
  {
    const char* const kFft[] = {"FFT", "FFT2D", "FFT3D"};
    const char* const kIfft[] = {"IFFT", "IFFT2D", "IFFT3D"};
    const char* const kRfft[] = {"RFFT", "RFFT2D", "RFFT3D"};
    const char* const kIrfft[] = {"IRFFT", "IRFFT2D", "IRFFT3D"};
    auto cplx = [&](const Output& re, const Output& im) {
      return AddNode1(s, "Complex", {re, im}, {{"Tout", Attr(DT_COMPLEX64)}});
    };
    auto part = [&](const char* op, const Output& v) {
      return AddNode1(s, op, {v}, {{"Tout", Attr(DT_FLOAT)}});
    };
    // v[..., b_1:e_1, .., b_r:e_r] over the last r dims.
    auto inner = [&](const Output& v, std::vector<int32_t> b,
                     std::vector<int32_t> e) {
      std::vector<int32_t> one(b.size() + 1, 1);
      b.insert(b.begin(), 0);
      e.insert(e.begin(), 0);
      return AddNode1(s, "StridedSlice", {v, Vec(s, b), Vec(s, e), Vec(s, one)},
                      {{"ellipsis_mask", Attr(1)}});
    };
    // A real loss of a complex spectrum that reads both parts.
    Output mix = cplx(Const(s, 0.6f), Const(s, -0.8f));
    auto of_spectrum = [&](const Output& t) {
      return testing_builder::SumOfSquares(s, part("Real", Mul(s, t, mix)));
    };
    auto rfft = [&](const Output& v, const std::vector<int32_t>& n) {
      const int r = static_cast<int>(n.size());
      return AddNode1(s, kRfft[r - 1], {v, Vec(s, n)},
                      {{"Tcomplex", Attr(DT_COMPLEX64)}});
    };
    auto irfft = [&](const Output& v, const std::vector<int32_t>& n) {
      const int r = static_cast<int>(n.size());
      return AddNode1(s, kIrfft[r - 1], {v, Vec(s, n)},
                      {{"Treal", Attr(DT_FLOAT)}});
    };
    auto zeros_from = [&](int r) { return std::vector<int32_t>(r, 0); };
    // RFFT(v, n) as FFT of the cropped v, cut to the half spectrum.
    auto rfft_twin = [&](const Output& v, const std::vector<int32_t>& n) {
      const int r = static_cast<int>(n.size());
      Output cut = inner(v, zeros_from(r), n);
      Output full = AddNode1(s, kFft[r - 1], {cplx(cut, ZerosLike(s, cut))});
      std::vector<int32_t> half = n;
      half.back() = n.back() / 2 + 1;
      return inner(full, zeros_from(r), half);
    };
    // IRFFT(v, n) of a rank-`rank` v: the outer axes inverted (moved
    // innermost for it), then each line completed with the conjugates of
    // its mirrored frequencies and inverted; its real part.
    auto irfft_twin = [&](const Output& v, const std::vector<int32_t>& n,
                          int rank) {
      const int r = static_cast<int>(n.size());
      const int32_t m = n.back(), h = m / 2 + 1;
      std::vector<int32_t> half = n;
      half.back() = h;
      Output z = inner(v, zeros_from(r), half);
      if (r > 1) {
        std::vector<int32_t> to, from(rank);
        for (int d = 0; d < rank - r; ++d) to.push_back(d);
        to.push_back(rank - 1);
        for (int d = rank - r; d < rank - 1; ++d) to.push_back(d);
        for (int d = 0; d < rank; ++d) from[to[d]] = d;
        z = Transpose(s, AddNode1(s, kIfft[r - 2],
                                  {Transpose(s, z, Vec(s, to))}),
                      Vec(s, from));
      }
      std::vector<int32_t> b(r, 0), e = half;
      b.back() = 1;
      e.back() = m - h + 1;
      Output mirror = AddNode1(
          s, "Conj",
          {AddNode1(s, "ReverseV2", {inner(z, b, e), Vec(s, {-1})})});
      return part("Real",
                  AddNode1(s, "IFFT", {ConcatV2(s, {z, mirror}, Const(s, -1))}));
    };
    Output lifted = AddV2(s, row, Const(s, 2.f));
    Output z = cplx(x, lifted);                        // [3, 4]
    Output zb = cplx(batch, Mul(s, batch, batch));     // [2, 3, 4]
    // TensorFlow's own gradients: no dim cropped.
    add(of_spectrum(rfft(x, {4})));         // even n
    add(of_spectrum(rfft(sig, {5})));       // odd n
    add(of_spectrum(rfft(batch, {3, 4})));
    add(of_spectrum(rfft(sig, {3, 5})));
    add(irfft(z, {6}));                     // even n, 4 = 6/2+1 frequencies
    add(irfft(z, {7}));                     // odd n
    add(irfft(zb, {3, 6}));
    add(irfft(zb, {3, 7}));
    // Twins: cropped inputs and the 3D forms (and the 1D and 2D forms
    // again, which checks the twins themselves).
    for (const auto& n : std::vector<std::vector<int32_t>>{
             {4}, {5}, {3}, {1}, {3, 5}, {2, 4}, {3, 3},
             {2, 3, 5}, {2, 3, 4}, {1, 2, 3}, {2, 2, 2}}) {
      twinned.push_back({of_spectrum(rfft(sig, n)),
                         of_spectrum(rfft_twin(sig, n))});
    }
    for (const auto& n : std::vector<std::vector<int32_t>>{
             {6}, {7}, {5}, {4}, {2}, {3, 6}, {2, 5}, {3, 4},
             {2, 3, 6}, {2, 3, 7}, {2, 2, 4}, {1, 3, 5}}) {
      twinned.push_back(
          {testing_builder::SumOfSquares(s, irfft(zb, n)),
           testing_builder::SumOfSquares(s, irfft_twin(zb, n, 3))});
    }
  }
  // A gradient penalty: TensorFlow differentiates Weft's gradient graph
  // (MatMul, BiasAdd and the activations' *Grad ops) a second time.
  Scope inner_scope = root.NewSubScope("penalty");
  Output bias = Slice(inner_scope, Tile(inner_scope, row, Const(s, {2})),
                      Const(s, {0}), Const(s, {5}));  // [5] from row
  Output pre = BiasAdd(inner_scope, MatMul(inner_scope, x, w), bias);
  Output act = AddN(inner_scope,
                    {Tanh(inner_scope, pre), Sigmoid(inner_scope, pre),
                     Relu(inner_scope, pre),
                     AddNode1(inner_scope, "Softplus", {pre}),
                     AddNode1(inner_scope, "Elu", {pre})});
  Output inner = Sum(inner_scope, Mul(inner_scope, act, act),
                     Const(inner_scope, {0, 1}));
  std::vector<Output> dinner;
  if (!AddGradients(inner_scope, {inner}, {x}, {}, &dinner).ok()) {
    std::cerr << "error: " << root.status() << "\n";
    return 1;
  }
  add(dinner[0]);
  Output loss = AddN(root.WithOpName("loss"), terms);
  const std::vector<Output> xs = {x, batch, w, row, lo, hi, label_logits,
                                  sig};
  // Each term's gradients, so that TensorFlow checks every op's gradient on
  // its own (in the sum, a small error in one would be lost), and the sum's.
  std::vector<Output> grads, grad_xs, grad_ys;
  // Each pair: Weft differentiates the first; TensorFlow, the second.
  std::vector<std::pair<Output, Output>> checks = twinned;
  for (const Output& y : terms) checks.push_back({y, y});
  checks.push_back({loss, loss});
  for (const auto& [y, compared] : checks) {
    std::vector<Output> g;
    if (!AddGradients(root, {y}, xs, {}, &g).ok()) {
      std::cerr << "error: " << root.status() << "\n";
      return 1;
    }
    for (size_t i = 0; i < xs.size(); ++i) {
      grads.push_back(g[i]);
      grad_xs.push_back(xs[i]);
      grad_ys.push_back(compared);
    }
  }
  return testing_builder::DumpGraphAndValues(root, {loss}, grad_xs, grads,
                                             argv[1], argv[2], grad_ys);
}

}  // namespace
}  // namespace weft

int main(int argc, char** argv) { return weft::Main(argc, argv); }
