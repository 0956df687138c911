#include "runtime/core/tensor_shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/core/dcheck.h"

namespace weft {

TensorShape::TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) {
  Recount();
}

TensorShape::TensorShape(absl::Span<const int64_t> dims)
    : dims_(dims.begin(), dims.end()) {
  Recount();
}

absl::StatusOr<TensorShape> TensorShape::Build(absl::Span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxTensorRank)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape has ", dims.size(), " dimensions, more than the maximum rank ",
        kMaxTensorRank));
  }
  int64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dimension ", i, " has negative size ", dims[i], " in shape [",
          absl::StrJoin(dims, ","), "]"));
    }
    if (dims[i] > 0 && count > INT64_MAX / dims[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape [", absl::StrJoin(dims, ","), "] has too many elements"));
    }
    count *= dims[i];
  }
  return TensorShape(dims);
}

absl::StatusOr<TensorShape> TensorShape::FromProto(
    const tensorflow::TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    return absl::InvalidArgumentError("shape has unknown rank");
  }
  absl::InlinedVector<int64_t, 4> dims;
  for (const auto& d : proto.dim()) dims.push_back(d.size());
  return Build(dims);
}

namespace {

// The constructors and mutators take sizes the program computed (Build
// checks untrusted ones): non-negative, with a product that fits in int64.
// Shapes built without Build() come from kernels that checked their
// sizes; should one not have, a count past int64 saturates instead of
// wrapping, so Tensor::Allocate refuses it rather than handing out a small
// buffer for a huge shape.
int64_t TimesDim(int64_t elements, int64_t d) {
  WEFT_DCHECK(d >= 0);
  int64_t product;
  if (__builtin_mul_overflow(elements, d, &product)) {
    WEFT_DCHECK(false);
    return INT64_MAX;
  }
  return product;
}

}  // namespace

void TensorShape::Recount() {
  num_elements_ = 1;
  for (int64_t d : dims_) num_elements_ = TimesDim(num_elements_, d);
}

void TensorShape::AddDim(int64_t size) {
  dims_.push_back(size);
  num_elements_ = TimesDim(num_elements_, size);
}

void TensorShape::InsertDim(int index, int64_t size) {
  WEFT_DCHECK(index >= 0 && index <= dims());
  dims_.insert(dims_.begin() + index, size);
  Recount();
}

void TensorShape::RemoveDim(int index) {
  WEFT_DCHECK(index >= 0 && index < dims());
  dims_.erase(dims_.begin() + index);
  Recount();
}

void TensorShape::set_dim(int index, int64_t size) {
  WEFT_DCHECK(index >= 0 && index < dims());
  dims_[index] = size;
  Recount();
}

void TensorShape::ToProto(tensorflow::TensorShapeProto* proto) const {
  proto->Clear();
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

std::string TensorShape::DebugString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

PartialShape PartialShape::FromProto(const tensorflow::TensorShapeProto& proto) {
  if (proto.unknown_rank()) return PartialShape();
  absl::InlinedVector<int64_t, 4> dims;
  for (const auto& d : proto.dim()) dims.push_back(d.size() < 0 ? -1 : d.size());
  return PartialShape(dims);
}

bool PartialShape::IsFullyDefined() const {
  if (!known_rank_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

bool PartialShape::IsCompatibleWith(const PartialShape& other) const {
  if (!known_rank_ || !other.known_rank_) return true;
  if (dims_.size() != other.dims_.size()) return false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) {
      return false;
    }
  }
  return true;
}

std::string PartialShape::DebugString() const {
  if (!known_rank_) return "<unknown>";
  return absl::StrCat(
      "[",
      absl::StrJoin(dims_, ",",
                    [](std::string* out, int64_t d) {
                      absl::StrAppend(out, d < 0 ? "?" : absl::StrCat(d));
                    }),
      "]");
}

}  // namespace weft
