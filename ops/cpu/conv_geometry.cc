#include "ops/cpu/conv_geometry.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace weft {
namespace {

absl::Status GetNhwcList(OpKernelConstruction* c, const char* name,
                         std::vector<int64_t>* v) {
  absl::Status s = c->GetAttr(name, v);
  if (!s.ok()) return s;
  if (v->size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must have 4 entries (one per dimension), got ", v->size()));
  }
  for (int64_t x : *v) {
    if (x < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " must be >= 1, got [", absl::StrJoin(*v, ","), "]"));
    }
  }
  if ((*v)[0] != 1 || (*v)[3] != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " in the batch and depth dimensions must be 1 (not supported); "
        "got [", absl::StrJoin(*v, ","), "]"));
  }
  return absl::OkStatus();
}

absl::Status OneDim(const char* what, int64_t in, int64_t k, int64_t d,
                    int64_t s, const WindowAttrs& a, int64_t pb, int64_t pa,
                    int64_t* out, int64_t* pad_before) {
  const int64_t k_eff = (k - 1) * d + 1;
  if (a.padding == "VALID") {
    *out = in >= k_eff ? (in - k_eff + s) / s : 0;
    *pad_before = 0;
  } else if (a.padding == "SAME") {
    *out = (in + s - 1) / s;
    *pad_before = std::max<int64_t>(0, (*out - 1) * s + k_eff - in) / 2;
  } else {
    const int64_t padded = in + pb + pa;
    *out = padded >= k_eff ? (padded - k_eff) / s + 1 : 0;
    *pad_before = pb;
  }
  if (*out <= 0 && in > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", what, " window (", k_eff, " after dilation) is larger than the ",
        "input's ", what, " (", in, ") with ", a.padding, " padding"));
  }
  if (*out < 0) *out = 0;
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseWindowAttrs(OpKernelConstruction* c, WindowKind kind,
                              WindowAttrs* a) {
  std::string format = "NHWC";
  if (c->HasAttr("data_format")) {
    absl::Status s = c->GetAttr("data_format", &format);
    if (!s.ok()) return s;
  }
  if (format != "NHWC") {
    return absl::UnimplementedError(absl::StrCat(
        c->def().op(), " on CPU supports only data_format NHWC, got ", format,
        " (TensorFlow's CPU kernel refuses it too); transpose to NHWC first"));
  }
  std::vector<int64_t> strides;
  absl::Status s = GetNhwcList(c, "strides", &strides);
  if (!s.ok()) return s;
  a->stride_rows = strides[1];
  a->stride_cols = strides[2];
  if (kind == WindowKind::kConv) {
    std::vector<int64_t> dil = {1, 1, 1, 1};
    if (c->HasAttr("dilations")) s = GetNhwcList(c, "dilations", &dil);
    if (!s.ok()) return s;
    a->dil_rows = dil[1];
    a->dil_cols = dil[2];
  } else {
    std::vector<int64_t> ksize;
    s = GetNhwcList(c, "ksize", &ksize);
    if (!s.ok()) return s;
    a->ksize_rows = ksize[1];
    a->ksize_cols = ksize[2];
  }
  s = c->GetAttr("padding", &a->padding);
  if (!s.ok()) return s;
  if (a->padding == "EXPLICIT") {
    std::vector<int64_t> p;
    s = c->GetAttr("explicit_paddings", &p);
    if (!s.ok()) return s;
    if (p.size() != 8) {
      return absl::InvalidArgumentError(absl::StrCat(
          "explicit_paddings must have 8 entries for padding=EXPLICIT, got ",
          p.size()));
    }
    for (int64_t x : p) {
      if (x < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "explicit_paddings must be >= 0, got [", absl::StrJoin(p, ","), "]"));
      }
    }
    if (p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "explicit_paddings in the batch and depth dimensions must be 0, got [",
          absl::StrJoin(p, ","), "]"));
    }
    a->pad_top = p[2];
    a->pad_bottom = p[3];
    a->pad_left = p[4];
    a->pad_right = p[5];
  } else if (a->padding != "SAME" && a->padding != "VALID") {
    return absl::InvalidArgumentError(
        absl::StrCat("padding must be SAME, VALID or EXPLICIT, got ", a->padding));
  }
  return absl::OkStatus();
}

absl::StatusOr<WindowDims> ComputeWindowDims(const WindowAttrs& a,
                                             const TensorShape& input,
                                             int64_t win_rows, int64_t win_cols,
                                             int64_t out_depth) {
  if (input.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be 4-dimensional (NHWC), got shape ", input.DebugString()));
  }
  WindowDims d;
  d.batch = input.dim_size(0);
  d.in_rows = input.dim_size(1);
  d.in_cols = input.dim_size(2);
  d.in_depth = input.dim_size(3);
  d.win_rows = win_rows;
  d.win_cols = win_cols;
  d.stride_rows = a.stride_rows;
  d.stride_cols = a.stride_cols;
  d.dil_rows = a.dil_rows;
  d.dil_cols = a.dil_cols;
  d.out_depth = out_depth;
  absl::Status s = OneDim("rows", d.in_rows, win_rows, a.dil_rows, a.stride_rows,
                          a, a.pad_top, a.pad_bottom, &d.out_rows, &d.pad_top);
  if (!s.ok()) return s;
  s = OneDim("cols", d.in_cols, win_cols, a.dil_cols, a.stride_cols, a,
             a.pad_left, a.pad_right, &d.out_cols, &d.pad_left);
  if (!s.ok()) return s;
  return d;
}

// Reads a 1-D int32 sizes input of 4 entries.
absl::Status ReadSizes(const Tensor& t, const char* name, TensorShape* shape) {
  if (t.dims() != 1 || t.dtype() != DT_INT32 || t.NumElements() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be a 1-D int32 tensor of 4 sizes, got ", t.DebugString()));
  }
  std::vector<int64_t> v(t.data<int32_t>(), t.data<int32_t>() + 4);
  absl::StatusOr<TensorShape> s = TensorShape::Build(v);
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " holds invalid sizes [", absl::StrJoin(v, ","), "]"));
  }
  *shape = *s;
  return absl::OkStatus();
}

// Checks out_backprop's shape is what the forward conv would have produced.
absl::Status CheckBackprop(const WindowDims& d, const Tensor& dy) {
  const TensorShape want({d.batch, d.out_rows, d.out_cols, d.out_depth});
  if (dy.shape() != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "out_backprop has shape ", dy.shape().DebugString(),
        " but the convolution's output would have shape ", want.DebugString(),
        " (check strides, padding, dilations and the sizes input)"));
  }
  return absl::OkStatus();
}

}  // namespace weft
