// Joining and splitting along an axis: ConcatV2, Pack, Unpack, Split, SplitV.
//
// All five view each tensor as a matrix [outer, axis_size * inner] (outer =
// product of the dims before the axis), so concatenation copies one run per
// input per outer row. Splits whose pieces are contiguous and aligned alias
// the input instead of copying.
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/array_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/allocator.h"

namespace weft {
namespace {

int64_t Outer(const TensorShape& s, int axis) {
  int64_t n = 1;
  for (int i = 0; i < axis; ++i) n *= s.dim_size(i);
  return n;
}

// out[o, :] = concat_i(inputs[i][o, :]); each input has `widths[i]` columns.
void ConcatRows(const std::vector<Tensor>& inputs,
                const std::vector<int64_t>& widths, int64_t outer,
                const Tensor& out) {
  int64_t total = 0;
  for (int64_t w : widths) total += w;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t col = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      CopyElements(inputs[i], o * widths[i], out, o * total + col, widths[i]);
      col += widths[i];
    }
  }
}

// Piece i of `in` viewed as [outer, total]: columns [start, start + width).
// Aliases `in` when the piece is one contiguous, aligned run.
absl::Status SplitPiece(OpKernelContext* c, int i, const Tensor& in,
                        int64_t outer, int64_t total, int64_t start,
                        int64_t width, const TensorShape& shape) {
  const size_t elem = DataTypeIsObject(in.dtype()) ? 0 : DataTypeSize(in.dtype());
  if (outer == 1 && elem > 0 && (start * elem) % kTensorAlignment == 0 &&
      in.NumElements() > 0) {
    c->set_output(i, in.Reshaped(TensorShape({in.NumElements()}))
                         .Slice(start, start + width)
                         .Reshaped(shape));
    return absl::OkStatus();
  }
  Tensor* out;
  absl::Status s = c->allocate_output(i, shape, &out);
  if (!s.ok()) return s;
  for (int64_t o = 0; o < outer; ++o) {
    CopyElements(in, o * total + start, *out, o * width, width);
  }
  return absl::OkStatus();
}

class ConcatV2Op : public OpKernel {
 public:
  explicit ConcatV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const int n = c->num_inputs() - 1;
    int64_t axis_value;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(n), "ConcatV2's axis", &axis_value));
    const Tensor& first = c->input(0);
    const int rank = first.dims();
    OP_REQUIRES(c, rank > 0,
                absl::InvalidArgumentError(
                    "ConcatOp : Can't concatenate scalars (use tf.stack instead)"));
    int axis;
    OP_REQUIRES_OK(c, CanonicalAxis(axis_value, rank,
                                    "ConcatOp : concatenation axis", &axis));
    std::vector<Tensor> inputs;
    std::vector<int64_t> widths;
    TensorShape out_shape = first.shape();
    int64_t axis_total = 0;
    const int64_t outer = Outer(first.shape(), axis);
    for (int i = 0; i < n; ++i) {
      const Tensor& t = c->input(i);
      OP_REQUIRES(c, t.dims() == rank,
                  absl::InvalidArgumentError(absl::StrCat(
                      "ConcatOp : Ranks of all input tensors should match: "
                      "shape[0] = ", first.shape().DebugString(), " vs. shape[",
                      i, "] = ", t.shape().DebugString())));
      for (int d = 0; d < rank; ++d) {
        OP_REQUIRES(c, d == axis || t.dim_size(d) == first.dim_size(d),
                    absl::InvalidArgumentError(absl::StrCat(
                        "ConcatOp : Dimension ", d,
                        " in both shapes must be equal: shape[0] = ",
                        first.shape().DebugString(), " vs. shape[", i, "] = ",
                        t.shape().DebugString())));
      }
      axis_total += t.dim_size(axis);
      inputs.push_back(t);
      widths.push_back(outer == 0 ? 0 : t.NumElements() / outer);
    }
    out_shape.set_dim(axis, axis_total);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    if (out->NumElements() > 0) ConcatRows(inputs, widths, outer, *out);
  }
};

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* c) override {
    const int n = c->num_inputs();
    const Tensor& first = c->input(0);
    int axis;
    OP_REQUIRES_OK(c, CanonicalAxis(axis_, first.dims() + 1, "Pack axis", &axis));
    std::vector<Tensor> inputs;
    for (int i = 0; i < n; ++i) {
      const Tensor& t = c->input(i);
      OP_REQUIRES(c, t.shape() == first.shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Shapes of all inputs must match: values[0].shape = ",
                      first.shape().DebugString(), " != values[", i,
                      "].shape = ", t.shape().DebugString())));
      inputs.push_back(t);
    }
    TensorShape out_shape = first.shape();
    out_shape.InsertDim(axis, n);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t outer = Outer(first.shape(), axis);
    std::vector<int64_t> widths(n, first.NumElements() / outer);
    ConcatRows(inputs, widths, outer, *out);
  }

 private:
  int64_t axis_ = 0;
};

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const int num = c->num_outputs();
    int axis;
    OP_REQUIRES_OK(c, CanonicalAxis(axis_, in.dims(), "Unpack axis", &axis));
    OP_REQUIRES(c, in.dim_size(axis) == num,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input shape axis ", axis, " must equal ", num,
                    ", got shape ", in.shape().DebugString())));
    TensorShape piece = in.shape();
    piece.RemoveDim(axis);
    const int64_t outer = Outer(in.shape(), axis);
    const int64_t width = piece.num_elements() / std::max<int64_t>(outer, 1);
    for (int i = 0; i < num; ++i) {
      OP_REQUIRES_OK(c, SplitPiece(c, i, in, outer, width * num, i * width,
                                   width, piece));
    }
  }

 private:
  int64_t axis_ = 0;
};

// Split (sizes equal) and SplitV (sizes given, one may be -1).
class SplitOp : public OpKernel {
 public:
  explicit SplitOp(OpKernelConstruction* c)
      : OpKernel(c), v_(c->def().op() == "SplitV") {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(v_ ? 0 : 1);
    const int num = c->num_outputs();
    int64_t dim_value;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(v_ ? 2 : 0), "split_dim", &dim_value));
    int axis;
    OP_REQUIRES_OK(c, CanonicalAxis(dim_value, in.dims(), "split_dim", &axis));
    const int64_t dim = in.dim_size(axis);
    std::vector<int64_t> sizes;
    if (v_) {
      OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "size_splits", &sizes));
      OP_REQUIRES(c, static_cast<int>(sizes.size()) == num,
                  absl::InvalidArgumentError(absl::StrCat(
                      "size_splits has ", sizes.size(),
                      " entries but num_split is ", num)));
      int unknown = -1;
      int64_t known = 0;
      for (int i = 0; i < num; ++i) {
        if (sizes[i] == -1 && unknown < 0) {
          unknown = i;
          continue;
        }
        OP_REQUIRES(c, sizes[i] >= 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "size_splits [", absl::StrJoin(sizes, ","),
                        "] may hold one -1 and otherwise non-negative sizes")));
        known += sizes[i];
      }
      OP_REQUIRES(c, unknown >= 0 ? known <= dim : known == dim,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Determined shape must either match input shape along "
                      "split_dim exactly if fully specified, or be less than "
                      "the size of the input along split_dim if not fully "
                      "specified.  Got: size_splits [", absl::StrJoin(sizes, ","),
                      "] for dimension ", axis, " of shape ",
                      in.shape().DebugString())));
      if (unknown >= 0) sizes[unknown] = dim - known;
    } else {
      OP_REQUIRES(c, dim % num == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Number of ways to split should evenly divide the split "
                      "dimension, but got split_dim ", axis, " (size = ", dim,
                      ") and num_split ", num)));
      sizes.assign(num, dim / num);
    }
    const int64_t outer = Outer(in.shape(), axis);
    const int64_t inner =
        dim == 0 || outer == 0 ? 0 : in.NumElements() / outer / dim;
    int64_t start = 0;
    for (int i = 0; i < num; ++i) {
      TensorShape piece = in.shape();
      piece.set_dim(axis, sizes[i]);
      if (piece.num_elements() == 0) {
        Tensor* out;
        OP_REQUIRES_OK(c, c->allocate_output(i, piece, &out));
      } else if (axis == 0 || outer == 1) {
        OP_REQUIRES_OK(c, SplitPiece(c, i, in, 1, in.NumElements(), start * inner,
                                     sizes[i] * inner, piece));
      } else {
        OP_REQUIRES_OK(c, SplitPiece(c, i, in, outer, dim * inner, start * inner,
                                     sizes[i] * inner, piece));
      }
      start += sizes[i];
    }
  }

 private:
  const bool v_;
};

}  // namespace

void RegisterArrayConcatKernels(KernelRegistry* r) {
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", PodAndStringTypes());
  };
  // Variants too (TensorFlow's pfor stacks and splits list handles).
  auto with_variant = [](const char* op) {
    DataTypeVector types = PodAndStringTypes();
    types.push_back(DT_VARIANT);
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", types);
  };
  r->Register(with_variant("ConcatV2"), MakeKernel<ConcatV2Op>);
  r->Register(with_variant("Pack"), MakeKernel<PackOp>);
  r->Register(with_variant("Unpack"), MakeKernel<UnpackOp>);
  r->Register(def("Split"), MakeKernel<SplitOp>);
  r->Register(def("SplitV"), MakeKernel<SplitOp>);
}

}  // namespace weft
