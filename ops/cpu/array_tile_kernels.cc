// Kernels that replicate or surround elements: Tile, BroadcastTo, Pad and
// PadV2.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/array_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

std::vector<int64_t> RowMajorStrides(const TensorShape& s) {
  std::vector<int64_t> strides(s.dims(), 1);
  for (int d = s.dims() - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * s.dim_size(d + 1);
  }
  return strides;
}

// out = in tiled: each output row (the innermost dim) reads the input row
// at its index modulo the input's dims, repeated along the innermost dim's
// multiple. Rows are independent, so they spread over the intra-op pool
// (batch norm's gradient tiles [1, 1, 1, C] to a whole activation).
template <typename T>
void TileRows(OpKernelContext* c, const T* in, T* out, const TensorShape& in_shape,
              const TensorShape& out_shape, const std::vector<int64_t>& in_strides) {
  const int rank = in_shape.dims();
  const int64_t in_inner = in_shape.dim_size(rank - 1);
  const int64_t out_inner = out_shape.dim_size(rank - 1);
  const int64_t rows = out_shape.num_elements() / out_inner;
  ParallelRange(c, rows, out_inner + 8, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t rest = row, src = 0;
      for (int d = rank - 2; d >= 0; --d) {
        const int64_t i = rest % out_shape.dim_size(d);
        rest /= out_shape.dim_size(d);
        src += (i % in_shape.dim_size(d)) * in_strides[d];
      }
      T* o = out + row * out_inner;
      for (int64_t k = 0; k < out_inner; k += in_inner) {
        std::copy(in + src, in + src + in_inner, o + k);
      }
    }
  });
}

class TileOp : public OpKernel {
 public:
  explicit TileOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    std::vector<int64_t> mult;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "Tile's multiples", &mult));
    OP_REQUIRES(c, static_cast<int>(mult.size()) == in.dims(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected multiples argument to be a vector of length ",
                    in.dims(), " but got length ", mult.size(),
                    " (input shape ", in.shape().DebugString(), ")")));
    std::vector<int64_t> dims;
    for (int d = 0; d < in.dims(); ++d) {
      OP_REQUIRES(c, mult[d] >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Expected multiples[", d, "] >= 0, but got ", mult[d])));
      OP_REQUIRES(c, mult[d] == 0 || in.dim_size(d) <= INT64_MAX / mult[d],
                  absl::InvalidArgumentError("Tile output is too large"));
      dims.push_back(in.dim_size(d) * mult[d]);
    }
    TensorShape out_shape;
    OP_REQUIRES_OK(c, ShapeFromDims(dims, "Tile output", &out_shape));
    if (out_shape == in.shape()) {
      c->set_output(0, in);
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    const std::vector<int64_t> in_strides = RowMajorStrides(in.shape());
    VisitStorage(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      TileRows(c, in.data<T>(), out->data<T>(), in.shape(), out_shape, in_strides);
    });
  }
};

class BroadcastToOp : public OpKernel {
 public:
  explicit BroadcastToOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "BroadcastTo's shape", &dims));
    TensorShape out_shape;
    OP_REQUIRES_OK(c, ShapeFromDims(dims, "BroadcastTo's shape", &out_shape));
    std::vector<int64_t> strides;
    OP_REQUIRES(c, BroadcastStrides(in.shape(), out_shape, &strides),
                absl::InvalidArgumentError(absl::StrCat(
                    "Unable to broadcast tensor of shape ",
                    in.shape().DebugString(), " to tensor of shape ",
                    out_shape.DebugString())));
    if (out_shape == in.shape()) {
      c->set_output(0, in);
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    const int rank = out_shape.dims();
    const int64_t inner = out_shape.dim_size(rank - 1);
    const int64_t inner_stride = strides[rank - 1];
    const int64_t rows = out->NumElements() / inner;
    VisitStorage(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      std::vector<int64_t> idx(rank, 0);
      int64_t offset = 0;
      for (int64_t row = 0; row < rows; ++row) {
        T* o = dst + row * inner;
        if (inner_stride == 0) {
          std::fill_n(o, inner, src[offset]);
        } else {
          std::copy(src + offset, src + offset + inner, o);
        }
        for (int d = rank - 2; d >= 0; --d) {
          offset += strides[d];
          if (++idx[d] < out_shape.dim_size(d)) break;
          offset -= strides[d] * out_shape.dim_size(d);
          idx[d] = 0;
        }
      }
    });
  }
};

class PadOp : public OpKernel {
 public:
  explicit PadOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const Tensor& paddings = c->input(1);
    const int rank = in.dims();
    OP_REQUIRES(c, paddings.dims() == 2 && paddings.dim_size(1) == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "paddings must be a matrix with 2 columns: ",
                    paddings.shape().DebugString())));
    OP_REQUIRES(c, paddings.dim_size(0) == rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "The first dimension of paddings must be the rank of "
                    "inputs", paddings.shape().DebugString(), " ",
                    in.shape().DebugString())));
    std::vector<int64_t> pads;
    OP_REQUIRES_OK(c, ReadIntVector(paddings.Reshaped(TensorShape({2 * rank})),
                                    "paddings", &pads));
    std::vector<int64_t> dims;
    for (int d = 0; d < rank; ++d) {
      OP_REQUIRES(c, pads[2 * d] >= 0 && pads[2 * d + 1] >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Paddings must be non-negative: ", pads[2 * d], " ",
                      pads[2 * d + 1])));
      dims.push_back(in.dim_size(d) + pads[2 * d] + pads[2 * d + 1]);
    }
    TensorShape out_shape;
    OP_REQUIRES_OK(c, ShapeFromDims(dims, "Pad output", &out_shape));
    // PadV2's third input is the fill value; Pad fills with zeros.
    const bool has_fill = c->num_inputs() == 3;
    OP_REQUIRES(c, !has_fill || c->input(2).NumElements() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "constant_values must be a scalar, got shape ",
                    c->input(2).shape().DebugString())));
    if (out_shape == in.shape()) {
      c->set_output(0, in);
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    const std::vector<int64_t> out_strides = RowMajorStrides(out_shape);
    VisitStorage(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = out->data<T>();
      std::fill_n(dst, out->NumElements(),
                  has_fill ? c->input(2).data<T>()[0] : T{});
      if (in.NumElements() == 0) return;
      const T* src = in.data<T>();
      const int64_t inner = in.dim_size(rank - 1);
      const int64_t rows = in.NumElements() / inner;
      std::vector<int64_t> idx(rank, 0);
      for (int64_t row = 0; row < rows; ++row) {
        int64_t offset = pads[2 * (rank - 1)];
        for (int d = 0; d < rank - 1; ++d) {
          offset += (idx[d] + pads[2 * d]) * out_strides[d];
        }
        std::copy(src + row * inner, src + (row + 1) * inner, dst + offset);
        for (int d = rank - 2; d >= 0; --d) {
          if (++idx[d] < in.dim_size(d)) break;
          idx[d] = 0;
        }
      }
    });
  }
};

}  // namespace

void RegisterArrayTileKernels(KernelRegistry* r) {
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", PodAndStringTypes());
  };
  r->Register(def("Tile"), MakeKernel<TileOp>);
  r->Register(def("BroadcastTo"), MakeKernel<BroadcastToOp>);
  r->Register(def("Pad"), MakeKernel<PadOp>);
  r->Register(def("PadV2"), MakeKernel<PadOp>);
}

}  // namespace weft
