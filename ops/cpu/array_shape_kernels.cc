// Kernels that change or report shapes without touching elements: Reshape,
// ExpandDims and Squeeze alias their input's buffer; Shape, Size, Rank,
// BroadcastArgs and BroadcastGradientArgs compute small index tensors.
#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/array_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

class ReshapeOp : public OpKernel {
 public:
  explicit ReshapeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "Reshape's shape input", &dims));
    int unknown = -1;
    int64_t product = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == -1) {
        OP_REQUIRES(c, unknown < 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "only one input size may be -1, not both ", unknown,
                        " and ", i)));
        unknown = static_cast<int>(i);
      } else {
        OP_REQUIRES(c, dims[i] >= 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "size ", i, " must be non-negative, not ", dims[i])));
        OP_REQUIRES(c, dims[i] == 0 || product <= INT64_MAX / dims[i],
                    absl::InvalidArgumentError(absl::StrCat(
                        "requested shape [", absl::StrJoin(dims, ","),
                        "] has too many elements")));
        product *= dims[i];
      }
    }
    const int64_t n = in.NumElements();
    auto requested = [&] { return absl::StrCat("[", absl::StrJoin(dims, ","), "]"); };
    if (unknown >= 0) {
      OP_REQUIRES(c, product > 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Reshape cannot infer the missing input size for an "
                      "empty tensor unless all specified input sizes are "
                      "non-zero (input shape ",
                      in.shape().DebugString(), ", requested shape ",
                      requested(), ")")));
      OP_REQUIRES(c, n % product == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input to reshape is a tensor with shape ",
                      in.shape().DebugString(), " (", n,
                      " values), but the requested shape ", requested(),
                      " requires a multiple of ", product)));
      dims[unknown] = n / product;
    } else {
      OP_REQUIRES(c, product == n,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input to reshape is a tensor with shape ",
                      in.shape().DebugString(), " (", n,
                      " values), but the requested shape ", requested(),
                      " has ", product)));
    }
    c->set_output(0, in.Reshaped(TensorShape(dims)));
  }
};

class ExpandDimsOp : public OpKernel {
 public:
  explicit ExpandDimsOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    int64_t dim;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(1), "ExpandDims' dim", &dim));
    int axis;
    OP_REQUIRES_OK(c, CanonicalAxis(dim, in.dims() + 1, "ExpandDims dim", &axis));
    TensorShape shape = in.shape();
    shape.InsertDim(axis, 1);
    c->set_output(0, in.Reshaped(shape));
  }
};

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("squeeze_dims", &squeeze_dims_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    std::vector<bool> drop(in.dims(), squeeze_dims_.empty());
    for (int64_t d : squeeze_dims_) {
      int axis;
      OP_REQUIRES_OK(c, CanonicalAxis(d, in.dims(), "squeeze dim", &axis));
      OP_REQUIRES(c, in.dim_size(axis) == 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Can not squeeze dim[", axis,
                      "], expected a dimension of 1, got ", in.dim_size(axis),
                      " (input shape ", in.shape().DebugString(), ")")));
      drop[axis] = true;
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < in.dims(); ++i) {
      if (!(drop[i] && in.dim_size(i) == 1)) dims.push_back(in.dim_size(i));
    }
    c->set_output(0, in.Reshaped(TensorShape(dims)));
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};

class ShapeOp : public OpKernel {
 public:
  explicit ShapeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const TensorShape& s = c->input(0).shape();
    OP_REQUIRES_OK(c, OutputInts(c, 0, {s.dim_sizes().begin(), s.dim_sizes().end()},
                                 false, "dimension"));
  }
};

// ShapeN: Shape of each of its N inputs.
class ShapeNOp : public OpKernel {
 public:
  explicit ShapeNOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    for (int i = 0; i < c->num_inputs(); ++i) {
      const TensorShape& s = c->input(i).shape();
      OP_REQUIRES_OK(c, OutputInts(c, i, {s.dim_sizes().begin(), s.dim_sizes().end()},
                                   false, "dimension"));
    }
  }
};

class SizeOp : public OpKernel {
 public:
  explicit SizeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES_OK(c, OutputInts(c, 0, {c->input(0).NumElements()}, true,
                                 "number of elements"));
  }
};

class RankOp : public OpKernel {
 public:
  explicit RankOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES_OK(c, OutputInts(c, 0, {c->input(0).dims()}, true, "rank"));
  }
};

// The broadcast of shapes s[0] and s[1] (aligned at the right, a missing
// dim counting as 1): its dims in `out`, and in reduce[i] the output dims
// input i's gradient is summed over (where it is 1 or missing and the
// output is not, and where every input is 1; equal shapes need none).
absl::Status Broadcast(const std::vector<int64_t> (&s)[2], std::vector<int64_t>* out,
                       std::vector<int64_t> (&reduce)[2]) {
  const size_t rank = std::max(s[0].size(), s[1].size());
  for (size_t j = 0; j < rank; ++j) {
    int64_t d[2];
    for (int i = 0; i < 2; ++i) {
      const int64_t k = static_cast<int64_t>(j) - (rank - s[i].size());
      d[i] = k < 0 ? 1 : s[i][k];
    }
    if (d[0] != d[1] && d[0] != 1 && d[1] != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Incompatible shapes: [", absl::StrJoin(s[0], ","), "] vs. [",
          absl::StrJoin(s[1], ","), "]"));
    }
    out->push_back(d[0] == 1 ? d[1] : d[0]);
    if (s[0] == s[1]) continue;
    const bool all_one = d[0] == 1 && d[1] == 1;
    for (int i = 0; i < 2; ++i) {
      if (all_one || (d[i] == 1 && d[1 - i] != 1)) {
        reduce[i].push_back(static_cast<int64_t>(j));
      }
    }
  }
  return absl::OkStatus();
}

// BroadcastArgs (the broadcast shape of s0 and s1) and
// BroadcastGradientArgs (the dims each input's gradient is summed over).
class BroadcastArgsOp : public OpKernel {
 public:
  explicit BroadcastArgsOp(OpKernelConstruction* c)
      : OpKernel(c), gradient_(c->def().op() == "BroadcastGradientArgs") {}
  void Compute(OpKernelContext* c) override {
    std::vector<int64_t> s[2];
    OP_REQUIRES_OK(c, ReadIntVector(c->input(0), "s0", &s[0]));
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "s1", &s[1]));
    std::vector<int64_t> shape, reduce[2];
    OP_REQUIRES_OK(c, Broadcast(s, &shape, reduce));
    if (!gradient_) {
      OP_REQUIRES_OK(c, OutputInts(c, 0, shape, false, "dim"));
      return;
    }
    OP_REQUIRES_OK(c, OutputInts(c, 0, reduce[0], false, "index"));
    OP_REQUIRES_OK(c, OutputInts(c, 1, reduce[1], false, "index"));
  }

 private:
  const bool gradient_;
};

}  // namespace

void RegisterArrayShapeKernels(KernelRegistry* r) {
  r->Register(KernelDef("Reshape", kDeviceTypeCpu), MakeKernel<ReshapeOp>);
  r->Register(KernelDef("ExpandDims", kDeviceTypeCpu), MakeKernel<ExpandDimsOp>);
  r->Register(KernelDef("Squeeze", kDeviceTypeCpu), MakeKernel<SqueezeOp>);
  r->Register(KernelDef("Shape", kDeviceTypeCpu), MakeKernel<ShapeOp>);
  r->Register(KernelDef("ShapeN", kDeviceTypeCpu), MakeKernel<ShapeNOp>);
  r->Register(KernelDef("Size", kDeviceTypeCpu), MakeKernel<SizeOp>);
  r->Register(KernelDef("Rank", kDeviceTypeCpu), MakeKernel<RankOp>);
  r->Register(KernelDef("BroadcastGradientArgs", kDeviceTypeCpu),
              MakeKernel<BroadcastArgsOp>);
  r->Register(KernelDef("BroadcastArgs", kDeviceTypeCpu), MakeKernel<BroadcastArgsOp>);
}

}  // namespace weft
