#include "ops/cpu/conv3d_geometry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace weft {
namespace {

// A 5-entry NDHWC list attr: entries >= 1, batch and channel entries 1.
absl::Status Get5(OpKernelConstruction* c, const char* name, int64_t out[3]) {
  std::vector<int64_t> v;
  absl::Status s = c->GetAttr(name, &v);
  if (!s.ok()) return s;
  if (v.size() != 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sliding window ", name, " field must specify 5 dimensions; got ",
        v.size()));
  }
  for (int64_t x : v) {
    if (x < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " must be >= 1, got [", absl::StrJoin(v, ","), "]"));
    }
  }
  if (v[0] != 1 || v[4] != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " in the batch and depth dimensions must be 1 (not supported);"
        " got [", absl::StrJoin(v, ","), "]"));
  }
  std::copy(v.begin() + 1, v.begin() + 4, out);
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseWindow3Attrs(OpKernelConstruction* c, bool pool,
                               Window3Attrs* a) {
  std::string format;
  absl::Status s = c->GetAttr("data_format", &format);
  if (!s.ok()) return s;
  if (format != "NDHWC") {
    return absl::InvalidArgumentError(absl::StrCat(
        c->def().op(), " on CPU supports only data_format NDHWC, got ", format,
        " (TensorFlow's CPU kernel refuses it too); transpose to NDHWC first"));
  }
  s = Get5(c, "strides", a->stride);
  if (!s.ok()) return s;
  s = pool ? Get5(c, "ksize", a->ksize) : Get5(c, "dilations", a->dilation);
  if (!s.ok()) return s;
  std::string padding;
  s = c->GetAttr("padding", &padding);
  if (!s.ok()) return s;
  if (padding != "SAME" && padding != "VALID") {
    return absl::InvalidArgumentError(
        absl::StrCat("padding must be SAME or VALID, got ", padding));
  }
  a->same = padding == "SAME";
  return absl::OkStatus();
}

absl::StatusOr<Window3Dims> ComputeWindow3Dims(const Window3Attrs& a,
                                               const TensorShape& input,
                                               const int64_t win[3],
                                               int64_t out_depth) {
  if (input.dims() != 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be 5-dimensional (NDHWC), got shape ", input.DebugString()));
  }
  Window3Dims d;
  d.batch = input.dim_size(0);
  d.in_depth = input.dim_size(4);
  d.out_depth = out_depth;
  static const char* kNames[3] = {"planes", "rows", "cols"};
  for (int k = 0; k < 3; ++k) {
    d.in[k] = input.dim_size(k + 1);
    d.win[k] = win[k];
    d.stride[k] = a.stride[k];
    d.dil[k] = a.dilation[k];
    const int64_t k_eff = (win[k] - 1) * a.dilation[k] + 1;
    if (win[k] < 1 || k_eff > (int64_t{1} << 40)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the window's ", kNames[k], " must be in [1, 2^40] (after dilation), got ",
          win[k]));
    }
    if (a.same) {
      d.out[k] = (d.in[k] + d.stride[k] - 1) / d.stride[k];
      d.pad[k] = std::max<int64_t>(0, (d.out[k] - 1) * d.stride[k] + k_eff - d.in[k]) / 2;
    } else if (d.in[k] >= k_eff) {
      d.out[k] = (d.in[k] - k_eff + d.stride[k]) / d.stride[k];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "the ", kNames[k], " window (", k_eff, " after dilation) is larger "
          "than the input's ", kNames[k], " (", d.in[k], ") with VALID padding"));
    }
  }
  return d;
}

absl::Status ReadSizes5(const Tensor& t, const char* name, TensorShape* shape) {
  if (t.dims() != 1 || t.NumElements() != 5 ||
      (t.dtype() != DT_INT32 && t.dtype() != DT_INT64)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be a 1-D int32 or int64 tensor of 5 sizes, got ",
        t.DebugString()));
  }
  std::vector<int64_t> v(5);
  for (int i = 0; i < 5; ++i) {
    v[i] = t.dtype() == DT_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  }
  absl::StatusOr<TensorShape> s = TensorShape::Build(v);
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " holds invalid sizes [", absl::StrJoin(v, ","), "]"));
  }
  *shape = *s;
  return absl::OkStatus();
}

absl::Status CheckShape(const Tensor& t, const TensorShape& want,
                        const char* what) {
  if (t.shape() != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has shape ", t.shape().DebugString(), " but must have shape ",
        want.DebugString()));
  }
  return absl::OkStatus();
}

}  // namespace weft
