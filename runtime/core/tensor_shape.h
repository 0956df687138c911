// The shape of a tensor: a list of non-negative dimension sizes.
//
//   TensorShape s({2, 3});   s.dims() == 2, s.num_elements() == 6
//   TensorShape scalar;      scalar.dims() == 0, scalar.num_elements() == 1
//
// Shapes that come from users or files go through TensorShape::Build(),
// which rejects negative sizes, element counts that overflow int64 and more
// than kMaxTensorRank dimensions (code that walks a tensor's dimensions may
// recurse once per dimension).
// PartialShape (unknown dims as -1, or unknown rank) is for shape inference.
#ifndef WEFT_RUNTIME_CORE_TENSOR_SHAPE_H_
#define WEFT_RUNTIME_CORE_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/tensor_shape.pb.h"
#include "runtime/core/dcheck.h"

namespace weft {

// The most dimensions a tensor may have, as in TensorFlow.
inline constexpr int kMaxTensorRank = 254;

class TensorShape {
 public:
  TensorShape() = default;  // a scalar
  // Dimensions must be non-negative (use Build() for untrusted input).
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(absl::Span<const int64_t> dims);

  static absl::StatusOr<TensorShape> Build(absl::Span<const int64_t> dims);
  static absl::StatusOr<TensorShape> FromProto(
      const tensorflow::TensorShapeProto& proto);

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int i) const {
    WEFT_DCHECK(i >= 0 && i < dims());
    return dims_[i];
  }
  int64_t num_elements() const { return num_elements_; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }

  void AddDim(int64_t size);
  void InsertDim(int index, int64_t size);
  void RemoveDim(int index);
  void set_dim(int index, int64_t size);

  void ToProto(tensorflow::TensorShapeProto* proto) const;
  std::string DebugString() const;  // "[2,3]"

  bool operator==(const TensorShape& other) const {
    return dims_ == other.dims_;
  }
  bool operator!=(const TensorShape& other) const { return !(*this == other); }

 private:
  void Recount();

  absl::InlinedVector<int64_t, 4> dims_;
  int64_t num_elements_ = 1;
};

// A shape known only in part: rank may be unknown; a dim of -1 is unknown.
class PartialShape {
 public:
  PartialShape() : known_rank_(false) {}  // nothing known
  explicit PartialShape(absl::Span<const int64_t> dims)
      : known_rank_(true), dims_(dims.begin(), dims.end()) {}
  PartialShape(std::initializer_list<int64_t> dims)
      : known_rank_(true), dims_(dims) {}
  static PartialShape FromShape(const TensorShape& shape) {
    return PartialShape(shape.dim_sizes());
  }
  static PartialShape FromProto(const tensorflow::TensorShapeProto& proto);
  static PartialShape UnknownRank() { return PartialShape(); }

  bool known_rank() const { return known_rank_; }
  int rank() const { return static_cast<int>(dims_.size()); }  // if known
  int64_t dim(int i) const {
    WEFT_DCHECK(known_rank_ && i >= 0 && i < rank());
    return dims_[i];
  }
  absl::Span<const int64_t> dims() const { return dims_; }
  bool IsFullyDefined() const;
  // Fully defined shapes only.
  TensorShape ToShape() const { return TensorShape(absl::MakeSpan(dims_)); }
  // True if some tensor could have both shapes.
  bool IsCompatibleWith(const PartialShape& other) const;
  bool IsCompatibleWith(const TensorShape& shape) const {
    return IsCompatibleWith(FromShape(shape));
  }
  std::string DebugString() const;  // "[?,3]" or "<unknown>"

  bool operator==(const PartialShape& o) const {
    return known_rank_ == o.known_rank_ && dims_ == o.dims_;
  }

 private:
  bool known_rank_;
  absl::InlinedVector<int64_t, 4> dims_;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_TENSOR_SHAPE_H_
