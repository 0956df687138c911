// Slice, StridedSlice and StridedSliceGrad.
//
// StridedSlice follows TensorFlow's (and NumPy's) indexing rules in full:
// begin/end/strides form a "sparse" spec over the input dims with an
// ellipsis (explicit via ellipsis_mask, else implied at the end) standing for
// all dims not otherwise named, new_axis_mask inserting size-1 dims,
// shrink_axis_mask taking a single index and dropping the dim, and
// begin_mask/end_mask meaning "from the start/to the end" (in the direction
// of the stride). Indices are clamped like Python slices; negative ones count
// from the end.
//
// Both kernels alias the input when the result is all of it, or a run of
// whole rows starting at an aligned address.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/allocator.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// A strided box of the input: per input dim, begin, stride and the number of
// elements taken.
struct Box {
  std::vector<int64_t> begin, stride, size;
  TensorShape final_shape;  // the output's shape (new/shrunk axes applied)
};

// Aliases or copies `box` of `in` into output 0.
void EmitBox(OpKernelContext* c, const Tensor& in, const Box& box) {
  const int rank = in.dims();
  bool identity = true;
  int first_partial = -1;
  for (int d = 0; d < rank; ++d) {
    const bool whole = box.begin[d] == 0 && box.stride[d] == 1 &&
                       box.size[d] == in.dim_size(d);
    identity &= whole;
    if (!whole && first_partial < 0) first_partial = d;
  }
  if (identity) {
    c->set_output(0, in.Reshaped(box.final_shape));
    return;
  }
  // Rows [b, b + n) of dim 0, every other dim whole: alias when aligned.
  bool rows_only = first_partial == 0 && box.stride[0] == 1 && box.size[0] > 0;
  for (int d = 1; d < rank && rows_only; ++d) {
    rows_only = box.begin[d] == 0 && box.stride[d] == 1 &&
                box.size[d] == in.dim_size(d);
  }
  const size_t elem = DataTypeIsObject(in.dtype()) ? 0 : DataTypeSize(in.dtype());
  if (rows_only && elem > 0 && in.dim_size(0) > 0) {
    const int64_t row_bytes = in.NumElements() / in.dim_size(0) * elem;
    if ((box.begin[0] * row_bytes) % kTensorAlignment == 0) {
      c->set_output(0, in.Slice(box.begin[0], box.begin[0] + box.size[0])
                           .Reshaped(box.final_shape));
      return;
    }
  }
  Tensor* out;
  OP_REQUIRES_OK(c, c->allocate_output(0, box.final_shape, &out));
  if (out->NumElements() == 0) return;
  std::vector<int64_t> in_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * in.dim_size(d + 1);
  const int64_t inner = box.size[rank - 1];
  const int64_t inner_step = box.stride[rank - 1];
  const int64_t rows = out->NumElements() / inner;
  VisitStorage(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = in.data<T>();
    T* dst = out->data<T>();
    std::vector<int64_t> idx(rank, 0);
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += box.begin[d] * in_stride[d];
    for (int64_t row = 0; row < rows; ++row) {
      T* o = dst + row * inner;
      if (inner_step == 1) {
        std::copy(src + offset, src + offset + inner, o);
      } else {
        for (int64_t k = 0; k < inner; ++k) o[k] = src[offset + k * inner_step];
      }
      for (int d = rank - 2; d >= 0; --d) {
        const int64_t step = box.stride[d] * in_stride[d];
        offset += step;
        if (++idx[d] < box.size[d]) break;
        offset -= step * box.size[d];
        idx[d] = 0;
      }
    }
  });
}

class SliceOp : public OpKernel {
 public:
  explicit SliceOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const int rank = in.dims();
    std::vector<int64_t> begin, size;
    OP_REQUIRES(c, c->input(1).dims() == 1 && c->input(2).dims() == 1 &&
                       c->input(1).NumElements() == rank &&
                       c->input(2).NumElements() == rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected begin and size arguments to be 1-D tensors of "
                    "size ", rank, ", but got shapes ",
                    c->input(1).shape().DebugString(), " and ",
                    c->input(2).shape().DebugString(), " instead.")));
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "Slice's begin", &begin));
    OP_REQUIRES_OK(c, ReadIntVector(c->input(2), "Slice's size", &size));
    Box box;
    box.begin = begin;
    box.stride.assign(rank, 1);
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = in.dim_size(d);
      OP_REQUIRES(c, begin[d] >= 0 && begin[d] <= dim,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Expected begin[", d, "] in [0, ", dim, "], but got ",
                      begin[d], " (input shape ", in.shape().DebugString(), ")")));
      int64_t s = size[d] == -1 ? dim - begin[d] : size[d];
      OP_REQUIRES(c, s >= 0 && begin[d] + s <= dim,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Expected size[", d, "] in [0, ", dim - begin[d],
                      "], but got ", size[d], " (input shape ",
                      in.shape().DebugString(), ")")));
      box.size.push_back(s);
    }
    box.final_shape = TensorShape(box.size);
    EmitBox(c, in, box);
  }
};

// StridedSlice's and StridedSliceGrad's shared part: the mask attrs and the
// box they select from a shape.
class StridedSliceBase : public OpKernel {
 public:
  explicit StridedSliceBase(OpKernelConstruction* c) : OpKernel(c) {
    for (auto [name, field] :
         {std::pair<const char*, int64_t*>{"begin_mask", &begin_mask_},
          {"end_mask", &end_mask_},
          {"ellipsis_mask", &ellipsis_mask_},
          {"new_axis_mask", &new_axis_mask_},
          {"shrink_axis_mask", &shrink_mask_}}) {
      c->SetStatus(c->GetAttr(name, field));
    }
  }

 protected:
  // Reads begin/end/strides (inputs first..first+2) and selects their box
  // from `shape`.
  absl::Status BoxFromInputs(OpKernelContext* c, int first,
                             const TensorShape& shape, Box* box) const {
    const Tensor& b = c->input(first);
    const Tensor& e = c->input(first + 1);
    const Tensor& s = c->input(first + 2);
    if (b.dims() != 1 || e.shape() != b.shape() || s.shape() != b.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected begin, end, and strides to be 1D equal size "
          "tensors, but got shapes ", b.shape().DebugString(), ", ",
          e.shape().DebugString(), ", and ", s.shape().DebugString(),
          " instead."));
    }
    if (b.NumElements() > 32) {
      return absl::InvalidArgumentError(absl::StrCat(
          "StridedSlice supports at most 32 index entries, got ",
          b.NumElements()));
    }
    std::vector<int64_t> begin, end, strides;
    WEFT_RETURN_IF_ERROR(ReadIntVector(b, "StridedSlice's begin", &begin));
    WEFT_RETURN_IF_ERROR(ReadIntVector(e, "StridedSlice's end", &end));
    WEFT_RETURN_IF_ERROR(ReadIntVector(s, "StridedSlice's strides", &strides));
    return MakeBox(shape, begin, end, strides, box);
  }

 private:
  bool Bit(int64_t mask, int i) const { return (mask >> i) & 1; }

  absl::Status MakeBox(const TensorShape& shape, const std::vector<int64_t>& begin,
                       const std::vector<int64_t>& end,
                       const std::vector<int64_t>& strides, Box* box) const {
    if (ellipsis_mask_ & (ellipsis_mask_ - 1)) {
      return absl::InvalidArgumentError("Multiple ellipses in slice spec not allowed");
    }
    const int rank = shape.dims();
    int sparse_dims = static_cast<int>(begin.size());
    int64_t ellipsis = ellipsis_mask_;
    bool ellipsis_seen = false;
    int new_axes_after_ellipsis = 0;
    for (int i = 0; i < sparse_dims; ++i) {
      if (ellipsis_seen && Bit(new_axis_mask_, i)) ++new_axes_after_ellipsis;
      if (Bit(ellipsis, i)) ellipsis_seen = true;
    }
    if (!ellipsis_seen) ellipsis |= int64_t{1} << sparse_dims++;

    // Dense spec: one entry per input dim.
    constexpr int kNewAxis = -1, kShrink = -2;
    std::vector<int64_t> db(rank, 0), de(rank, 0), ds(rank, 1);
    std::vector<bool> bmask(rank, false), emask(rank, false), shrink(rank, false);
    std::vector<int> gather;  // per final dim: dense dim, kNewAxis or kShrink
    int full = 0;
    for (int i = 0; i < sparse_dims; ++i) {
      if (Bit(ellipsis, i)) {
        const int next = std::min(rank - (sparse_dims - i) + 1 + new_axes_after_ellipsis, rank);
        for (; full < next; ++full) {
          bmask[full] = emask[full] = true;
          gather.push_back(full);
        }
      } else if (Bit(new_axis_mask_, i)) {
        gather.push_back(kNewAxis);
      } else {
        if (full == rank) {
          if (rank == 0) {
            return absl::InvalidArgumentError("Attempting to slice scalar input.");
          }
          return absl::InvalidArgumentError(absl::StrCat(
              "Index out of range using input dim ", full, "; input has only ",
              rank, " dims"));
        }
        db[full] = begin[i];
        de[full] = end[i];
        ds[full] = strides[i];
        bmask[full] = Bit(begin_mask_, i);
        emask[full] = Bit(end_mask_, i);
        shrink[full] = Bit(shrink_mask_, i);
        gather.push_back(shrink[full] ? kShrink : full);
        ++full;
      }
    }

    box->begin.assign(rank, 0);
    box->stride.assign(rank, 1);
    box->size.assign(rank, 0);
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = shape.dim_size(d);
      const int64_t stride = ds[d];
      if (stride == 0) {
        return absl::InvalidArgumentError(absl::StrCat("strides[", d, "] must be non-zero"));
      }
      int64_t b, e;
      if (shrink[d]) {
        if (stride <= 0) {
          return absl::InvalidArgumentError(
              "only stride 1 allowed on non-range indexing.");
        }
        b = db[d] < 0 ? dim + db[d] : db[d];
        if (b < 0 || b >= dim) {
          return absl::InvalidArgumentError(absl::StrCat(
              "slice index ", db[d], " of dimension ", d,
              " out of bounds (size ", dim, ")."));
        }
        e = b + 1;
      } else {
        const int64_t lo = stride > 0 ? 0 : -1;
        const int64_t hi = stride > 0 ? dim : dim - 1;
        auto canonical = [&](int64_t x, bool masked, bool is_begin) {
          if (masked) return (stride > 0) == is_begin ? lo : hi;
          const int64_t fwd = x < 0 ? dim + x : x;
          return std::clamp(fwd, lo, hi);
        };
        b = canonical(db[d], bmask[d], true);
        e = canonical(de[d], emask[d], false);
      }
      const int64_t span = e - b;
      int64_t size = 0;
      if (span != 0 && (span < 0) == (stride < 0)) {
        size = span / stride + (span % stride != 0 ? 1 : 0);
      }
      box->begin[d] = b;
      box->stride[d] = stride;
      box->size[d] = size;
    }
    box->final_shape = TensorShape();
    for (int g : gather) {
      if (g >= 0) {
        box->final_shape.AddDim(box->size[g]);
      } else if (g == kNewAxis) {
        box->final_shape.AddDim(1);
      }
    }
    return absl::OkStatus();
  }

  int64_t begin_mask_ = 0, end_mask_ = 0, ellipsis_mask_ = 0;
  int64_t new_axis_mask_ = 0, shrink_mask_ = 0;
};

class StridedSliceOp : public StridedSliceBase {
 public:
  explicit StridedSliceOp(OpKernelConstruction* c) : StridedSliceBase(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    Box box;
    OP_REQUIRES_OK(c, BoxFromInputs(c, 1, in.shape(), &box));
    EmitBox(c, in, box);
  }
};

// StridedSliceGrad(shape, begin, end, strides, dy): zeros of `shape` with
// dy scattered into the box StridedSlice would have read.
class StridedSliceGradOp : public StridedSliceBase {
 public:
  explicit StridedSliceGradOp(OpKernelConstruction* c) : StridedSliceBase(c) {}
  void Compute(OpKernelContext* c) override {
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(0), "StridedSliceGrad's shape", &dims));
    TensorShape shape;
    OP_REQUIRES_OK(c, ShapeFromDims(dims, "StridedSliceGrad's shape", &shape));
    Box box;
    OP_REQUIRES_OK(c, BoxFromInputs(c, 1, shape, &box));
    const Tensor& dy = c->input(4);
    OP_REQUIRES(c, dy.shape() == box.final_shape,
                absl::InvalidArgumentError(absl::StrCat(
                    "shape of dy was ", dy.shape().DebugString(),
                    " instead of ", box.final_shape.DebugString())));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const int rank = shape.dims();
    const bool ok = VisitStorage(dy.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = out->data<T>();
      std::fill_n(dst, out->NumElements(), T{});
      if (dy.NumElements() == 0) return;
      const T* src = dy.data<T>();
      if (rank == 0) {
        dst[0] = src[0];
        return;
      }
      std::vector<int64_t> stride(rank, 1);
      for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape.dim_size(d + 1);
      const int64_t inner = box.size[rank - 1];
      const int64_t inner_step = box.stride[rank - 1];
      const int64_t rows = dy.NumElements() / inner;
      std::vector<int64_t> idx(rank, 0);
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d) offset += box.begin[d] * stride[d];
      for (int64_t row = 0; row < rows; ++row) {
        const T* in = src + row * inner;
        for (int64_t k = 0; k < inner; ++k) dst[offset + k * inner_step] = in[k];
        for (int d = rank - 2; d >= 0; --d) {
          const int64_t step = box.stride[d] * stride[d];
          offset += step;
          if (++idx[d] < box.size[d]) break;
          offset -= step * box.size[d];
          idx[d] = 0;
        }
      }
    });
    OP_REQUIRES(c, ok, UnsupportedDtype("StridedSliceGrad", dy.dtype()));
  }
};

}  // namespace

void RegisterArraySliceKernels(KernelRegistry* r) {
  // Slices move elements only, so variants (a vector of TensorList handles,
  // a variable of lists) slice too.
  DataTypeVector with_variant = PodAndStringTypes();
  with_variant.push_back(DT_VARIANT);
  r->Register(KernelDef("Slice", kDeviceTypeCpu).TypeConstraint("T", with_variant),
              MakeKernel<SliceOp>);
  r->Register(
      KernelDef("StridedSlice", kDeviceTypeCpu).TypeConstraint("T", with_variant),
      MakeKernel<StridedSliceOp>);
  r->Register(KernelDef("StridedSliceGrad", kDeviceTypeCpu)
                  .TypeConstraint("T", PodAndStringTypes()),
              MakeKernel<StridedSliceGradOp>);
}

}  // namespace weft
