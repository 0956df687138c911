// Shape functions of the array ops, part 2: slicing, gathering, one-hot,
// padding, selecting, ranges, splitting and broadcasting.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/array_shape_fns.h"
#include "ops/framework/shape_inference.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/numeric_cast.h"
#include "runtime/core/status.h"

namespace weft {
namespace array_shapes {

absl::Status SliceShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  Dims begin, size;
  const bool have_begin = ConstInts(c, 1, &begin);
  const bool have_size = ConstInts(c, 2, &size);
  if (!have_size) {
    const PartialShape s = c->InputAsShape(2);
    if (s.known_rank()) {
      c->set_output(0, PartialShape(Dims(s.rank(), -1)));
    } else if (in.known_rank()) {
      c->set_output(0, PartialShape(Dims(in.rank(), -1)));
    } else {
      c->set_output(0, PartialShape::UnknownRank());
    }
    return absl::OkStatus();
  }
  if (in.known_rank() && in.rank() != static_cast<int>(size.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Slice size has ", size.size(), " entries but the input has shape ",
        in.DebugString()));
  }
  Dims out(size.size(), -1);
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] >= 0) {
      out[i] = size[i];
    } else if (size[i] == -1 && have_begin && in.known_rank() &&
               in.dim(i) >= 0 && i < begin.size() && begin[i] >= 0 &&
               begin[i] <= in.dim(i)) {
      // A begin outside [0, dim] stays unknown here; the kernel refuses it.
      out[i] = in.dim(i) - begin[i];
    }
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// StridedSlice on partial shapes: mirrors the kernel's mask handling, with
// unknown input dims giving unknown output dims.
absl::Status StridedSliceShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  Dims begin, end, strides;
  if (!in.known_rank() || !ConstInts(c, 1, &begin) ||
      !ConstInts(c, 2, &end) || !ConstInts(c, 3, &strides) ||
      begin.size() != end.size() || begin.size() != strides.size()) {
    return UnknownShape(c);
  }
  int64_t begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask;
  WEFT_RETURN_IF_ERROR(c->GetAttr("begin_mask", &begin_mask));
  WEFT_RETURN_IF_ERROR(c->GetAttr("end_mask", &end_mask));
  WEFT_RETURN_IF_ERROR(c->GetAttr("ellipsis_mask", &ellipsis_mask));
  WEFT_RETURN_IF_ERROR(c->GetAttr("new_axis_mask", &new_axis_mask));
  WEFT_RETURN_IF_ERROR(c->GetAttr("shrink_axis_mask", &shrink_mask));
  const int n = static_cast<int>(begin.size());
  int sparse_non_new = 0;
  for (int i = 0; i < n; ++i) {
    if (!((new_axis_mask >> i) & 1) && !((ellipsis_mask >> i) & 1)) {
      ++sparse_non_new;
    }
  }
  bool seen_ellipsis = false;
  Dims out;
  int d = 0;  // input dim
  for (int i = 0; i < n; ++i) {
    if ((ellipsis_mask >> i) & 1) {
      if (seen_ellipsis) {
        return absl::InvalidArgumentError("multiple ellipses in StridedSlice");
      }
      seen_ellipsis = true;
      const int take = in.rank() - sparse_non_new;  // dims the ellipsis spans
      for (int k = 0; k < take && d < in.rank(); ++k) out.push_back(in.dim(d++));
      continue;
    }
    if ((new_axis_mask >> i) & 1) {
      out.push_back(1);
      continue;
    }
    if (d >= in.rank()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "StridedSlice index ", i, " is out of bounds for input of shape ",
          in.DebugString()));
    }
    const int64_t dim = in.dim(d++);
    const int64_t stride = strides[i];
    if (stride == 0) {
      return absl::InvalidArgumentError("StridedSlice strides must be non-zero");
    }
    if ((shrink_mask >> i) & 1) {
      if (dim >= 0 && (begin[i] < -dim || begin[i] >= dim)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "StridedSlice index ", begin[i], " of dimension ", d - 1,
            " is out of bounds (size ", dim, ")"));
      }
      continue;
    }
    if (dim < 0) {
      out.push_back(-1);
      continue;
    }
    auto canonical = [&](int64_t x, bool masked, bool is_begin) -> int64_t {
      if (masked) {
        return stride > 0 ? (is_begin ? 0 : dim) : (is_begin ? dim - 1 : -1);
      }
      const int64_t lo = stride > 0 ? 0 : -1;
      const int64_t hi = stride > 0 ? dim : dim - 1;
      const int64_t v = x < 0 ? x + dim : x;
      return std::clamp(v, lo, hi);
    };
    const int64_t b = canonical(begin[i], (begin_mask >> i) & 1, true);
    const int64_t e = canonical(end[i], (end_mask >> i) & 1, false);
    const int64_t span = e - b;
    int64_t size = 0;
    if ((span > 0) == (stride > 0) && span != 0) {
      // As the kernel counts; `span + stride` could overflow.
      size = span / stride + (span % stride != 0 ? 1 : 0);
    }
    out.push_back(size);
  }
  if (!seen_ellipsis) {
    while (d < in.rank()) out.push_back(in.dim(d++));
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status GatherV2Shape(InferenceContext* c) {
  const PartialShape& params = c->input(0);
  const PartialShape& indices = c->input(1);
  int64_t axis_value;
  if (!params.known_rank() || !indices.known_rank() ||
      !ConstScalar(c, 2, &axis_value)) {
    return UnknownShape(c);
  }
  int64_t batch_dims;
  WEFT_RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  int64_t axis;
  WEFT_RETURN_IF_ERROR(Canonical(axis_value, params.rank(), "GatherV2 axis", &axis));
  if (batch_dims < 0) batch_dims += indices.rank();
  if (batch_dims < 0 || batch_dims > axis || batch_dims > indices.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GatherV2 batch_dims ", batch_dims, " must be in [0, min(axis ", axis,
        ", rank(indices) ", indices.rank(), ")]"));
  }
  Dims out(params.dims().begin(), params.dims().begin() + axis);
  for (int i = batch_dims; i < indices.rank(); ++i) out.push_back(indices.dim(i));
  for (int i = axis + 1; i < params.rank(); ++i) out.push_back(params.dim(i));
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status OneHotShape(InferenceContext* c) {
  const PartialShape& indices = c->input(0);
  if (!indices.known_rank()) return UnknownShape(c);
  int64_t axis_attr;
  WEFT_RETURN_IF_ERROR(c->GetAttr("axis", &axis_attr));
  if (axis_attr < -1 || axis_attr > indices.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OneHot axis ", axis_attr, " must be -1 or in [0, ", indices.rank(), "]"));
  }
  int64_t depth = -1;
  ConstScalar(c, 1, &depth);
  Dims out = DimsOf(indices);
  const int64_t axis = axis_attr == -1 ? indices.rank() : axis_attr;
  out.insert(out.begin() + axis, depth < 0 ? -1 : depth);
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status PadShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  Dims pads;
  if (!ConstInts(c, 1, &pads)) {
    const PartialShape& p = c->input(1);
    if (in.known_rank()) {
      c->set_output(0, PartialShape(Dims(in.rank(), -1)));
    } else if (p.known_rank() && p.rank() == 2 && p.dim(0) >= 0) {
      c->set_output(0, PartialShape(Dims(p.dim(0), -1)));
    } else {
      c->set_output(0, PartialShape::UnknownRank());
    }
    return absl::OkStatus();
  }
  const int rank = static_cast<int>(pads.size() / 2);
  if (in.known_rank() && (in.rank() != rank || pads.size() % 2 != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Pad paddings must be a [", in.rank(), ", 2] matrix for input shape ",
        in.DebugString()));
  }
  Dims out(rank, -1);
  for (int i = 0; i < rank; ++i) {
    if (pads[2 * i] < 0 || pads[2 * i + 1] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Pad paddings must be non-negative, row ", i, " is [",
                       pads[2 * i], ", ", pads[2 * i + 1], "]"));
    }
    if (in.known_rank()) {
      out[i] = AddDims(in.dim(i), AddDims(pads[2 * i], pads[2 * i + 1]));
    }
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status SelectShape(InferenceContext* c) {
  absl::StatusOr<PartialShape> te = Merge(c->input(1), c->input(2));
  if (!te.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Select's t and e must have the same shape: ", te.status().message()));
  }
  const PartialShape& cond = c->input(0);
  if (cond.known_rank() && te->known_rank() && cond.rank() != 0) {
    const bool vector_ok = cond.rank() == 1 && te->rank() >= 1 &&
                           (cond.dim(0) < 0 || te->dim(0) < 0 ||
                            cond.dim(0) == te->dim(0));
    if (!vector_ok && !cond.IsCompatibleWith(*te)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Select condition of shape ", cond.DebugString(),
          " must be a scalar, a vector matching dimension 0, or the shape ",
          te->DebugString(), " of t and e"));
    }
  }
  c->set_output(0, *te);
  return absl::OkStatus();
}

absl::Status SelectV2Shape(InferenceContext* c) {
  WEFT_ASSIGN_OR_RETURN(PartialShape te, BroadcastShapes(c->input(1), c->input(2)));
  WEFT_ASSIGN_OR_RETURN(PartialShape out, BroadcastShapes(c->input(0), te));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status RangeShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) WEFT_RETURN_IF_ERROR(c->WithRank(i, 0));
  const Tensor* t[3] = {c->input_tensor(0), c->input_tensor(1), c->input_tensor(2)};
  if (t[0] == nullptr || t[1] == nullptr || t[2] == nullptr) {
    c->set_output(0, PartialShape({-1}));
    return absl::OkStatus();
  }
  double v[3];
  for (int i = 0; i < 3; ++i) {
    switch (t[i]->dtype()) {
      case DT_INT32: v[i] = t[i]->scalar<int32_t>(); break;
      case DT_INT64: v[i] = static_cast<double>(t[i]->scalar<int64_t>()); break;
      case DT_FLOAT: v[i] = t[i]->scalar<float>(); break;
      case DT_DOUBLE: v[i] = t[i]->scalar<double>(); break;
      default:
        c->set_output(0, PartialShape({-1}));
        return absl::OkStatus();
    }
  }
  if (v[2] == 0) return absl::InvalidArgumentError("Range delta must not be 0");
  if ((v[2] > 0 && v[1] < v[0]) || (v[2] < 0 && v[0] < v[1])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Range start ", v[0], " and limit ", v[1],
        " are inconsistent with delta ", v[2]));
  }
  const bool integral = t[0]->dtype() == DT_INT32 || t[0]->dtype() == DT_INT64;
  const double size =
      integral ? std::floor((std::abs(v[1] - v[0]) + std::abs(v[2]) - 1) /
                            std::abs(v[2]))
               : std::ceil(std::abs((v[1] - v[0]) / v[2]));
  // A NaN bound or a length past any tensor stays unknown; the kernel
  // reports it.
  const bool known = TruncatesInto<int64_t>(size) && size <= static_cast<double>(INT64_MAX / 2);
  c->set_output(0, PartialShape({known ? static_cast<int64_t>(size) : -1}));
  return absl::OkStatus();
}

absl::Status SplitShape(InferenceContext* c) {
  const PartialShape& in = c->input(1);
  const int n = c->num_outputs();
  int64_t dim_value;
  if (!in.known_rank() || !ConstScalar(c, 0, &dim_value)) {
    for (int i = 0; i < n; ++i) {
      c->set_output(i, in.known_rank() ? PartialShape(Dims(in.rank(), -1))
                                       : PartialShape::UnknownRank());
    }
    return absl::OkStatus();
  }
  int64_t axis;
  WEFT_RETURN_IF_ERROR(Canonical(dim_value, in.rank(), "Split dim", &axis));
  Dims out = DimsOf(in);
  if (out[axis] >= 0) {
    if (out[axis] % n != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "number of ways to split (", n, ") must evenly divide dimension ",
          axis, " of shape ", in.DebugString()));
    }
    out[axis] /= n;
  }
  for (int i = 0; i < n; ++i) c->set_output(i, PartialShape(out));
  return absl::OkStatus();
}

absl::Status SplitVShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  const int n = c->num_outputs();
  int64_t dim_value;
  Dims sizes;
  if (!in.known_rank() || !ConstScalar(c, 2, &dim_value) ||
      !ConstInts(c, 1, &sizes)) {
    for (int i = 0; i < n; ++i) {
      c->set_output(i, in.known_rank() ? PartialShape(Dims(in.rank(), -1))
                                       : PartialShape::UnknownRank());
    }
    return absl::OkStatus();
  }
  if (static_cast<int>(sizes.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SplitV size_splits has ", sizes.size(), " entries but num_split is ", n));
  }
  int64_t axis;
  WEFT_RETURN_IF_ERROR(Canonical(dim_value, in.rank(), "SplitV dim", &axis));
  int unknown = -1;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (sizes[i] == -1) {
      if (unknown >= 0) {
        return absl::InvalidArgumentError(
            "SplitV size_splits may contain at most one -1");
      }
      unknown = i;
    } else if (sizes[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("SplitV size_splits[", i, "] is negative: ", sizes[i]));
    } else {
      total += sizes[i];
    }
  }
  const int64_t dim = in.dim(axis);
  if (dim >= 0) {
    if ((unknown < 0 && total != dim) || (unknown >= 0 && total > dim)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SplitV size_splits [", absl::StrJoin(sizes, ","),
          "] do not add up to dimension ", axis, " of shape ", in.DebugString()));
    }
    if (unknown >= 0) sizes[unknown] = dim - total;
  }
  for (int i = 0; i < n; ++i) {
    Dims out = DimsOf(in);
    out[axis] = sizes[i];
    c->set_output(i, PartialShape(out));
  }
  return absl::OkStatus();
}

absl::Status BroadcastToShape(InferenceContext* c) {
  const PartialShape target = c->InputAsShape(1);
  if (target.known_rank() && c->input(0).known_rank()) {
    absl::StatusOr<PartialShape> b = BroadcastShapes(c->input(0), target);
    if (!b.ok() || (b->known_rank() && b->rank() != target.rank())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot broadcast shape ", c->input(0).DebugString(), " to ",
          target.DebugString()));
    }
  }
  c->set_output(0, target);
  return absl::OkStatus();
}

absl::Status BroadcastGradientArgsShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape({-1}));
  return absl::OkStatus();
}

}  // namespace array_shapes
}  // namespace weft
