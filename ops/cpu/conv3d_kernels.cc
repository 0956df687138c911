// Conv3D and its two gradients on CPU (NDHWC), as GEMMs (conv_gemm.h):
//   Conv3D:                 y[M, OC] = col[M, K] * filter[K, OC], the col
//                           (im2col) matrix made in L2-sized chunks of rows,
//                           each chunk made and multiplied on one thread;
//   Conv3DBackpropFilterV2: dfilter[K, OC] = sum over chunks of
//                           col[rows, K]^T * dy[rows, OC], a partial sum per
//                           thread, added at the end;
//   Conv3DBackpropInputV2:  gathered, not scattered: for one input row
//                           (image, plane, row) and one filter tap, the
//                           input columns that tap reaches are every
//                           stride-th, and their gradient is one GEMM
//                           dy[cols, OC] * tap[OC, IC] written at that stride
//                           (no col2im, no overlap, so threads split rows).
// M = batch * output pixels, K = filter taps * in_depth. Half and bfloat16
// compute in float (calc_type.h). RegisterNn3dKernels is here.
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/calc_type.h"
#include "ops/cpu/conv3d_geometry.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/cpu/conv_im2col.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/nn3d_kernels.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

// Rows of the col matrix per chunk: about 64K elements (256 KB of floats).
int64_t ChunkRows(int64_t k) {
  return std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(k, 1) / 12) * 12;
}

// A pointwise convolution's col matrix is the input itself.
bool ColIsInput(const Window3Dims& d) {
  for (int k = 0; k < 3; ++k) {
    if (d.win[k] != 1 || d.stride[k] != 1) return false;
  }
  return true;
}

// col[r - r0, :] for output pixels r in [r0, r0 + rows): the window of r,
// taps in (plane, row, col) order, each in_depth values, zeros outside.
template <typename C>
void Im2Col3(const Window3Dims& d, const C* x, int64_t r0, int64_t rows, C* col) {
  const int64_t ci = d.in_depth;
  const int64_t row_k = d.win[2] * ci;
  for (int64_t r = r0; r < r0 + rows; ++r) {
    int64_t rest = r;
    const int64_t ow = rest % d.out[2];
    rest /= d.out[2];
    const int64_t oh = rest % d.out[1];
    rest /= d.out[1];
    const int64_t op = rest % d.out[0];
    const int64_t b = rest / d.out[0];
    C* dst = col + (r - r0) * d.WinSize() * ci;
    for (int64_t kp = 0; kp < d.win[0]; ++kp) {
      const int64_t ip = op * d.stride[0] - d.pad[0] + kp * d.dil[0];
      for (int64_t kh = 0; kh < d.win[1]; ++kh, dst += row_k) {
        const int64_t ih = oh * d.stride[1] - d.pad[1] + kh * d.dil[1];
        if (ip < 0 || ip >= d.in[0] || ih < 0 || ih >= d.in[1]) {
          std::fill(dst, dst + row_k, C(0));
          continue;
        }
        const C* src = x + (((b * d.in[0] + ip) * d.in[1] + ih) * d.in[2]) * ci;
        for (int64_t kw = 0; kw < d.win[2]; ++kw) {
          const int64_t iw = ow * d.stride[2] - d.pad[2] + kw * d.dil[2];
          if (iw < 0 || iw >= d.in[2]) {
            std::fill(dst + kw * ci, dst + (kw + 1) * ci, C(0));
          } else {
            CopyRun(src + iw * ci, ci, dst + kw * ci);
          }
        }
      }
    }
  }
}

// The rows [r0, r0 + rows) of the col matrix: the input's own when
// pointwise, else made into `scratch`.
template <typename C>
const C* ColRows3(const Window3Dims& d, const C* x, int64_t r0, int64_t rows,
                  C* scratch) {
  if (ColIsInput(d)) return x + r0 * d.in_depth;
  Im2Col3(d, x, r0, rows, scratch);
  return scratch;
}

template <typename C>
void Conv3DForward(OpKernelContext* c, const Window3Dims& d, const C* x,
                   const C* w, C* y) {
  const int64_t m = d.batch * d.OutPixels(), k = d.WinSize() * d.in_depth,
                n = d.out_depth;
  const int64_t chunk = ChunkRows(k), chunks = (m + chunk - 1) / chunk;
  const bool col_is_input = ColIsInput(d);
  ParallelRange(c, chunks, chunk * k * n, [&](int64_t begin, int64_t end) {
    std::unique_ptr<C[]> col(col_is_input ? nullptr : new C[chunk * k]);
    for (int64_t i = begin; i < end; ++i) {
      const int64_t r0 = i * chunk, rows = std::min(chunk, m - r0);
      const C* a = ColRows3(d, x, r0, rows, col.get());
      SmallGemm<C>(rows, n, k, a, k, 1, w, n, y + r0 * n, n, false);
    }
  });
}

template <typename C>
absl::Status Conv3DBackpropFilter(OpKernelContext* c, const Window3Dims& d,
                                  const C* x, const C* g, C* dw) {
  const int64_t m = d.batch * d.OutPixels(), k = d.WinSize() * d.in_depth,
                n = d.out_depth;
  const int64_t chunk = ChunkRows(k), chunks = (m + chunk - 1) / chunk;
  ThreadPool* pool = c->intra_op_pool();
  const int64_t parts =
      chunk * k * n * chunks < kParallelMinCost ? 1 : PartsFor(pool, chunks);
  Tensor partial;
  if (parts > 1) {
    absl::Status s = c->allocate_temp(DataTypeToEnum<C>::value,
                                      TensorShape({parts - 1, k * n}), &partial);
    if (!s.ok()) return s;
  }
  ForEachPart(pool, parts, [&](int64_t p) {
    C* sum = p == 0 ? dw : partial.data<C>() + (p - 1) * k * n;
    const int64_t first = chunks * p / parts, last = chunks * (p + 1) / parts;
    if (first == last) std::fill(sum, sum + k * n, C(0));
    std::unique_ptr<C[]> col(ColIsInput(d) ? nullptr : new C[chunk * k]);
    for (int64_t i = first; i < last; ++i) {
      const int64_t r0 = i * chunk, rows = std::min(chunk, m - r0);
      const C* a = ColRows3(d, x, r0, rows, col.get());
      // sum[k, n] (+)= a[rows, k]^T * dy[rows, n]
      SmallGemm<C>(k, n, rows, a, 1, k, g + r0 * n, n, sum, n, i > first);
    }
  });
  for (int64_t p = 1; p < parts; ++p) {
    AddRun(partial.data<C>() + (p - 1) * k * n, k * n, dw);
  }
  return absl::OkStatus();
}

// The output positions o in [0, outs) with o * s == i + pad - t * dil for
// input positions i in [0, ins), as the first input position, the first o
// and the count (count <= 0: none).
struct TapRun {
  int64_t first_in = 0, first_out = 0, count = 0;
};
TapRun TapPositions(int64_t ins, int64_t outs, int64_t s, int64_t offset) {
  // i + offset == o * s, offset = pad - t * dil.
  TapRun r;
  int64_t i = ((-offset) % s + s) % s;
  int64_t o = (i + offset) / s;
  if (o < 0) {
    i += -o * s;
    o = 0;
  }
  r.first_in = i;
  r.first_out = o;
  r.count = i >= ins ? 0 : std::min(outs - o, (ins - 1 - i) / s + 1);
  return r;
}

template <typename C>
absl::Status Conv3DBackpropInput(OpKernelContext* c, const Window3Dims& d,
                                 const C* w, const C* g, C* dx) {
  const int64_t ci = d.in_depth, n = d.out_depth, taps = d.WinSize();
  // The filter per tap transposed to [n, ci], so each GEMM reads B by rows.
  Tensor wt_tensor;
  absl::Status s = c->allocate_temp(DataTypeToEnum<C>::value,
                                    TensorShape({taps, n, ci}), &wt_tensor);
  if (!s.ok()) return s;
  C* wt = wt_tensor.data<C>();
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t i = 0; i < ci; ++i) {
      for (int64_t j = 0; j < n; ++j) wt[(t * n + j) * ci + i] = w[(t * ci + i) * n + j];
    }
  }
  const int64_t in_rows = d.batch * d.in[0] * d.in[1];
  const int64_t row_size = d.in[2] * ci;
  const int64_t cost = std::max<int64_t>(1, d.out[2] * taps * n * ci /
                                                std::max<int64_t>(1, d.stride[0] * d.stride[1]));
  ParallelRange(c, in_rows, cost, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t ih = r % d.in[1], ip = (r / d.in[1]) % d.in[0],
                    b = r / (d.in[1] * d.in[0]);
      C* dst = dx + r * row_size;
      std::fill(dst, dst + row_size, C(0));
      for (int64_t kp = 0; kp < d.win[0]; ++kp) {
        const int64_t tp = ip + d.pad[0] - kp * d.dil[0];
        if (tp < 0 || tp % d.stride[0] != 0 || tp / d.stride[0] >= d.out[0]) continue;
        for (int64_t kh = 0; kh < d.win[1]; ++kh) {
          const int64_t th = ih + d.pad[1] - kh * d.dil[1];
          if (th < 0 || th % d.stride[1] != 0 || th / d.stride[1] >= d.out[1]) continue;
          const C* dy_row = g + (((b * d.out[0] + tp / d.stride[0]) * d.out[1] +
                                  th / d.stride[1]) * d.out[2]) * n;
          for (int64_t kw = 0; kw < d.win[2]; ++kw) {
            const TapRun run = TapPositions(d.in[2], d.out[2], d.stride[2],
                                            d.pad[2] - kw * d.dil[2]);
            if (run.count <= 0) continue;
            const int64_t tap = (kp * d.win[1] + kh) * d.win[2] + kw;
            SmallGemm<C>(run.count, ci, n, dy_row + run.first_out * n, n, 1,
                         wt + tap * n * ci, ci, dst + run.first_in * ci,
                         d.stride[2] * ci, true);
          }
        }
      }
    }
  });
  return absl::OkStatus();
}

absl::Status CheckFilter(const TensorShape& f, int64_t in_depth,
                         const char* what) {
  if (f.dims() != 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be 5-dimensional [planes, rows, cols, in_depth, "
        "out_depth], got shape ", f.DebugString()));
  }
  if (f.dim_size(3) != in_depth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input and filter must have the same depth: ", in_depth, " vs ",
        f.dim_size(3), " (", what, " ", f.DebugString(),
        "; grouped convolution is not supported on CPU)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Window3Dims> ConvDims(const Window3Attrs& a, const TensorShape& in,
                                     const TensorShape& f, const char* what) {
  if (in.dims() != 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be 5-dimensional (NDHWC), got shape ", in.DebugString()));
  }
  absl::Status s = CheckFilter(f, in.dim_size(4), what);
  if (!s.ok()) return s;
  const int64_t win[3] = {f.dim_size(0), f.dim_size(1), f.dim_size(2)};
  return ComputeWindow3Dims(a, in, win, f.dim_size(4));
}

class Conv3DBase : public OpKernel {
 public:
  explicit Conv3DBase(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ParseWindow3Attrs(c, /*pool=*/false, &attrs_));
    set_expensive(true);
  }

 protected:
  Window3Attrs attrs_;
};

template <typename T>
class Conv3DOp : public Conv3DBase {
 public:
  using Conv3DBase::Conv3DBase;
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& filter = c->input(1);
    absl::StatusOr<Window3Dims> d =
        ConvDims(attrs_, input.shape(), filter.shape(), "filter");
    OP_REQUIRES_OK(c, d.status());
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, d->OutShape(), &out));
    if (out->NumElements() == 0) return;
    CalcBuffer<T> x, w, y;
    OP_REQUIRES_OK(c, CalcInput<T>(c, input, &x));
    OP_REQUIRES_OK(c, CalcInput<T>(c, filter, &w));
    OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &y));
    if (input.NumElements() == 0 || filter.NumElements() == 0) {
      std::fill(y.out, y.out + out->NumElements(), CalcType<T>(0));
    } else {
      Conv3DForward(c, *d, x.data, w.data, y.out);
    }
    FinishCalcOutput<T>(y, out);
  }
};

template <typename T>
class Conv3DBackpropInputOp : public Conv3DBase {
 public:
  using Conv3DBase::Conv3DBase;
  void Compute(OpKernelContext* c) override {
    TensorShape in_shape;
    OP_REQUIRES_OK(c, ReadSizes5(c->input(0), "input_sizes", &in_shape));
    const Tensor& filter = c->input(1);
    const Tensor& dy = c->input(2);
    absl::StatusOr<Window3Dims> d =
        ConvDims(attrs_, in_shape, filter.shape(), "filter");
    OP_REQUIRES_OK(c, d.status());
    OP_REQUIRES_OK(c, CheckShape(dy, d->OutShape(), "out_backprop"));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in_shape, &out));
    if (out->NumElements() == 0) return;
    CalcBuffer<T> w, g, dx;
    OP_REQUIRES_OK(c, CalcInput<T>(c, filter, &w));
    OP_REQUIRES_OK(c, CalcInput<T>(c, dy, &g));
    OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &dx));
    if (dy.NumElements() == 0 || filter.NumElements() == 0) {
      std::fill(dx.out, dx.out + out->NumElements(), CalcType<T>(0));
    } else {
      OP_REQUIRES_OK(c, Conv3DBackpropInput(c, *d, w.data, g.data, dx.out));
    }
    FinishCalcOutput<T>(dx, out);
  }
};

template <typename T>
class Conv3DBackpropFilterOp : public Conv3DBase {
 public:
  using Conv3DBase::Conv3DBase;
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    TensorShape f_shape;
    OP_REQUIRES_OK(c, ReadSizes5(c->input(1), "filter_sizes", &f_shape));
    const Tensor& dy = c->input(2);
    absl::StatusOr<Window3Dims> d = ConvDims(attrs_, input.shape(), f_shape, "filter_sizes");
    OP_REQUIRES_OK(c, d.status());
    OP_REQUIRES_OK(c, CheckShape(dy, d->OutShape(), "out_backprop"));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, f_shape, &out));
    if (out->NumElements() == 0) return;
    CalcBuffer<T> x, g, dw;
    OP_REQUIRES_OK(c, CalcInput<T>(c, input, &x));
    OP_REQUIRES_OK(c, CalcInput<T>(c, dy, &g));
    OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &dw));
    if (dy.NumElements() == 0) {
      std::fill(dw.out, dw.out + out->NumElements(), CalcType<T>(0));
    } else {
      OP_REQUIRES_OK(c, Conv3DBackpropFilter(c, *d, x.data, g.data, dw.out));
    }
    FinishCalcOutput<T>(dw, out);
  }
};

template <typename T>
void RegisterConv3DKernelsFor(KernelRegistry* r) {
  const DataType t = DataTypeToEnum<T>::value;
  r->Register(KernelDef("Conv3D", kDeviceTypeCpu).TypeConstraint("T", t),
              MakeKernel<Conv3DOp<T>>);
  r->Register(KernelDef("Conv3DBackpropInputV2", kDeviceTypeCpu)
                  .TypeConstraint("T", t)
                  .HostMemory("input_sizes"),
              MakeKernel<Conv3DBackpropInputOp<T>>);
  r->Register(KernelDef("Conv3DBackpropFilterV2", kDeviceTypeCpu)
                  .TypeConstraint("T", t)
                  .HostMemory("filter_sizes"),
              MakeKernel<Conv3DBackpropFilterOp<T>>);
}

}  // namespace

void RegisterNn3dKernels(KernelRegistry* r) {
  RegisterConv3DKernelsFor<float>(r);
  RegisterConv3DKernelsFor<double>(r);
  RegisterConv3DKernelsFor<Half>(r);
  RegisterConv3DKernelsFor<BFloat16>(r);
  RegisterPool3DKernels(r);
  RegisterLrnKernels(r);
  RegisterPoolArgmaxKernels(r);
}

}  // namespace weft
