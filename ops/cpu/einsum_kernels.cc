// Einsum on CPU (float, double, complex64, complex128; half and bfloat16
// through float, via_float_kernel.cc), one or two operands, reduced to what
// the rest of the library does well:
//   1. each operand is viewed through strides: a label repeated within it
//      (a diagonal) is one dimension whose stride is the sum of the
//      repeats', and a broadcast dimension of size 1 is dropped;
//   2. labels only one operand has and the output lacks are summed out;
//   3. two operands become one batched GEMM (matmul_gemm.h):
//        A[batch, free_a, contracted] x B[batch, contracted, free_b]
//      each side copied into that order only when it is not already so laid
//      out (Keras' EinsumDense "abc,cd->abd" multiplies in place);
//   4. the product (or the single operand) is copied into the output's
//      label order, unless it already is in it.
// Label sizes must agree, except that an ellipsis's dimensions broadcast.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/matmul_gemm.h"
#include "ops/einsum_equation.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// An operand seen through strides (in elements), one label per dimension.
template <typename T>
struct View {
  const T* data = nullptr;
  std::vector<int> labels;
  std::vector<int64_t> dims, strides;

  int Find(int label) const {
    auto it = std::find(labels.begin(), labels.end(), label);
    return it == labels.end() ? -1 : static_cast<int>(it - labels.begin());
  }
  bool Has(int label) const { return Find(label) >= 0; }
};

template <typename T>
View<T> Contiguous(const T* data, std::vector<int> labels,
                   std::vector<int64_t> dims) {
  View<T> v;
  v.data = data;
  v.labels = std::move(labels);
  v.dims = std::move(dims);
  v.strides.assign(v.dims.size(), 1);
  for (int i = static_cast<int>(v.dims.size()) - 2; i >= 0; --i) {
    v.strides[i] = v.strides[i + 1] * v.dims[i + 1];
  }
  return v;
}

// Whether `v` is laid out contiguously in exactly `order`.
template <typename T>
bool IsContiguousIn(const View<T>& v, const std::vector<int>& order) {
  if (v.labels != order) return false;
  int64_t stride = 1;
  for (int i = static_cast<int>(v.dims.size()) - 1; i >= 0; --i) {
    if (v.dims[i] != 1 && v.strides[i] != stride) return false;
    stride *= v.dims[i];
  }
  return true;
}

// out (contiguous, labels `keep` in that order) = the sum of `v` over its
// other labels. Every label of `keep` must be in `v`.
template <typename T>
void Gather(const View<T>& v, const std::vector<int>& keep, T* out) {
  std::vector<int64_t> dims, strides;  // kept dims, then summed ones
  for (int l : keep) {
    const int i = v.Find(l);
    dims.push_back(v.dims[i]);
    strides.push_back(v.strides[i]);
  }
  const size_t kept = dims.size();
  for (size_t i = 0; i < v.labels.size(); ++i) {
    if (std::find(keep.begin(), keep.end(), v.labels[i]) == keep.end()) {
      dims.push_back(v.dims[i]);
      strides.push_back(v.strides[i]);
    }
  }
  int64_t kept_n = 1, summed_n = 1;
  for (size_t i = 0; i < dims.size(); ++i) (i < kept ? kept_n : summed_n) *= dims[i];
  // An odometer over all dims, the summed ones innermost.
  std::vector<int64_t> index(dims.size(), 0);
  int64_t offset = 0;
  for (int64_t o = 0; o < kept_n; ++o) {
    T sum = T(0);
    for (int64_t s = 0; s < summed_n; ++s) {
      sum += v.data[offset];
      for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
        offset += strides[d];
        if (++index[d] < dims[d]) break;
        offset -= strides[d] * dims[d];
        index[d] = 0;
      }
    }
    out[o] = sum;
  }
}

// Checks and records every label's size; ellipsis dims broadcast.
absl::Status LabelSizes(const EinsumEquation& eq, OpKernelContext* c,
                        const std::string& equation,
                        std::map<int, int64_t>* sizes) {
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    const TensorShape& s = c->input(static_cast<int>(i)).shape();
    for (size_t d = 0; d < eq.inputs[i].size(); ++d) {
      const int label = eq.inputs[i][d];
      const int64_t n = s.dim_size(static_cast<int>(d));
      auto [it, fresh] = sizes->emplace(label, n);
      if (fresh || it->second == n) continue;
      if (label >= kEllipsisLabel && (n == 1 || it->second == 1)) {
        it->second = std::max(n, it->second);
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "Einsum equation '", equation, "': dimension ", d, " of input ", i,
          " (shape ", s.DebugString(), ") has size ", n,
          " but the same label has size ", it->second, " elsewhere"));
    }
  }
  return absl::OkStatus();
}

// Operand `i` as a view: diagonals merged, broadcast (size-1) dims of
// labels whose size is larger dropped.
template <typename T>
absl::StatusOr<View<T>> OperandView(OpKernelContext* c, int i,
                                    const std::vector<int>& labels,
                                    const std::map<int, int64_t>& sizes,
                                    const std::string& equation) {
  const Tensor& t = c->input(i);
  std::vector<int64_t> dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
  View<T> full = Contiguous<T>(t.data<T>(), labels, dims);
  View<T> v;
  v.data = full.data;
  for (size_t d = 0; d < labels.size(); ++d) {
    const int label = labels[d];
    if (full.dims[d] == 1 && sizes.at(label) != 1) continue;  // broadcast
    const int at = v.Find(label);
    if (at < 0) {
      v.labels.push_back(label);
      v.dims.push_back(full.dims[d]);
      v.strides.push_back(full.strides[d]);
    } else if (v.dims[at] != full.dims[d]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Einsum equation '", equation, "': input ", i,
          " repeats a label over dimensions of different sizes"));
    } else {
      v.strides[at] += full.strides[d];  // a diagonal
    }
  }
  return v;
}

// Labels of `v` (in its order) that satisfy pred.
template <typename T, typename Pred>
std::vector<int> LabelsWhere(const View<T>& v, Pred pred) {
  std::vector<int> out;
  for (int l : v.labels) {
    if (pred(l)) out.push_back(l);
  }
  return out;
}

template <typename T>
class EinsumOp : public OpKernel {
 public:
  explicit EinsumOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("equation", &equation_));
    if (c->num_inputs() > 2) {
      c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
          "Einsum on CPU takes one or two operands, got ", c->num_inputs())));
    }
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    std::vector<int> ranks;
    for (int i = 0; i < c->num_inputs(); ++i) ranks.push_back(c->input(i).dims());
    absl::StatusOr<EinsumEquation> eq = ParseEinsumEquation(equation_, ranks);
    OP_REQUIRES_OK(c, eq.status());
    std::map<int, int64_t> sizes;
    OP_REQUIRES_OK(c, LabelSizes(*eq, c, equation_, &sizes));
    std::vector<int64_t> out_dims;
    for (int l : eq->output) out_dims.push_back(sizes.count(l) ? sizes[l] : 1);
    absl::StatusOr<TensorShape> out_shape = TensorShape::Build(out_dims);
    OP_REQUIRES_OK(c, out_shape.status());
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, *out_shape, &out));
    T* y = out->data<T>();
    if (out->NumElements() == 0) return;
    std::vector<View<T>> views;
    for (int i = 0; i < c->num_inputs(); ++i) {
      absl::StatusOr<View<T>> v = OperandView<T>(c, i, eq->inputs[i], sizes, equation_);
      OP_REQUIRES_OK(c, v.status());
      views.push_back(*std::move(v));
    }
    // Output labels the operands lost to broadcasting have size 1; they
    // take no part below.
    std::vector<int> out_labels;
    for (int l : eq->output) {
      for (const View<T>& v : views) {
        if (v.Has(l)) {
          out_labels.push_back(l);
          break;
        }
      }
    }
    if (views.size() == 1) {
      Gather(views[0], out_labels, y);
      return;
    }
    OP_REQUIRES_OK(c, Contract(c, views[0], views[1], out_labels, y));
  }

 private:
  // y (labels `out` in order) = A x B summed over their shared labels that
  // `out` lacks.
  absl::Status Contract(OpKernelContext* c, View<T> a, View<T> b,
                        const std::vector<int>& out, T* y) {
    auto in_out = [&](int l) { return std::count(out.begin(), out.end(), l) > 0; };
    // Labels one side alone has and the output lacks are summed out first.
    Tensor a_sum, b_sum;
    WEFT_RETURN_IF_ERROR(SumOutPrivate(c, b, in_out, &a, &a_sum));
    WEFT_RETURN_IF_ERROR(SumOutPrivate(c, a, in_out, &b, &b_sum));
    std::vector<int> batch, free_a, free_b;
    for (int l : out) {
      if (a.Has(l) && b.Has(l)) batch.push_back(l);
      else if (a.Has(l)) free_a.push_back(l);
      else free_b.push_back(l);
    }
    const std::vector<int> contracted =
        LabelsWhere(a, [&](int l) { return b.Has(l) && !in_out(l); });
    auto size_of = [&](int l) { return a.Has(l) ? a.dims[a.Find(l)] : b.dims[b.Find(l)]; };
    auto product = [&](const std::vector<int>& labels) {
      int64_t n = 1;
      for (int l : labels) n *= size_of(l);
      return n;
    };
    const int64_t batches = product(batch), m = product(free_a),
                  k = product(contracted), n = product(free_b);
    auto concat = [](std::vector<int> x, const std::vector<int>& y2,
                     const std::vector<int>& z) {
      x.insert(x.end(), y2.begin(), y2.end());
      x.insert(x.end(), z.begin(), z.end());
      return x;
    };
    Tensor a_buf, b_buf, c_buf;
    WEFT_ASSIGN_OR_RETURN(const T* ap, Arrange(c, a, concat(batch, free_a, contracted), &a_buf));
    WEFT_ASSIGN_OR_RETURN(const T* bp, Arrange(c, b, concat(batch, contracted, free_b), &b_buf));
    const std::vector<int> product_order = concat(batch, free_a, free_b);
    T* cp = y;
    if (product_order != out) {
      WEFT_RETURN_IF_ERROR(c->allocate_temp(DataTypeToEnum<T>::value,
                                            TensorShape({batches * m * n}), &c_buf));
      cp = c_buf.data<T>();
    }
    if (k == 0) {
      std::fill(cp, cp + batches * m * n, T(0));
    } else {
      for (int64_t i = 0; i < batches; ++i) {
        WEFT_RETURN_IF_ERROR(Gemm(c, false, false, m, n, k, ap + i * m * k,
                                  bp + i * k * n, cp + i * m * n));
      }
    }
    if (cp != y) {
      std::vector<int64_t> dims;
      for (int l : product_order) dims.push_back(size_of(l));
      Gather(Contiguous<T>(cp, product_order, dims), out, y);
    }
    return absl::OkStatus();
  }

  // Replaces *v by the sum over the labels it has and neither `other` nor
  // the output has (kept in *storage); a no-op when there are none.
  template <typename InOut>
  static absl::Status SumOutPrivate(OpKernelContext* c, const View<T>& other,
                                    InOut in_out, View<T>* v, Tensor* storage) {
    const std::vector<int> keep =
        LabelsWhere(*v, [&](int l) { return other.Has(l) || in_out(l); });
    if (keep.size() == v->labels.size()) return absl::OkStatus();
    std::vector<int64_t> dims;
    int64_t count = 1;
    for (int l : keep) {
      dims.push_back(v->dims[v->Find(l)]);
      count *= dims.back();
    }
    WEFT_RETURN_IF_ERROR(c->allocate_temp(DataTypeToEnum<T>::value,
                                          TensorShape({count}), storage));
    Gather(*v, keep, storage->data<T>());
    *v = Contiguous<T>(storage->data<T>(), keep, dims);
    return absl::OkStatus();
  }

  // v's data laid out contiguously in `order`: in place when it already is,
  // else copied into *storage.
  static absl::StatusOr<const T*> Arrange(OpKernelContext* c, const View<T>& v,
                                          const std::vector<int>& order,
                                          Tensor* storage) {
    if (IsContiguousIn(v, order)) return v.data;
    int64_t count = 1;
    for (int64_t d : v.dims) count *= d;
    WEFT_RETURN_IF_ERROR(c->allocate_temp(DataTypeToEnum<T>::value,
                                          TensorShape({count}), storage));
    Gather(v, order, storage->data<T>());
    return storage->data<T>();
  }

  std::string equation_;
};

}  // namespace

void RegisterEinsumKernels(KernelRegistry* r) {
  r->Register(KernelDef("Einsum", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
              MakeKernel<EinsumOp<float>>);
  r->Register(KernelDef("Einsum", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE),
              MakeKernel<EinsumOp<double>>);
  r->Register(KernelDef("Einsum", kDeviceTypeCpu).TypeConstraint("T", DT_COMPLEX64),
              MakeKernel<EinsumOp<Complex64>>);
  r->Register(KernelDef("Einsum", kDeviceTypeCpu).TypeConstraint("T", DT_COMPLEX128),
              MakeKernel<EinsumOp<Complex128>>);
}

}  // namespace weft
