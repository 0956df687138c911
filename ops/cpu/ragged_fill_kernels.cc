// RaggedFillEmptyRows: a ragged tensor given as value_rowids + values,
// with each of its nrows rows that holds no value given one default_value;
// and RaggedFillEmptyRowsGrad, which routes the filled values' gradient
// back (the defaults' part summed into d_default_value). Row ids must be
// sorted and in [0, nrows); the reverse index map must point into
// grad_values.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

class RaggedFillEmptyRowsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& rowids_in = c->input(0);
    const Tensor& values = c->input(1);
    const Tensor& def = c->input(3);
    int64_t nrows = 0;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(2), "nrows", &nrows));
    OP_REQUIRES(c, nrows >= 0,
                absl::InvalidArgumentError(absl::StrCat("nrows must be >= 0, got ", nrows)));
    OP_REQUIRES(c, def.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat("default_value must be a scalar, got ",
                                                        def.shape().DebugString())));
    OP_REQUIRES(c, values.dims() == 1 && rowids_in.dims() == 1 &&
                       values.dim_size(0) == rowids_in.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "value_rowids and values must be vectors of one length, got ",
                    rowids_in.shape().DebugString(), " and ", values.shape().DebugString())));
    const int64_t n = values.dim_size(0);
    const int64_t* ids = rowids_in.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(c, ids[i] >= 0 && ids[i] < nrows,
                  absl::InvalidArgumentError(absl::StrCat(
                      "value_rowids[", i, "] = ", ids[i], " is not in [0, ", nrows, ")")));
      OP_REQUIRES(c, i == 0 || ids[i] >= ids[i - 1],
                  absl::InvalidArgumentError(absl::StrCat(
                      "value_rowids must be sorted, got ", ids[i - 1], " then ", ids[i],
                      " at index ", i)));
    }
    Tensor* empty;
    OP_REQUIRES_OK(c, c->allocate_output(2, TensorShape({nrows}), &empty));
    bool* is_empty = empty->data<bool>();
    std::fill(is_empty, is_empty + nrows, true);
    for (int64_t i = 0; i < n; ++i) is_empty[ids[i]] = false;
    int64_t empties = 0;
    for (int64_t r = 0; r < nrows; ++r) empties += is_empty[r] ? 1 : 0;
    const int64_t total = n + empties;
    Tensor *out_ids, *out_values, *reverse;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({total}), &out_ids));
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({total}), &out_values));
    OP_REQUIRES_OK(c, c->allocate_output(3, TensorShape({n}), &reverse));
    // Output slot of each original value (in order), and of each default.
    int64_t* oid = out_ids->data<int64_t>();
    int64_t* rev = reverse->data<int64_t>();
    std::vector<int64_t> default_slots;
    int64_t at = 0, i = 0;
    for (int64_t r = 0; r < nrows; ++r) {
      if (is_empty[r]) {
        default_slots.push_back(at);
        oid[at++] = r;
        continue;
      }
      for (; i < n && ids[i] == r; ++i) {
        rev[i] = at;
        oid[at++] = r;
      }
    }
    const bool ok = VisitStorage(values.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = values.data<T>();
      T* dst = out_values->data<T>();
      for (int64_t k = 0; k < n; ++k) dst[rev[k]] = src[k];
      for (int64_t slot : default_slots) dst[slot] = def.data<T>()[0];
    });
    OP_REQUIRES(c, ok, UnsupportedDtype("RaggedFillEmptyRows", values.dtype()));
  }
};

template <typename T>
class RaggedFillEmptyRowsGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& map = c->input(0);
    const Tensor& grad = c->input(1);
    OP_REQUIRES(c, map.dims() == 1 && grad.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "reverse_index_map and grad_values must be vectors, got ",
                    map.shape().DebugString(), " and ", grad.shape().DebugString())));
    const int64_t n = map.dim_size(0);
    const int64_t g = grad.dim_size(0);
    const int64_t* m = map.data<int64_t>();
    const T* gv = grad.data<T>();
    std::vector<bool> used(g, false);
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(c, m[i] >= 0 && m[i] < g,
                  absl::InvalidArgumentError(absl::StrCat(
                      "reverse_index_map[", i, "] = ", m[i], " is not in [0, ", g, ")")));
      used[m[i]] = true;
    }
    Tensor *d_values, *d_default;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({n}), &d_values));
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({}), &d_default));
    T* dv = d_values->data<T>();
    for (int64_t i = 0; i < n; ++i) dv[i] = gv[m[i]];
    T sum = T(0);
    for (int64_t j = 0; j < g; ++j) {
      if (!used[j]) sum += gv[j];
    }
    d_default->data<T>()[0] = sum;
  }
};

template <typename T>
void RegisterGrad(KernelRegistry* r) {
  r->Register(KernelDef("RaggedFillEmptyRowsGrad", kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value),
              MakeKernel<RaggedFillEmptyRowsGradOp<T>>);
}

}  // namespace

void RegisterRaggedFillKernels(KernelRegistry* r) {
  for (DataType t : PodAndStringTypes()) {
    r->Register(KernelDef("RaggedFillEmptyRows", kDeviceTypeCpu).TypeConstraint("T", t),
                MakeKernel<RaggedFillEmptyRowsOp>);
  }
  RegisterGrad<float>(r);
  RegisterGrad<double>(r);
  RegisterGrad<int8_t>(r);
  RegisterGrad<int16_t>(r);
  RegisterGrad<int32_t>(r);
  RegisterGrad<int64_t>(r);
  RegisterGrad<uint8_t>(r);
  RegisterGrad<uint16_t>(r);
  RegisterGrad<uint32_t>(r);
  RegisterGrad<uint64_t>(r);
}

}  // namespace weft
