// DataFormatDimMap (a dim index in src_format to the same dim's index in
// dst_format: 1 -> 3 for NHWC -> NCHW) and DataFormatVecPermute (a vector,
// or [dims, 2] matrix, with one entry per dim of src_format reordered to
// dst_format; a vector of only the spatial dims permutes those). Both
// formats are 4 or 5 letters, the same letters; Keras emits these ops for
// NCHW models.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// Reads and checks the formats; `src`, `dst` as the attrs give them.
void ReadFormats(OpKernelConstruction* c, std::string* src, std::string* dst) {
  c->SetStatus(c->GetAttr("src_format", src));
  if (!c->status().ok()) return;
  c->SetStatus(c->GetAttr("dst_format", dst));
  if (!c->status().ok()) return;
  if (src->size() != 4 && src->size() != 5) {
    c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
        "Source format must be of length 4 or 5, received src_format = ", *src)));
  } else if (dst->size() != 4 && dst->size() != 5) {
    c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
        "Destination format must be of length 4 or 5, received dst_format = ", *dst)));
  } else if (!std::is_permutation(src->begin(), src->end(), dst->begin(), dst->end())) {
    c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
        "Destination and source format must determine a permutation, got ", *src,
        " and ", *dst)));
  }
}

// For each position of `to`, the position of the same letter in `from`.
std::vector<int> SourceOf(const std::string& from, const std::string& to) {
  std::vector<int> where(to.size(), 0);
  for (size_t j = 0; j < to.size(); ++j) where[j] = static_cast<int>(from.find(to[j]));
  return where;
}

template <typename T>
class DataFormatDimMapOp : public OpKernel {
 public:
  explicit DataFormatDimMapOp(OpKernelConstruction* c) : OpKernel(c) {
    ReadFormats(c, &src_, &dst_);
    if (c->status().ok()) target_ = SourceOf(dst_, src_);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    Tensor* y;
    OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &y));
    const T n = static_cast<T>(src_.size());
    const T* in = x.data<T>();
    T* out = y->data<T>();
    // As TensorFlow's select chain: (x + n) % n picks a dim, and anything
    // outside [0, n - 1) (x out of range) maps as the last dim does.
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const T m = (in[i] + n) % n;
      out[i] = static_cast<T>(target_[m >= 0 && m < n - 1 ? m : n - 1]);
    }
  }

 private:
  std::string src_, dst_;
  std::vector<int> target_;  // src position -> dst position
};

template <typename T>
class DataFormatVecPermuteOp : public OpKernel {
 public:
  explicit DataFormatVecPermuteOp(OpKernelConstruction* c) : OpKernel(c) {
    ReadFormats(c, &src_, &dst_);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    OP_REQUIRES(c, x.dims() == 1 || x.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be a vector or 2D tensor, but got shape ",
                    x.shape().DebugString())));
    const int64_t full = src_.size(), spatial = full - 2;
    const int64_t len = x.dim_size(0);
    OP_REQUIRES(c, len == spatial || len == full,
                absl::InvalidArgumentError(absl::StrCat(
                    x.dims() == 1 ? "1D input must be of size "
                                  : "First dimension of 2D input must be of size ",
                    spatial, " or ", full, ", but got shape ",
                    x.shape().DebugString())));
    OP_REQUIRES(c, x.dims() == 1 || x.dim_size(1) == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "Second dimension of 2D input must be of size 2, but got shape ",
                    x.shape().DebugString())));
    std::string src = src_, dst = dst_;
    if (len == spatial) {  // only the spatial dims: drop N and C
      auto keep_spatial = [](std::string* f) {
        f->erase(std::remove_if(f->begin(), f->end(),
                                [](char d) { return d == 'N' || d == 'C'; }),
                 f->end());
      };
      keep_spatial(&src);
      keep_spatial(&dst);
    }
    const std::vector<int> from = SourceOf(src, dst);
    Tensor* y;
    OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &y));
    const int64_t width = x.dims() == 2 ? 2 : 1;
    const T* in = x.data<T>();
    T* out = y->data<T>();
    for (int64_t i = 0; i < len; ++i) {
      for (int64_t k = 0; k < width; ++k) out[i * width + k] = in[from[i] * width + k];
    }
  }

 private:
  std::string src_, dst_;
};

}  // namespace

void RegisterDataFormatKernels(KernelRegistry* r) {
  auto def = [](const char* op, DataType t) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", t);
  };
  r->Register(def("DataFormatDimMap", DT_INT32), MakeKernel<DataFormatDimMapOp<int32_t>>);
  r->Register(def("DataFormatDimMap", DT_INT64), MakeKernel<DataFormatDimMapOp<int64_t>>);
  r->Register(def("DataFormatVecPermute", DT_INT32),
              MakeKernel<DataFormatVecPermuteOp<int32_t>>);
  r->Register(def("DataFormatVecPermute", DT_INT64),
              MakeKernel<DataFormatVecPermuteOp<int64_t>>);
}

}  // namespace weft
