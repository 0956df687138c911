// Window geometry of the volumetric (NDHWC) convolution and pooling kernels:
// attr parsing with TensorFlow's checks, and the output sizes and padding
// per spatial dim (planes, rows, cols), k_eff = (k - 1) * dilation + 1:
//   VALID: out = ceil((in - k_eff + 1) / s),  pad_before = 0
//   SAME:  out = ceil(in / s),  pad_before = max(0, (out - 1) * s + k_eff - in) / 2
//
//   Window3Attrs attrs;
//   c->SetStatus(ParseWindow3Attrs(c, /*pool=*/false, &attrs));
//   absl::StatusOr<Window3Dims> d =
//       ComputeWindow3Dims(attrs, input.shape(), filter_dims, out_depth);
#ifndef WEFT_OPS_CPU_CONV3D_GEOMETRY_H_
#define WEFT_OPS_CPU_CONV3D_GEOMETRY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/tensor_shape.h"

namespace weft {

struct Window3Attrs {
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t ksize[3] = {0, 0, 0};  // pools only
  bool same = false;              // SAME padding (else VALID)
};

// Reads strides, padding, data_format and dilations (convolutions) or ksize
// (pools); errors name the attr. NCDHW is INVALID_ARGUMENT, as in
// TensorFlow's CPU kernels.
absl::Status ParseWindow3Attrs(OpKernelConstruction* c, bool pool,
                               Window3Attrs* attrs);

// Sizes of one application on an NDHWC input.
struct Window3Dims {
  int64_t batch = 0, in_depth = 0, out_depth = 0;
  int64_t in[3] = {0, 0, 0};    // planes, rows, cols
  int64_t win[3] = {0, 0, 0};   // filter or ksize (undilated)
  int64_t stride[3] = {1, 1, 1};
  int64_t dil[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0};   // padding before
  int64_t out[3] = {0, 0, 0};

  int64_t InPixels() const { return in[0] * in[1] * in[2]; }
  int64_t OutPixels() const { return out[0] * out[1] * out[2]; }
  int64_t WinSize() const { return win[0] * win[1] * win[2]; }
  TensorShape OutShape() const {
    return TensorShape({batch, out[0], out[1], out[2], out_depth});
  }
};

// INVALID_ARGUMENT if `input` is not 5-D or a window does not fit.
absl::StatusOr<Window3Dims> ComputeWindow3Dims(const Window3Attrs& attrs,
                                               const TensorShape& input,
                                               const int64_t win[3],
                                               int64_t out_depth);

// Reads a 1-D int32 or int64 sizes input of 5 non-negative entries.
absl::Status ReadSizes5(const Tensor& t, const char* name, TensorShape* shape);

// INVALID_ARGUMENT naming `what` unless t has the shape `want`.
absl::Status CheckShape(const Tensor& t, const TensorShape& want,
                        const char* what);

// Clipped range [lo, hi) of input positions of window `o` in dim `k`
// (pools: dilation 1).
inline void WindowRange(const Window3Dims& d, int k, int64_t o, int64_t* lo,
                        int64_t* hi) {
  const int64_t start = o * d.stride[k] - d.pad[k];
  *lo = start < 0 ? 0 : start;
  *hi = start + d.win[k] < d.in[k] ? start + d.win[k] : d.in[k];
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_CONV3D_GEOMETRY_H_
