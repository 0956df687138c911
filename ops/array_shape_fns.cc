// Shape functions of the array ops, part 1: constants, feeds, reshaping,
// joining and tiling; and the helpers all array shape functions share.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/array_shape_fns.h"
#include "ops/framework/shape_inference.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/status.h"

namespace weft {
namespace array_shapes {

bool ConstInts(InferenceContext* c, int i, Dims* out) {
  const Tensor* t = c->input_tensor(i);
  if (t == nullptr || !t->IsInitialized()) return false;
  auto read = [t, out](auto tag) {
    using T = decltype(tag);
    const T* p = t->data<T>();
    out->assign(p, p + t->NumElements());
    return true;
  };
  switch (t->dtype()) {
    case DT_INT16: return read(int16_t{});
    case DT_UINT16: return read(uint16_t{});
    case DT_INT32: return read(int32_t{});
    case DT_INT64: return read(int64_t{});
    default: return false;
  }
}

bool ConstScalar(InferenceContext* c, int i, int64_t* out) {
  Dims v;
  if (!ConstInts(c, i, &v) || v.size() != 1) return false;
  *out = v[0];
  return true;
}

Dims DimsOf(const PartialShape& s) { return Dims(s.dims().begin(), s.dims().end()); }

// Merges two partial shapes known to describe the same tensor.
absl::StatusOr<PartialShape> Merge(const PartialShape& a, const PartialShape& b) {
  if (!a.known_rank()) return b;
  if (!b.known_rank()) return a;
  if (!a.IsCompatibleWith(b)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shapes ", a.DebugString(), " and ", b.DebugString(),
        " are not compatible"));
  }
  Dims out = DimsOf(a);
  for (int i = 0; i < a.rank(); ++i) {
    if (out[i] < 0) out[i] = b.dim(i);
  }
  return PartialShape(out);
}

// Maps axis in [-rank, rank) to [0, rank).
absl::Status Canonical(int64_t axis, int rank, absl::string_view what,
                       int64_t* out) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", axis, " is out of range for rank ", rank,
                     " (must be in [", -rank, ", ", rank, "))"));
  }
  *out = axis < 0 ? axis + rank : axis;
  return absl::OkStatus();
}

// Unknown (-1) when either is, or when the result passes int64 (claimed
// sizes may be anything; the kernel refuses them when it runs).
int64_t MulDims(int64_t a, int64_t b) {
  int64_t r;
  return a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) ? -1 : r;
}
int64_t AddDims(int64_t a, int64_t b) {
  int64_t r;
  return a < 0 || b < 0 || __builtin_add_overflow(a, b, &r) ? -1 : r;
}

// ---- Shape functions ----------------------------------------------------------

absl::Status ConstShape(InferenceContext* c) {
  const auto& attrs = c->node().attr();
  auto it = attrs.find("value");
  if (it == attrs.end() || !it->second.has_tensor()) return UnknownShape(c);
  c->set_output(0, PartialShape::FromProto(it->second.tensor().tensor_shape()));
  return absl::OkStatus();
}

absl::Status ShapeFromAttr(InferenceContext* c) {
  PartialShape shape;
  WEFT_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status PlaceholderWithDefaultShape(InferenceContext* c) {
  PartialShape shape;
  WEFT_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  if (!shape.IsCompatibleWith(c->input(0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "default value of shape ", c->input(0).DebugString(),
        " is not compatible with the placeholder's shape ", shape.DebugString()));
  }
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status PassThroughShapes(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
  return absl::OkStatus();
}

absl::Status ReshapeShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  Dims target;
  if (!ConstInts(c, 1, &target)) {
    c->set_output(0, c->InputAsShape(1));
    return absl::OkStatus();
  }
  int unknown = -1;
  int64_t product = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (unknown >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "only one input size may be -1, not both ", unknown, " and ", i));
      }
      unknown = static_cast<int>(i);
    } else if (target[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "size ", i, " must be non-negative, not ", target[i]));
    } else if (target[i] > 0 && product > INT64_MAX / target[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape [", absl::StrJoin(target, ","), "] has more than 2^63 elements"));
    } else {
      product *= target[i];
    }
  }
  if (in.IsFullyDefined()) {
    // The input's dims may be claimed (a Const's shape), their product
    // beyond int64: an error, not an overflow.
    absl::StatusOr<TensorShape> in_shape = TensorShape::Build(in.dims());
    if (!in_shape.ok()) return in_shape.status();
    const int64_t n = in_shape->num_elements();
    if (unknown >= 0) {
      if (product > 0 && n % product == 0) {
        target[unknown] = n / product;
      } else if (product > 0 || n > 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot reshape a tensor of shape ", in.DebugString(), " (", n,
            " elements) to shape [", absl::StrJoin(target, ","), "]"));
      }
    } else if (product != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot reshape a tensor of shape ", in.DebugString(), " (", n,
          " elements) to shape [", absl::StrJoin(target, ","), "] (", product,
          " elements)"));
    }
  }
  c->set_output(0, PartialShape(target));
  return absl::OkStatus();
}

absl::Status VectorOfRankShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  c->set_output(0, PartialShape({in.known_rank() ? in.rank() : -1}));
  return absl::OkStatus();
}

absl::Status FillShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));
  c->set_output(0, c->InputAsShape(0));
  return absl::OkStatus();
}

absl::Status ExpandDimsShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  int64_t dim;
  if (!in.known_rank() || !ConstScalar(c, 1, &dim)) return UnknownShape(c);
  int64_t axis;
  WEFT_RETURN_IF_ERROR(Canonical(dim, in.rank() + 1, "ExpandDims dim", &axis));
  Dims out = DimsOf(in);
  out.insert(out.begin() + axis, 1);
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status SqueezeShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) return UnknownShape(c);
  std::vector<int64_t> squeeze;
  WEFT_RETURN_IF_ERROR(c->GetAttr("squeeze_dims", &squeeze));
  std::vector<bool> drop(in.rank(), false);
  for (int64_t d : squeeze) {
    int64_t axis;
    WEFT_RETURN_IF_ERROR(Canonical(d, in.rank(), "squeeze dim", &axis));
    if (in.dim(axis) >= 0 && in.dim(axis) != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "can not squeeze dim[", axis, "], expected a dimension of 1, got ",
          in.dim(axis)));
    }
    drop[axis] = true;
  }
  Dims out;
  for (int i = 0; i < in.rank(); ++i) {
    if (squeeze.empty()) {
      if (in.dim(i) < 0) return UnknownShape(c);  // might be 1
      if (in.dim(i) == 1) continue;
    } else if (drop[i]) {
      continue;
    }
    out.push_back(in.dim(i));
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status TransposeShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  Dims perm;
  if (!ConstInts(c, 1, &perm)) {
    const PartialShape p = c->InputAsShape(1);  // only its length matters
    int rank = in.known_rank() ? in.rank() : (p.known_rank() ? p.rank() : -1);
    c->set_output(0, rank < 0 ? PartialShape::UnknownRank()
                              : PartialShape(Dims(rank, -1)));
    return absl::OkStatus();
  }
  if (in.known_rank() && in.rank() != static_cast<int>(perm.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("transpose permutation has ", perm.size(),
                     " entries but the input has rank ", in.rank()));
  }
  Dims out(perm.size(), -1);
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p;
    WEFT_RETURN_IF_ERROR(
        Canonical(perm[i], static_cast<int>(perm.size()), "perm entry", &p));
    if (in.known_rank()) out[i] = in.dim(p);
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// Concatenation of inputs [0, n) along `axis` (already known to be constant).
namespace {

absl::Status ConcatShapes(InferenceContext* c, int n, int64_t axis_value) {
  int rank = -1;
  for (int i = 0; i < n; ++i) {
    if (!c->input(i).known_rank()) continue;
    if (rank >= 0 && c->input(i).rank() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConcatV2 inputs must have the same rank, but input ", i,
          " has shape ", c->input(i).DebugString(),
          " and an earlier input has rank ", rank));
    }
    rank = c->input(i).rank();
  }
  if (rank < 0) return UnknownShape(c);
  if (rank == 0) {
    return absl::InvalidArgumentError("can't concatenate scalars (use Pack)");
  }
  int64_t axis;
  WEFT_RETURN_IF_ERROR(Canonical(axis_value, rank, "ConcatV2 axis", &axis));
  Dims out(rank, -1);
  bool first = true;
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = c->input(i);
    if (!s.known_rank()) {
      out[axis] = -1;
      first = false;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      if (d == axis) {
        out[d] = first ? s.dim(d) : AddDims(out[d], s.dim(d));
      } else if (out[d] < 0) {
        out[d] = s.dim(d);
      } else if (s.dim(d) >= 0 && s.dim(d) != out[d]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ConcatV2 input ", i, " has shape ", s.DebugString(),
            ", which does not match the other inputs in dimension ", d));
      }
    }
    first = false;
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

}  // namespace

absl::Status ConcatV2Shape(InferenceContext* c) {
  const int n = c->num_inputs() - 1;
  WEFT_RETURN_IF_ERROR(c->WithRank(n, 0));
  int64_t axis;
  if (!ConstScalar(c, n, &axis)) {
    for (int i = 0; i < n; ++i) {
      if (c->input(i).known_rank()) {
        c->set_output(0, PartialShape(Dims(c->input(i).rank(), -1)));
        return absl::OkStatus();
      }
    }
    return UnknownShape(c);
  }
  return ConcatShapes(c, n, axis);
}

absl::Status PackShape(InferenceContext* c) {
  PartialShape merged;
  for (int i = 0; i < c->num_inputs(); ++i) {
    absl::StatusOr<PartialShape> m = Merge(merged, c->input(i));
    if (!m.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Pack inputs must all have the same shape: ", m.status().message()));
    }
    merged = *m;
  }
  if (!merged.known_rank()) return UnknownShape(c);
  int64_t axis_attr;
  WEFT_RETURN_IF_ERROR(c->GetAttr("axis", &axis_attr));
  int64_t axis;
  WEFT_RETURN_IF_ERROR(Canonical(axis_attr, merged.rank() + 1, "Pack axis", &axis));
  Dims out = DimsOf(merged);
  out.insert(out.begin() + axis, c->num_inputs());
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status UnpackShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) return UnknownShape(c);
  int64_t axis_attr;
  WEFT_RETURN_IF_ERROR(c->GetAttr("axis", &axis_attr));
  int64_t axis;
  WEFT_RETURN_IF_ERROR(Canonical(axis_attr, in.rank(), "Unpack axis", &axis));
  if (in.dim(axis) >= 0 && in.dim(axis) != c->num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Unpack num (", c->num_outputs(), ") does not match dimension ", axis,
        " of shape ", in.DebugString()));
  }
  Dims out = DimsOf(in);
  out.erase(out.begin() + axis);
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape(out));
  return absl::OkStatus();
}

absl::Status TileShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  Dims multiples;
  if (!ConstInts(c, 1, &multiples)) {
    if (in.known_rank()) {
      c->set_output(0, PartialShape(Dims(in.rank(), -1)));
      return absl::OkStatus();
    }
    c->set_output(0, c->InputAsShape(1));
    return absl::OkStatus();
  }
  if (in.known_rank() && in.rank() != static_cast<int>(multiples.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Tile multiples has ", multiples.size(),
        " entries but the input has shape ", in.DebugString()));
  }
  Dims out(multiples.size(), -1);
  for (size_t i = 0; i < multiples.size(); ++i) {
    if (multiples[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tile multiples[", i, "] is negative: ", multiples[i]));
    }
    if (in.known_rank()) out[i] = MulDims(in.dim(i), multiples[i]);
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

}  // namespace array_shapes
}  // namespace weft
