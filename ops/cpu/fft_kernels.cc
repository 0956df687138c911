// FFT, IFFT, RFFT and IRFFT over the innermost 1, 2 or 3 dims (TensorFlow's
// spectral ops; tf.signal.fft*, stft).
//
// A multi-dimensional transform is 1-D transforms along each of its axes in
// turn (the DFT is separable); each 1-D transform is Eigen's FFT module
// (kissfft: mixed radix 2/3/4/5, a generic butterfly for other factors).
// The lines of one axis are independent and are sharded over the intra-op
// pool, each shard with its own Eigen::FFT (its plans are not shareable).
//
// As in TensorFlow: inverses scale by 1/n per axis; RFFT crops each
// transformed dim of its input to fft_length (a shorter input is an error)
// and keeps the fft_length[-1]/2+1 non-negative frequencies of the
// innermost; IRFFT crops its input to that half spectrum, treats it as
// Hermitian (the
// imaginary parts of the zero and Nyquist frequencies are ignored) and
// returns fft_length real values per axis.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <unsupported/Eigen/FFT>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

// Cycles one element of one 1-D transform roughly takes, per log2(n).
constexpr int64_t kCostPerElement = 8;

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

int64_t LineCost(int64_t n) {
  int64_t log2 = 1;
  while ((int64_t{1} << log2) < n) ++log2;
  return n * log2 * kCostPerElement;
}

// dst (dims `to`) = the leading corner of src (dims `from`, same rank,
// from[k] >= to[k] in every dim, which the kernel checks first): element
// [i...] of dst is src[i...].
template <typename T>
void Crop(const T* src, const std::vector<int64_t>& from, T* dst,
          const std::vector<int64_t>& to) {
  const size_t rank = to.size();
  if (Product(to, 0, rank) == 0) return;
  // Copy runs of the innermost dim, walking the others.
  std::vector<int64_t> idx(rank - 1, 0);
  for (;;) {
    int64_t s = 0, d = 0;
    for (size_t k = 0; k + 1 < rank; ++k) {
      s = s * from[k] + idx[k];
      d = d * to[k] + idx[k];
    }
    std::copy_n(src + s * from[rank - 1], to[rank - 1], dst + d * to[rank - 1]);
    int k = static_cast<int>(rank) - 2;
    for (; k >= 0; --k) {
      if (++idx[k] < to[k]) break;
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

// Complex 1-D transforms, in place, along `axis` of `data` (dims `dims`).
template <typename R>
void TransformAxis(OpKernelContext* c, std::complex<R>* data,
                   const std::vector<int64_t>& dims, size_t axis,
                   bool forward) {
  using C = std::complex<R>;
  const int64_t n = dims[axis];
  const int64_t outer = Product(dims, 0, axis);
  const int64_t inner = Product(dims, axis + 1, dims.size());
  if (n <= 1 || outer * inner == 0) return;
  ParallelRange(c, outer * inner, LineCost(n), [&](int64_t b, int64_t e) {
    Eigen::FFT<R> fft;
    std::vector<C> line(n), out(n);
    for (int64_t l = b; l < e; ++l) {
      C* base = data + (l / inner) * n * inner + l % inner;
      for (int64_t i = 0; i < n; ++i) line[i] = base[i * inner];
      if (forward) {
        fft.fwd(out.data(), line.data(), n);
      } else {
        fft.inv(out.data(), line.data(), n);
      }
      for (int64_t i = 0; i < n; ++i) base[i * inner] = out[i];
    }
  });
}

// FFT / IFFT (FFT2D, IFFT3D, ...): complex to complex, same shape.
template <typename R>
class ComplexFftOp : public OpKernel {
 public:
  ComplexFftOp(OpKernelConstruction* c, int rank, bool forward)
      : OpKernel(c), rank_(rank), forward_(forward) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES(c, in.dims() >= rank_,
                absl::InvalidArgumentError(absl::StrCat(
                    "the input of a ", rank_, "-D FFT must have rank >= ",
                    rank_, ", got shape ", in.shape().DebugString())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    if (in.NumElements() == 0) return;
    std::memcpy(out->raw_data(), in.raw_data(), in.TotalBytes());
    const std::vector<int64_t> dims(in.shape().dim_sizes().begin(),
                                    in.shape().dim_sizes().end());
    for (int a = 0; a < rank_; ++a) {
      TransformAxis<R>(c, out->data<std::complex<R>>(), dims,
                       dims.size() - rank_ + a, forward_);
    }
  }

 private:
  const int rank_;
  const bool forward_;
};

// RFFT / IRFFT (RFFT2D, IRFFT3D, ...): real to half spectrum and back.
template <typename R>
class RealFftOp : public OpKernel {
 public:
  RealFftOp(OpKernelConstruction* c, int rank, bool forward)
      : OpKernel(c), rank_(rank), forward_(forward) {}

  void Compute(OpKernelContext* c) override {
    using C = std::complex<R>;
    const Tensor& in = c->input(0);
    OP_REQUIRES(c, in.dims() >= rank_,
                absl::InvalidArgumentError(absl::StrCat(
                    "the input of a ", rank_, "-D ", forward_ ? "RFFT" : "IRFFT",
                    " must have rank >= ", rank_, ", got shape ",
                    in.shape().DebugString())));
    std::vector<int64_t> fft_length;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "fft_length", &fft_length));
    OP_REQUIRES(c, static_cast<int>(fft_length.size()) == rank_,
                absl::InvalidArgumentError(absl::StrCat(
                    "fft_length must hold ", rank_, " values, got ",
                    fft_length.size())));
    for (int64_t len : fft_length) {
      OP_REQUIRES(c, len >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "fft_length must not be negative, got ", len)));
    }
    // Dims of the real side and of the half spectrum.
    const std::vector<int64_t> in_dims(in.shape().dim_sizes().begin(),
                                       in.shape().dim_sizes().end());
    std::vector<int64_t> real_dims = in_dims;
    std::vector<int64_t> half_dims = in_dims;
    const size_t first = in_dims.size() - rank_;
    for (int a = 0; a < rank_; ++a) {
      real_dims[first + a] = fft_length[a];
      half_dims[first + a] = fft_length[a];
    }
    const int64_t n = fft_length[rank_ - 1];
    half_dims.back() = n / 2 + 1;
    // As TensorFlow: the input may be longer than the transform (it is
    // cropped), never shorter.
    const std::vector<int64_t>& need = forward_ ? real_dims : half_dims;
    for (size_t d = first; d < in_dims.size(); ++d) {
      OP_REQUIRES(c, in_dims[d] >= need[d],
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input dimension ", d, " must have length of at least ",
                      need[d], " but got: ", in_dims[d])));
    }
    const std::vector<int64_t>& out_dims = forward_ ? half_dims : real_dims;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, TensorShape(absl::MakeSpan(out_dims)), &out));
    if (out->NumElements() == 0) return;
    // A zero-length transform: nothing to transform, every value 0.
    if (Product(real_dims, 0, real_dims.size()) == 0) {
      std::memset(out->raw_data(), 0, out->TotalBytes());
      return;
    }
    const int64_t batch = Product(in_dims, 0, first);
    const int64_t lines = Product(real_dims, 0, real_dims.size() - 1);
    if (forward_) {
      // Crop, transform each innermost line to its half spectrum,
      // then the other axes.
      std::vector<R> real(Product(real_dims, 0, real_dims.size()));
      CropBatched(in.data<R>(), in_dims, real.data(), real_dims, batch,
                       first);
      C* o = out->data<C>();
      ParallelRange(c, lines, LineCost(n), [&](int64_t b, int64_t e) {
        Eigen::FFT<R> fft;
        fft.SetFlag(Eigen::FFT<R>::HalfSpectrum);
        for (int64_t l = b; l < e; ++l) {
          if (n == 1) {  // (kissfft's real transform needs n >= 2)
            o[l] = C(real[l], 0);
          } else {
            fft.fwd(o + l * (n / 2 + 1), real.data() + l * n, n);
          }
        }
      });
      for (int a = 0; a + 1 < rank_; ++a) {
        TransformAxis<R>(c, o, half_dims, first + a, /*forward=*/true);
      }
      return;
    }
    // Crop to the half spectrum, invert the outer axes, then each
    // innermost line back to n real values.
    std::vector<C> half(Product(half_dims, 0, half_dims.size()));
    CropBatched(in.data<C>(), in_dims, half.data(), half_dims, batch,
                     first);
    for (int a = 0; a + 1 < rank_; ++a) {
      TransformAxis<R>(c, half.data(), half_dims, first + a,
                       /*forward=*/false);
    }
    R* o = out->data<R>();
    ParallelRange(c, lines, LineCost(n), [&](int64_t b, int64_t e) {
      Eigen::FFT<R> fft;
      std::vector<C> line(n / 2 + 1);
      for (int64_t l = b; l < e; ++l) {
        // kissfft reads a whole half spectrum; pass a copy so the
        // Hermitian completion never reads past this line.
        std::copy_n(half.data() + l * (n / 2 + 1), n / 2 + 1, line.data());
        if (n == 1) {
          o[l] = line[0].real();
        } else {
          fft.inv(o + l * n, line.data(), n);
        }
      }
    });
  }

 private:
  // Crop of each of `batch` blocks (the dims from `first` on).
  template <typename T>
  static void CropBatched(const T* src, const std::vector<int64_t>& from,
                               T* dst, const std::vector<int64_t>& to,
                               int64_t batch, size_t first) {
    const std::vector<int64_t> f(from.begin() + first, from.end());
    const std::vector<int64_t> t(to.begin() + first, to.end());
    const int64_t fs = Product(f, 0, f.size()), ts = Product(t, 0, t.size());
    for (int64_t b = 0; b < batch; ++b) {
      Crop(src + b * fs, f, dst + b * ts, t);
    }
  }

  const int rank_;
  const bool forward_;
};

template <typename R>
void RegisterFor(KernelRegistry* r) {
  const DataType real = DataTypeToEnum<R>::value;
  const DataType complex = DataTypeToEnum<std::complex<R>>::value;
  const char* const kSuffix[] = {"", "2D", "3D"};
  for (int rank = 1; rank <= 3; ++rank) {
    for (bool forward : {true, false}) {
      const std::string suffix = kSuffix[rank - 1];
      r->Register(KernelDef((forward ? "FFT" : "IFFT") + suffix, kDeviceTypeCpu)
                      .TypeConstraint("Tcomplex", complex),
                  [rank, forward](OpKernelConstruction* c)
                      -> std::unique_ptr<OpKernel> {
                    return std::make_unique<ComplexFftOp<R>>(c, rank, forward);
                  });
      r->Register(KernelDef((forward ? "RFFT" : "IRFFT") + suffix,
                            kDeviceTypeCpu)
                      .TypeConstraint("Treal", real)
                      .TypeConstraint("Tcomplex", complex)
                      .HostMemory("fft_length"),
                  [rank, forward](OpKernelConstruction* c)
                      -> std::unique_ptr<OpKernel> {
                    return std::make_unique<RealFftOp<R>>(c, rank, forward);
                  });
    }
  }
}

}  // namespace

void RegisterFftKernels(KernelRegistry* r) {
  RegisterFor<float>(r);
  RegisterFor<double>(r);
}

}  // namespace weft
