// Window geometry shared by the convolution and pooling kernels (NHWC):
// attr parsing and validation, and TensorFlow's output-size and padding
// rules (the same as the shape functions in ops/conv_ops.cc):
//   VALID:    out = ceil((in - k_eff + 1) / s),  pad_before = 0
//   SAME:     out = ceil(in / s),
//             pad_before = max(0, (out - 1) * s + k_eff - in) / 2
//   EXPLICIT: out = (in + pad_before + pad_after - k_eff) / s + 1
// with k_eff = (k - 1) * dilation + 1.
//
//   WindowAttrs attrs;
//   c->SetStatus(ParseWindowAttrs(c, WindowKind::kConv, &attrs));
//   ...
//   absl::StatusOr<WindowDims> d =
//       ComputeWindowDims(attrs, input.shape(), f_rows, f_cols, out_depth);
#ifndef WEFT_OPS_CPU_CONV_GEOMETRY_H_
#define WEFT_OPS_CPU_CONV_GEOMETRY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/tensor_shape.h"

namespace weft {

enum class WindowKind {
  kConv,  // strides, padding, explicit_paddings, dilations; window = filter
  kPool,  // ksize, strides, padding, explicit_paddings if present
};

// Validated attrs of a conv or pool node (NHWC only).
struct WindowAttrs {
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dil_rows = 1, dil_cols = 1;
  int64_t ksize_rows = 0, ksize_cols = 0;  // pools only
  std::string padding;                     // SAME, VALID or EXPLICIT
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;  // EXPLICIT
};

// Reads and checks the attrs; errors name the attr. NCHW is UNIMPLEMENTED.
absl::Status ParseWindowAttrs(OpKernelConstruction* c, WindowKind kind,
                              WindowAttrs* attrs);

// Sizes of one conv / pool application on an NHWC input.
struct WindowDims {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t win_rows = 0, win_cols = 0;  // filter or ksize (undilated)
  int64_t stride_rows = 1, stride_cols = 1, dil_rows = 1, dil_cols = 1;
  int64_t pad_top = 0, pad_left = 0;  // padding before (rows, cols)
  int64_t out_rows = 0, out_cols = 0, out_depth = 0;
};

// INVALID_ARGUMENT if the input is not 4-D or the window does not fit.
absl::StatusOr<WindowDims> ComputeWindowDims(const WindowAttrs& attrs,
                                             const TensorShape& input,
                                             int64_t win_rows, int64_t win_cols,
                                             int64_t out_depth);

// Reads a conv backprop's 1-D int32 sizes input of 4 entries (`name`
// names it in errors).
absl::Status ReadSizes(const Tensor& t, const char* name, TensorShape* shape);

// Checks out_backprop's shape is what the forward conv would have produced.
absl::Status CheckBackprop(const WindowDims& d, const Tensor& dy);

}  // namespace weft

#endif  // WEFT_OPS_CPU_CONV_GEOMETRY_H_
