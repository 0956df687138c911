// MirrorPad (tf.pad with REFLECT or SYMMETRIC) and MirrorPadGrad.
//
// MirrorPad maps every output index of each dim to its source index once
// (REFLECT mirrors about the edge element, SYMMETRIC repeats it), then
// copies row by row: the middle of each innermost row is one contiguous
// copy, only the padded ends go through the map. Rows are shared out over
// the intra-op pool. Written once per element size (VisitStorage).
//
// MirrorPadGrad folds the padded gradient back one dim at a time, in
// TensorFlow's order: each centre element gets its left mirror image added,
// then its right one, so float sums round exactly as TensorFlow's do (half
// and bfloat16 round after each addition, like Eigen's).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_index_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/mirror_pad.h"
#include "ops/framework/op_kernel.h"

namespace weft {

absl::Status ReadMirrorPaddings(const Tensor& p, const TensorShape& in,
                                int offset, bool grad, std::vector<int64_t>* pads) {
  const int rank = in.dims();
  if (p.dims() != 2 || p.dim_size(1) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "paddings must be a matrix with 2 columns: ", p.shape().DebugString()));
  }
  if (p.dim_size(0) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "The first dimension of paddings must be the rank of inputs",
        p.shape().DebugString(), ", ", in.DebugString()));
  }
  absl::Status s =
      ReadIntVector(p.Reshaped(TensorShape({2 * rank})), "paddings", pads);
  if (!s.ok()) return s;
  const char* which = grad ? " output" : "";
  for (int d = 0; d < rank; ++d) {
    const int64_t before = (*pads)[2 * d], after = (*pads)[2 * d + 1];
    if (before < 0 || after < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "paddings must be non-negative: ", before, " ", after));
    }
    const int64_t size = grad ? in.dim_size(d) - before - after : in.dim_size(d);
    if (offset == 0 && (before > size || after > size)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "paddings must be no greater than the", which, " dimension size: ",
          before, ", ", after, " greater than ", size));
    }
    if (offset == 1 && (before >= size || after >= size)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "paddings must be less than the", which, " dimension size: ", before,
          ", ", after, " not less than ", size));
    }
  }
  return absl::OkStatus();
}

int MirrorModeOffset(OpKernelConstruction* c) {
  std::string mode;
  c->SetStatus(c->GetAttr("mode", &mode));
  return mode == "REFLECT" ? 1 : 0;
}

namespace {

class MirrorPadOp : public OpKernel {
 public:
  explicit MirrorPadOp(OpKernelConstruction* c)
      : OpKernel(c), offset_(MirrorModeOffset(c)) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    std::vector<int64_t> pads;
    OP_REQUIRES_OK(c, ReadMirrorPaddings(c->input(1), in.shape(), offset_,
                                         false, &pads));
    const int rank = in.dims();
    TensorShape shape;
    // map[d][o]: the input index along d that output index o copies.
    std::vector<std::vector<int64_t>> map(rank);
    for (int d = 0; d < rank; ++d) {
      const int64_t n = in.dim_size(d), before = pads[2 * d];
      const int64_t size = n + before + pads[2 * d + 1];
      shape.AddDim(size);
      for (int64_t o = 0; o < size; ++o) {
        map[d].push_back(MirrorIndex(o - before, n, offset_));
      }
    }
    if (shape == in.shape()) {
      c->set_output(0, in);
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    const std::vector<int64_t> strides = ShapeStrides(in.shape());
    const int64_t width = shape.dim_size(rank - 1);
    const int64_t rows = shape.num_elements() / width;
    const int64_t before = pads[2 * (rank - 1)], n = in.dim_size(rank - 1);
    VisitStorage(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      ParallelRange(c, rows, width * 2, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          int64_t from = 0;
          for (int64_t d = rank - 2, rest = row; d >= 0; --d) {
            from += map[d][rest % shape.dim_size(d)] * strides[d];
            rest /= shape.dim_size(d);
          }
          const T* s = src + from;
          T* o = dst + row * width;
          for (int64_t j = 0; j < before; ++j) o[j] = s[map[rank - 1][j]];
          std::copy(s, s + n, o + before);
          for (int64_t j = before + n; j < width; ++j) o[j] = s[map[rank - 1][j]];
        }
      });
    });
  }

 private:
  const int offset_;
};

template <typename T>
T AddValues(T a, T b) {
  return static_cast<T>(a + b);
}
Half AddValues(Half a, Half b) {
  return FloatToHalf(HalfToFloat(a) + HalfToFloat(b));
}
BFloat16 AddValues(BFloat16 a, BFloat16 b) {
  return FloatToBFloat16(BFloat16ToFloat(a) + BFloat16ToFloat(b));
}

// One dim's fold: src is [outer, size, inner], dst [outer, size - before -
// after, inner]; each centre element plus its mirror images.
template <typename T>
void FoldDim(OpKernelContext* c, const T* src, T* dst, int64_t outer,
             int64_t size, int64_t inner, int64_t before, int64_t after,
             int offset) {
  const int64_t kept = size - before - after;
  ParallelRange(c, outer * kept, inner * 3, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / kept, j = r % kept;  // j: index in the centre
      const T* plane = src + o * size * inner;
      const T* centre = plane + (before + j) * inner;
      T* out = dst + r * inner;
      std::copy(centre, centre + inner, out);
      // Left pad index p (p < before) mirrors centre index before-1-p+offset.
      const int64_t left = before - 1 + offset - j;
      if (j >= offset && left >= 0 && left < before) {
        const T* l = plane + left * inner;
        for (int64_t i = 0; i < inner; ++i) out[i] = AddValues(out[i], l[i]);
      }
      // Right pad index before+kept+q mirrors centre index kept-1-q-offset.
      const int64_t q = kept - 1 - offset - j;
      if (q >= 0 && q < after) {
        const T* rt = plane + (before + kept + q) * inner;
        for (int64_t i = 0; i < inner; ++i) out[i] = AddValues(out[i], rt[i]);
      }
    }
  });
}

class MirrorPadGradOp : public OpKernel {
 public:
  explicit MirrorPadGradOp(OpKernelConstruction* c)
      : OpKernel(c), offset_(MirrorModeOffset(c)) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    std::vector<int64_t> pads;
    OP_REQUIRES_OK(c, ReadMirrorPaddings(c->input(1), in.shape(), offset_,
                                         true, &pads));
    auto by_type = [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (IsRealNumber<T>() || kIsComplex<T>) {
        Run<T>(c, in, pads);
        return true;
      }
      return false;
    };
    bool ok = false;
    WEFT_SWITCH_ALL_TYPES(in.dtype(), ok = by_type(TypeTag<T>{}), ok = false);
    OP_REQUIRES(c, ok, UnsupportedDtype("MirrorPadGrad", in.dtype()));
  }

 private:
  template <typename T>
  void Run(OpKernelContext* c, const Tensor& in, const std::vector<int64_t>& pads) {
    const int rank = in.dims();
    std::vector<int64_t> dims(in.shape().dim_sizes().begin(),
                              in.shape().dim_sizes().end());
    std::vector<T> cur(in.data<T>(), in.data<T>() + in.NumElements()), next;
    for (int d = 0; d < rank; ++d) {
      const int64_t before = pads[2 * d], after = pads[2 * d + 1];
      if (before == 0 && after == 0) continue;
      int64_t outer = 1, inner = 1;
      for (int e = 0; e < d; ++e) outer *= dims[e];
      for (int e = d + 1; e < rank; ++e) inner *= dims[e];
      const int64_t size = dims[d];
      dims[d] = size - before - after;
      next.resize(outer * dims[d] * inner);
      FoldDim(c, cur.data(), next.data(), outer, size, inner, before, after,
              offset_);
      cur.swap(next);
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(dims), &out));
    std::copy(cur.begin(), cur.end(), out->data<T>());
  }

  const int offset_;
};

}  // namespace

void RegisterMirrorPadKernels(KernelRegistry* r) {
  r->Register(KernelDef("MirrorPad", kDeviceTypeCpu).TypeConstraint("T", PodAndStringTypes()),
              MakeKernel<MirrorPadOp>);
  DataTypeVector grad_types = RealNumberTypes();
  grad_types.push_back(DT_COMPLEX64);
  grad_types.push_back(DT_COMPLEX128);
  r->Register(KernelDef("MirrorPadGrad", kDeviceTypeCpu).TypeConstraint("T", grad_types),
              MakeKernel<MirrorPadGradOp>);
}

}  // namespace weft
