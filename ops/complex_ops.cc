// The complex-number ops: Complex (build from real and imaginary parts),
// Real, Imag, Angle, ComplexAbs, Conj, and the spectral ops (FFT, IFFT,
// RFFT, IRFFT in 1, 2 and 3 dimensions). ConjugateTranspose is beside
// Transpose (array_ops.cc).
// OpDefs match TensorFlow 2.21's (tests/ops/op_def_compat_test checks).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

const char kComplexTypes[] = "{complex64, complex128}";

// A complex input, a real output of the same precision (Real, Imag, ...).
void ComplexToReal(OpRegistry* r, const char* name, const char* in,
                   const char* out) {
  r->Register(OpDefBuilder(name)
                  .Input(absl::StrCat(in, ": T"))
                  .Output(absl::StrCat(out, ": Tout"))
                  .Attr("T: {complex64, complex128} = DT_COMPLEX64")
                  .Attr("Tout: {float, double} = DT_FLOAT"),
              UnchangedShape);
}

// RFFT/IRFFT shapes: the last `rank` dims become fft_length, the innermost
// fft_length/2+1 on the complex side (RFFT's output); unknown dims where
// fft_length is not a constant.
ShapeFn RealFftShape(int rank, bool forward) {
  return [rank, forward](InferenceContext* c) -> absl::Status {
    WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, rank));
    const PartialShape& in = c->input(0);
    if (!in.known_rank()) {
      c->set_output(0, PartialShape::UnknownRank());
      return absl::OkStatus();
    }
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    const Tensor* len = c->input_tensor(1);
    for (int i = 0; i < rank; ++i) {
      int64_t& d = dims[dims.size() - rank + i];
      if (len == nullptr || len->NumElements() != rank) {
        d = -1;
        continue;
      }
      const int64_t n = len->data<int32_t>()[i];
      d = forward && i == rank - 1 ? n / 2 + 1 : n;
    }
    c->set_output(0, PartialShape(dims));
    return absl::OkStatus();
  };
}

ShapeFn FftShape(int rank) {
  return [rank](InferenceContext* c) -> absl::Status {
    WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, rank));
    return UnchangedShape(c);
  };
}

}  // namespace

void RegisterComplexOps(OpRegistry* r) {
  r->Register(OpDefBuilder("Complex")
                  .Input("real: T")
                  .Input("imag: T")
                  .Output("out: Tout")
                  .Attr("T: {float, double} = DT_FLOAT")
                  .Attr("Tout: {complex64, complex128} = DT_COMPLEX64"),
              BroadcastBinaryOpShape);
  ComplexToReal(r, "Real", "input", "output");
  ComplexToReal(r, "Imag", "input", "output");
  ComplexToReal(r, "Angle", "input", "output");
  ComplexToReal(r, "ComplexAbs", "x", "y");
  r->Register(OpDefBuilder("Conj")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr("T: {complex64, complex128, variant} = DT_COMPLEX64"),
              UnchangedShape);

  const char* const kSuffix[] = {"", "2D", "3D"};
  for (int rank = 1; rank <= 3; ++rank) {
    for (const char* base : {"FFT", "IFFT"}) {
      r->Register(OpDefBuilder(absl::StrCat(base, kSuffix[rank - 1]))
                      .Input("input: Tcomplex")
                      .Output("output: Tcomplex")
                      .Attr(absl::StrCat("Tcomplex: ", kComplexTypes,
                                         " = DT_COMPLEX64")),
                  FftShape(rank));
    }
    r->Register(OpDefBuilder(absl::StrCat("RFFT", kSuffix[rank - 1]))
                    .Input("input: Treal")
                    .Input("fft_length: int32")
                    .Output("output: Tcomplex")
                    .Attr("Treal: {float, double} = DT_FLOAT")
                    .Attr(absl::StrCat("Tcomplex: ", kComplexTypes,
                                       " = DT_COMPLEX64")),
                RealFftShape(rank, /*forward=*/true));
    r->Register(OpDefBuilder(absl::StrCat("IRFFT", kSuffix[rank - 1]))
                    .Input("input: Tcomplex")
                    .Input("fft_length: int32")
                    .Output("output: Treal")
                    .Attr("Treal: {float, double} = DT_FLOAT")
                    .Attr(absl::StrCat("Tcomplex: ", kComplexTypes,
                                       " = DT_COMPLEX64")),
                RealFftShape(rank, /*forward=*/false));
  }
}

}  // namespace weft
