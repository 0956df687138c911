// Softmax, LogSoftmax and SparseSoftmaxCrossEntropyWithLogits, over the
// last dim, numerically stable: every row is shifted by its max before
// exp(), so large logits neither overflow nor lose the small ones.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/nn_register.h"

namespace weft {
namespace {

// Rough cycles per element of a softmax row (a max, an exp, a sum, a scale).
constexpr int64_t kSoftmaxCost = 16;

template <typename T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& logits = c->input(0);
    OP_REQUIRES(c, logits.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "logits must have at least 1 dimension, got shape ",
                    logits.shape().DebugString())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0}, logits.shape(), &out));
    const int64_t classes = logits.dim_size(logits.dims() - 1);
    if (logits.NumElements() == 0) return;
    const int64_t rows = logits.NumElements() / classes;
    const T* x = logits.data<T>();
    T* y = out->data<T>();
    ParallelRange(c, rows, classes * kSoftmaxCost, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        ConstArrayMap<T> in(x + r * classes, classes);
        ArrayMap<T> o(y + r * classes, classes);
        // A NaN anywhere makes the whole row NaN whichever max is found.
        const T max = in.maxCoeff();
        if constexpr (kLog) {
          o = in - max;
          o -= std::log(o.exp().sum());
        } else {
          o = (in - max).exp();
          o *= T(1) / o.sum();
        }
      }
    });
  }
};

// "1 5 -1": TensorFlow prints every label; a long batch is cut short here.
template <typename L>
std::string SummarizeLabels(const L* labels, int64_t n) {
  constexpr int64_t kMaxShown = 100;
  std::string s;
  for (int64_t i = 0; i < std::min(n, kMaxShown); ++i) {
    absl::StrAppend(&s, i == 0 ? "" : " ", labels[i]);
  }
  if (n > kMaxShown) absl::StrAppend(&s, " ...");
  return s;
}

// features [batch, classes], labels [batch] of class indices.
// loss[i] = logsumexp(features[i]) - features[i, labels[i]];
// backprop[i] = softmax(features[i]) - onehot(labels[i]).
template <typename T, typename L>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  explicit SparseSoftmaxXentOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& features = c->input(0);
    const Tensor& labels = c->input(1);
    OP_REQUIRES(c, features.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "logits must be 2-D, but got shape ",
                    features.shape().DebugString())));
    OP_REQUIRES(c, labels.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "labels must be 1-D, but got shape ",
                    labels.shape().DebugString())));
    const int64_t batch = features.dim_size(0);
    const int64_t classes = features.dim_size(1);
    OP_REQUIRES(c, labels.dim_size(0) == batch,
                absl::InvalidArgumentError(absl::StrCat(
                    "logits and labels must have the same first dimension, "
                    "got logits shape ",
                    features.shape().DebugString(), " and labels shape ",
                    labels.shape().DebugString())));
    OP_REQUIRES(c, batch == 0 || classes > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Must have at least one class, but got logits shape ",
                    features.shape().DebugString())));
    const L* label = labels.data<L>();
    if (batch > 0) {
      const auto [lo, hi] = std::minmax_element(label, label + batch);
      const L bad = *lo < 0 ? *lo : *hi;
      OP_REQUIRES(c, *lo >= 0 && *hi < classes,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Received a label value of ", bad,
                      " which is outside the valid range of [0, ", classes,
                      ").  Label values: ", SummarizeLabels(label, batch))));
    }
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({batch}), &loss));
    OP_REQUIRES_OK(c, c->forward_input_or_allocate_output(
                          0, 1, features.shape(), &backprop));
    if (batch == 0) return;
    const T* x = features.data<T>();
    T* l = loss->data<T>();
    T* bp = backprop->data<T>();
    ParallelRange(c, batch, classes * kSoftmaxCost, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        ConstArrayMap<T> in(x + r * classes, classes);
        ArrayMap<T> g(bp + r * classes, classes);  // may alias `in`
        const T max = in.maxCoeff();
        const T picked = in[label[r]] - max;
        g = (in - max).exp();
        const T sum = g.sum();
        l[r] = std::log(sum) - picked;
        g *= T(1) / sum;
        g[label[r]] -= T(1);
      }
    });
  }
};

template <typename T>
void RegisterSoftmax(KernelRegistry* r) {
  RegisterCpuKernel<SoftmaxOp<T, false>, T>(r, "Softmax");
  RegisterCpuKernel<SoftmaxOp<T, true>, T>(r, "LogSoftmax");
  const char* xent = "SparseSoftmaxCrossEntropyWithLogits";
  r->Register(KernelDef(xent, kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value)
                  .TypeConstraint("Tlabels", DT_INT32),
              MakeKernel<SparseSoftmaxXentOp<T, int32_t>>);
  r->Register(KernelDef(xent, kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value)
                  .TypeConstraint("Tlabels", DT_INT64),
              MakeKernel<SparseSoftmaxXentOp<T, int64_t>>);
}

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry* r) {
  RegisterSoftmax<float>(r);
  RegisterSoftmax<double>(r);
}

}  // namespace weft
