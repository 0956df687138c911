// L2Loss and the dense SoftmaxCrossEntropyWithLogits.
//
// The cross-entropy is computed per row from the max-shifted logits s:
//   loss = sum(labels * (log(sum(exp(s))) - s)),  backprop = softmax - labels
// so large logits neither overflow nor lose the small ones. Labels (or
// logits) may broadcast along either dim of size 1, as TensorFlow allows.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/nn_register.h"

namespace weft {
namespace {

template <typename T>
class L2LossOp : public OpKernel {
 public:
  explicit L2LossOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& t = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    // Partial sums per block, then their sum: parallel and close to a tree.
    constexpr int64_t kBlock = 1 << 14;
    const int64_t n = t.NumElements();
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    std::vector<T> partial(blocks, T(0));
    const T* x = t.data<T>();
    ParallelRange(c, blocks, kBlock * 2, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t begin = i * kBlock;
        partial[i] =
            ConstArrayMap<T>(x + begin, std::min(kBlock, n - begin)).square().sum();
      }
    });
    T sum = T(0);
    for (T p : partial) sum += p;
    out->scalar<T>() = sum / T(2);
  }
};

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  explicit SoftmaxXentOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& logits = c->input(0);
    const Tensor& labels = c->input(1);
    OP_REQUIRES(c, logits.dims() == 2 && labels.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "logits and labels must be 2-D, got logits ",
                    logits.shape().DebugString(), " and labels ",
                    labels.shape().DebugString())));
    int64_t dims[2];
    for (int d = 0; d < 2; ++d) {
      const int64_t a = logits.dim_size(d), b = labels.dim_size(d);
      OP_REQUIRES(c, a == b || a == 1 || b == 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "logits and labels must be broadcastable: logits_size=",
                      logits.shape().DebugString(), " labels_size=",
                      labels.shape().DebugString())));
      dims[d] = a == 1 ? b : a;
    }
    const int64_t rows = dims[0], classes = dims[1];
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({rows}), &loss));
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({rows, classes}), &backprop));
    if (rows == 0 || classes == 0) {
      for (int64_t r = 0; r < rows; ++r) loss->data<T>()[r] = T(0);
      return;
    }
    // A broadcast operand repeats its single row (or column).
    auto row_of = [&](const Tensor& t, int64_t r, std::vector<T>* scratch) {
      const T* base = t.data<T>() + (t.dim_size(0) == 1 ? 0 : r * t.dim_size(1));
      if (t.dim_size(1) == classes) return base;
      scratch->assign(classes, base[0]);
      return static_cast<const T*>(scratch->data());
    };
    ParallelRange(c, rows, classes * 20, [&](int64_t b, int64_t e) {
      std::vector<T> s1, s2;
      for (int64_t r = b; r < e; ++r) {
        ConstArrayMap<T> x(row_of(logits, r, &s1), classes);
        ConstArrayMap<T> y(row_of(labels, r, &s2), classes);
        ArrayMap<T> bp(backprop->data<T>() + r * classes, classes);
        const T max = x.maxCoeff();
        bp = (x - max).exp();
        const T sum = bp.sum();
        const T log_sum = std::log(sum);
        loss->data<T>()[r] = (y * (log_sum - (x - max))).sum();
        bp = bp / sum - y;
      }
    });
  }
};

template <typename T>
void RegisterLosses(KernelRegistry* r) {
  r->Register(KernelDef("L2Loss", kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value),
              MakeKernel<L2LossOp<T>>);
  r->Register(KernelDef("SoftmaxCrossEntropyWithLogits", kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value),
              MakeKernel<SoftmaxXentOp<T>>);
}

}  // namespace

void RegisterNnLossKernels(KernelRegistry* r) {
  RegisterLosses<float>(r);
  RegisterLosses<double>(r);
}

}  // namespace weft
