#include "ops/framework/shape_inference.h"

#include "absl/strings/str_cat.h"

namespace weft {

InferenceContext::InferenceContext(const tensorflow::NodeDef& node,
                                   std::vector<PartialShape> input_shapes,
                                   std::vector<const Tensor*> input_tensors,
                                   DataTypeVector input_types, int num_outputs)
    : node_(node),
      inputs_(std::move(input_shapes)),
      input_tensors_(std::move(input_tensors)),
      input_types_(std::move(input_types)),
      outputs_(num_outputs) {
  input_tensors_.resize(inputs_.size(), nullptr);
}

absl::Status InferenceContext::WithRank(int i, int rank) const {
  const PartialShape& s = inputs_[i];
  if (s.known_rank() && s.rank() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", i, " must have rank ", rank, " but has shape ",
                     s.DebugString()));
  }
  return absl::OkStatus();
}

absl::Status InferenceContext::WithRankAtLeast(int i, int rank) const {
  const PartialShape& s = inputs_[i];
  if (s.known_rank() && s.rank() < rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", i, " must have rank at least ", rank,
                     " but has shape ", s.DebugString()));
  }
  return absl::OkStatus();
}

PartialShape InferenceContext::InputAsShape(int i) const {
  // A shape has at most kMaxTensorRank dims: a longer vector (known, or only
  // declared, like a Const claiming 2^40 elements) is left to the kernel to
  // refuse, and nothing is built in proportion to its claimed length.
  const Tensor* t = input_tensors_[i];
  if (t != nullptr && t->dims() == 1 && t->NumElements() <= kMaxTensorRank &&
      (t->dtype() == DT_INT32 || t->dtype() == DT_INT64)) {
    std::vector<int64_t> dims;
    for (int64_t k = 0; k < t->NumElements(); ++k) {
      dims.push_back(t->dtype() == DT_INT32 ? t->data<int32_t>()[k]
                                            : t->data<int64_t>()[k]);
    }
    return PartialShape(dims);
  }
  const PartialShape& s = inputs_[i];
  if (s.known_rank() && s.rank() == 1 && s.dim(0) >= 0 &&
      s.dim(0) <= kMaxTensorRank) {
    return PartialShape(std::vector<int64_t>(s.dim(0), -1));
  }
  return PartialShape::UnknownRank();
}

absl::Status UnknownShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) {
    c->set_output(i, PartialShape::UnknownRank());
  }
  return absl::OkStatus();
}

absl::Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape({}));
  return absl::OkStatus();
}

absl::StatusOr<PartialShape> BroadcastShapes(const PartialShape& a,
                                             const PartialShape& b) {
  if (!a.known_rank() || !b.known_rank()) return PartialShape::UnknownRank();
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> out(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i;
    const int ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a.dim(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da < 0 || db < 0) {
      out[i] = da < 0 ? db : da;
    } else if (da == db) {
      out[i] = da;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("shapes ", a.DebugString(), " and ", b.DebugString(),
                       " cannot be broadcast together"));
    }
  }
  return PartialShape(out);
}

absl::Status BroadcastBinaryOpShape(InferenceContext* c) {
  absl::StatusOr<PartialShape> s = BroadcastShapes(c->input(0), c->input(1));
  if (!s.ok()) return s.status();
  c->set_output(0, *s);
  return absl::OkStatus();
}

}  // namespace weft
