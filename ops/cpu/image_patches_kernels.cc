// ExtractImagePatches on CPU: every ksize_rows x ksize_cols window
// (dilated by rates, moved by strides, VALID or SAME padding with zeros,
// the geometry of the convolutions: conv_geometry.h) of an NHWC image,
// flattened in (row, col, channel) order into the output's depth. The op
// only copies, so one kernel per element size serves every dtype Weft
// holds that TensorFlow registers (the integers, half, bfloat16, float,
// double). Work is split
// over output rows.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

class ExtractImagePatchesOp : public OpKernel {
 public:
  explicit ExtractImagePatchesOp(OpKernelConstruction* c) : OpKernel(c) {
    std::vector<int64_t> strides, rates;
    c->SetStatus(c->GetAttr("ksizes", &ksizes_));
    c->SetStatus(c->GetAttr("strides", &strides));
    c->SetStatus(c->GetAttr("rates", &rates));
    c->SetStatus(c->GetAttr("padding", &attrs_.padding));
    if (!c->status().ok()) return;
    if (ksizes_.size() != 4 || strides.size() != 4 || rates.size() != 4) {
      c->SetStatus(absl::InvalidArgumentError(
          "Sliding window ksizes, strides and rates fields must specify 4 dimensions"));
      return;
    }
    if (ksizes_[0] != 1 || ksizes_[3] != 1 || strides[0] != 1 || strides[3] != 1 ||
        rates[0] != 1 || rates[3] != 1) {
      c->SetStatus(absl::UnimplementedError(
          "Only support ksizes, strides and rates across rows and cols (ksizes, strides "
          "and rates must be 1 in the batch and depth dimensions)"));
      return;
    }
    for (int i = 1; i <= 2; ++i) {
      if (ksizes_[i] <= 0 || strides[i] <= 0 || rates[i] <= 0) {
        c->SetStatus(absl::InvalidArgumentError(
            "ksizes, strides and rates must be positive (ksizes, strides, rates)"));
        return;
      }
    }
    attrs_.stride_rows = strides[1];
    attrs_.stride_cols = strides[2];
    attrs_.dil_rows = rates[1];
    attrs_.dil_cols = rates[2];
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES(c, in.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be 4-dimensional", in.shape().DebugString(), " (images)")));
    const int64_t depth = in.dim_size(3);
    OP_REQUIRES(c, ksizes_[1] * ksizes_[2] <= (int64_t{1} << 40) / std::max<int64_t>(depth, 1),
                absl::InvalidArgumentError("ksizes are too large (ksizes)"));
    absl::StatusOr<WindowDims> d = ComputeWindowDims(attrs_, in.shape(), ksizes_[1],
                                                     ksizes_[2], ksizes_[1] * ksizes_[2] * depth);
    OP_REQUIRES_OK(c, d.status());
    absl::StatusOr<TensorShape> shape =
        TensorShape::Build({d->batch, d->out_rows, d->out_cols, d->out_depth});
    OP_REQUIRES_OK(c, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const size_t elem = DataTypeSize(in.dtype());
    const char* src = static_cast<const char*>(in.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    const WindowDims g = *d;
    const int64_t pixel = depth * static_cast<int64_t>(elem);
    ParallelRange(c, g.batch * g.out_rows, g.out_cols * g.out_depth, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / g.out_rows, oy = r % g.out_rows;
        char* o = dst + r * g.out_cols * g.out_depth * static_cast<int64_t>(elem);
        for (int64_t ox = 0; ox < g.out_cols; ++ox) {
          for (int64_t ky = 0; ky < g.win_rows; ++ky) {
            const int64_t y = oy * g.stride_rows - g.pad_top + ky * g.dil_rows;
            for (int64_t kx = 0; kx < g.win_cols; ++kx, o += pixel) {
              const int64_t x = ox * g.stride_cols - g.pad_left + kx * g.dil_cols;
              if (y < 0 || y >= g.in_rows || x < 0 || x >= g.in_cols) {
                std::memset(o, 0, pixel);
              } else {
                std::memcpy(o, src + ((b * g.in_rows + y) * g.in_cols + x) * pixel, pixel);
              }
            }
          }
        }
      }
    });
  }

 private:
  std::vector<int64_t> ksizes_;
  WindowAttrs attrs_;
};

}  // namespace

void RegisterImagePatchesKernels(KernelRegistry* r) {
  for (DataType t : {DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32,
                     DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_COMPLEX64,
                     DT_COMPLEX128}) {
    r->Register(KernelDef("ExtractImagePatches", kDeviceTypeCpu).TypeConstraint("T", t),
                MakeKernel<ExtractImagePatchesOp>);
  }
}

}  // namespace weft
