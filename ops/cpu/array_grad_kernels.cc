// Kernels for the array ops gradient functions emit: ConcatOffset,
// InvertPermutation, ListDiff and DynamicStitch. (StridedSliceGrad lives
// with StridedSlice in array_slice_kernels.cc, PadV2 with Pad in
// array_tile_kernels.cc, ShapeN with Shape in array_shape_kernels.cc.)
#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

// ConcatOffset(axis, shape_0..N-1): where each input starts in the concat.
class ConcatOffsetOp : public OpKernel {
 public:
  explicit ConcatOffsetOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    int64_t axis_value = 0;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(0), "concat_dim", &axis_value));
    std::vector<int64_t> first;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "shape[0]", &first));
    int axis = 0;
    OP_REQUIRES_OK(c, CanonicalAxis(axis_value, static_cast<int>(first.size()),
                                    "concat_dim", &axis));
    int64_t offset = 0;
    for (int i = 1; i < c->num_inputs(); ++i) {
      std::vector<int64_t> shape;
      OP_REQUIRES_OK(c, ReadIntVector(c->input(i), "shape", &shape));
      OP_REQUIRES(c, shape.size() == first.size(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "input ", i - 1, " should contain ", first.size(),
                      " elements, but got ", shape.size())));
      for (size_t d = 0; d < shape.size(); ++d) {
        OP_REQUIRES(c, static_cast<int>(d) == axis || shape[d] == first[d],
                    absl::InvalidArgumentError(absl::StrCat(
                        "input[", i - 1, ",", d, "] mismatch: ", shape[d],
                        " vs. ", first[d])));
      }
      std::vector<int64_t> out(shape.size(), 0);
      out[axis] = offset;
      offset += shape[axis];
      OP_REQUIRES_OK(c, OutputInts(c, i - 1, out, false, "offset"));
    }
  }
};

class InvertPermutationOp : public OpKernel {
 public:
  explicit InvertPermutationOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    OP_REQUIRES(c, x.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "invert_permutation expects a 1D vector, got shape ",
                    x.shape().DebugString())));
    std::vector<int64_t> perm;
    OP_REQUIRES_OK(c, ReadIntVector(x, "x", &perm));
    const int64_t n = static_cast<int64_t>(perm.size());
    std::vector<int64_t> inverse(n, -1);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t d = perm[i];
      OP_REQUIRES(c, d >= 0 && d < n,
                  absl::InvalidArgumentError(
                      absl::StrCat(d, " is not between 0 and ", n)));
      OP_REQUIRES(c, inverse[d] == -1,
                  absl::InvalidArgumentError(
                      absl::StrCat(d, " is duplicated in the input.")));
      inverse[d] = i;
    }
    OP_REQUIRES_OK(c, OutputInts(c, 0, inverse, false, "index"));
  }
};

// ListDiff(x, y): the elements of x not in y, in order, and their indices.
template <typename T>
class ListDiffOp : public OpKernel {
 public:
  explicit ListDiffOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const Tensor& y = c->input(1);
    OP_REQUIRES(c, x.dims() == 1 && y.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "x and y must be vectors, got ", x.shape().DebugString(),
                    " and ", y.shape().DebugString())));
    const T* xp = x.data<T>();
    const absl::flat_hash_set<T> drop(y.data<T>(), y.data<T>() + y.NumElements());
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      if (!drop.contains(xp[i])) idx.push_back(i);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, TensorShape({static_cast<int64_t>(idx.size())}), &out));
    for (size_t k = 0; k < idx.size(); ++k) out->data<T>()[k] = xp[idx[k]];
    OP_REQUIRES_OK(c, OutputInts(c, 1, idx, false, "index"));
  }
};

// DynamicStitch(indices_0..N-1, data_0..N-1): merged[indices_i[j]] =
// data_i[j]; a later index wins where they repeat.
class DynamicStitchOp : public OpKernel {
 public:
  explicit DynamicStitchOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const int n = c->num_inputs() / 2;
    const Tensor& data0 = c->input(n);
    const int idx0_rank = c->input(0).dims();
    OP_REQUIRES(c, data0.dims() >= idx0_rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "data[0] ", data0.shape().DebugString(),
                    " must have indices[0] ", c->input(0).shape().DebugString(),
                    " as a prefix")));
    TensorShape row_shape;
    for (int d = idx0_rank; d < data0.dims(); ++d) row_shape.AddDim(data0.dim_size(d));
    const int64_t row = row_shape.num_elements();
    int64_t max_index = -1;
    std::vector<std::vector<int64_t>> indices(n);
    for (int i = 0; i < n; ++i) {
      const Tensor& idx = c->input(i);
      const Tensor& data = c->input(n + i);
      TensorShape want = idx.shape();
      for (int64_t d : row_shape.dim_sizes()) want.AddDim(d);
      OP_REQUIRES(c, data.shape() == want,
                  absl::InvalidArgumentError(absl::StrCat(
                      "data[", i, "].shape = ", data.shape().DebugString(),
                      " does not start with indices[", i, "].shape = ",
                      idx.shape().DebugString(), " followed by ",
                      row_shape.DebugString())));
      OP_REQUIRES_OK(c, ReadIntVector(idx.Reshaped(TensorShape({idx.NumElements()})),
                                      "indices", &indices[i]));
      for (int64_t v : indices[i]) {
        OP_REQUIRES(c, v >= 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "indices[", i, "] has a negative value ", v)));
        max_index = std::max(max_index, v);
      }
    }
    TensorShape out_shape({max_index + 1});
    for (int64_t d : row_shape.dim_sizes()) out_shape.AddDim(d);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    // Rows no index names are zero (TensorFlow leaves them undefined).
    VisitStorage(out->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(out->data<T>(), out->NumElements(), T{});
    });
    if (row == 0) return;
    for (int i = 0; i < n; ++i) {
      const Tensor& data = c->input(n + i);
      for (size_t j = 0; j < indices[i].size(); ++j) {
        CopyElements(data, static_cast<int64_t>(j) * row, *out,
                     indices[i][j] * row, row);
      }
    }
  }
};

template <typename T>
void RegisterListDiff(KernelRegistry* r) {
  r->Register(KernelDef("ListDiff", kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value),
              MakeKernel<ListDiffOp<T>>);
}

}  // namespace

void RegisterArrayGradKernels(KernelRegistry* r) {
  r->Register(KernelDef("ConcatOffset", kDeviceTypeCpu), MakeKernel<ConcatOffsetOp>);
  r->Register(KernelDef("InvertPermutation", kDeviceTypeCpu),
              MakeKernel<InvertPermutationOp>);
  RegisterListDiff<int32_t>(r);
  RegisterListDiff<int64_t>(r);
  RegisterListDiff<float>(r);
  RegisterListDiff<double>(r);
  // ParallelDynamicStitch: the same merge (where indices repeat, the last
  // one wins, one of the orders TensorFlow allows).
  for (const char* op : {"DynamicStitch", "ParallelDynamicStitch"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", PodAndStringTypes()),
                MakeKernel<DynamicStitchOp>);
  }
}

}  // namespace weft
