// SpaceToBatchND / BatchToSpaceND (blocks of the spatial dims moved into
// the batch, with padding or cropping: how dilated convolutions run) and
// SpaceToDepth / DepthToSpace on NHWC (blocks of height and width moved
// into the channels). Each output row, the innermost contiguous run, is
// either one copy from the input row it comes from or zeros (padding), so
// the kernels are written once per element size (VisitStorage) and share
// rows out over the intra-op pool.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_index_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// The geometry both directions share. "Space" is the spatial side:
// [batch, s1..sM, rest...] with `pads` (SpaceToBatchND's paddings,
// BatchToSpaceND's crops) around each si; "batch" is [batch * prod(block),
// s1'..sM', rest...] with si' = (si + pads) / block_i.
struct BlockGeometry {
  std::vector<int64_t> block, pads;
  TensorShape space, batch;
  int64_t inner = 1;  // product of the dims after the spatial ones
};

absl::Status ReadBlockGeometry(OpKernelContext* c, bool to_batch,
                               BlockGeometry* g) {
  const Tensor& in = c->input(0);
  const Tensor& block = c->input(1);
  const Tensor& pads = c->input(2);
  const char* pads_name = to_batch ? "paddings" : "crops";
  if (block.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "block_shape rank should be 1 instead of ", block.dims()));
  }
  const int m = static_cast<int>(block.dim_size(0));
  if (pads.dims() != 2 || pads.dim_size(0) != m || pads.dim_size(1) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        pads_name, " should have shape [", m, ", 2] instead of ",
        pads.shape().DebugString()));
  }
  if (in.dims() < 1 + m) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input rank should be >= ", 1 + m, " instead of ", in.dims()));
  }
  absl::Status s = ReadIntVector(block, "block_shape", &g->block);
  if (s.ok()) {
    s = ReadIntVector(pads.Reshaped(TensorShape({2 * m})), pads_name, &g->pads);
  }
  if (!s.ok()) return s;
  int64_t product = 1;
  for (int i = 0; i < m; ++i) {
    if (g->block[i] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "All values in block_shape must be positive, got value, ",
          g->block[i], " at index ", i, "."));
    }
    if (g->pads[2 * i] < 0 || g->pads[2 * i + 1] < 0) {
      return absl::InvalidArgumentError(to_batch ? "Paddings must be non-negative"
                                                 : "Crops must be non-negative");
    }
    product *= g->block[i];
  }
  std::vector<int64_t> space(in.shape().dim_sizes().begin(),
                             in.shape().dim_sizes().end());
  std::vector<int64_t> batch = space;
  if (to_batch) {
    batch[0] = space[0] * product;
  } else {
    if (batch[0] % product != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input batch dimension (", batch[0],
          ") is not divisible by product of block sizes (", product, ")"));
    }
    space[0] = batch[0] / product;
  }
  for (int i = 0; i < m; ++i) {
    const int64_t a = g->pads[2 * i], b = g->pads[2 * i + 1];
    if (to_batch) {
      const int64_t padded = space[1 + i] + a + b;
      if (padded % g->block[i] != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "padded_shape[", i, "]=", padded, " is not divisible by block_shape[",
            i, "]=", g->block[i]));
      }
      batch[1 + i] = padded / g->block[i];
    } else {
      const int64_t cropped = batch[1 + i] * g->block[i] - a - b;
      if (cropped < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cropped_shape[", i, "]=", cropped, " must be non-negative"));
      }
      space[1 + i] = cropped;
    }
  }
  for (int d = 1 + m; d < in.dims(); ++d) g->inner *= space[d];
  g->space = TensorShape(space);
  g->batch = TensorShape(batch);
  return absl::OkStatus();
}

// For every row of the batch side (its index over [batch', s1'..sM']) calls
// fn(batch_row, space_row) with the space side's row, or -1 where the row
// is padding.
template <typename Fn>
void ForEachBlockRow(OpKernelContext* c, const BlockGeometry& g, Fn&& fn) {
  const int m = static_cast<int>(g.block.size());
  const int64_t rows = g.batch.num_elements() / std::max<int64_t>(g.inner, 1);
  const int64_t space_batch = g.space.dim_size(0);
  ParallelRange(c, g.inner == 0 ? 0 : rows, g.inner + 8 * m,
                [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t rest = row, space_row = 0, stride = 1;
      std::vector<int64_t> pos(m);
      for (int i = m - 1; i >= 0; --i) {
        pos[i] = rest % g.batch.dim_size(1 + i);
        rest /= g.batch.dim_size(1 + i);
      }
      const int64_t b = rest % space_batch;
      int64_t offset = rest / space_batch;  // which block position
      bool padding = false;
      for (int i = m - 1; i >= 0; --i) {
        const int64_t x = pos[i] * g.block[i] + offset % g.block[i] - g.pads[2 * i];
        offset /= g.block[i];
        padding |= x < 0 || x >= g.space.dim_size(1 + i);
        space_row += x * stride;
        stride *= g.space.dim_size(1 + i);
      }
      fn(row, padding ? -1 : b * stride + space_row);
    }
  });
}

class SpaceBatchOp : public OpKernel {
 public:
  explicit SpaceBatchOp(OpKernelConstruction* c)
      : OpKernel(c), to_batch_(c->def().op() == "SpaceToBatchND") {}

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    BlockGeometry g;
    OP_REQUIRES_OK(c, ReadBlockGeometry(c, to_batch_, &g));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, to_batch_ ? g.batch : g.space, &out));
    if (out->NumElements() == 0) return;
    const int64_t inner = g.inner;
    VisitStorage(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      ForEachBlockRow(c, g, [&](int64_t batch_row, int64_t space_row) {
        if (to_batch_) {
          T* o = dst + batch_row * inner;
          if (space_row < 0) {
            std::fill(o, o + inner, T{});
          } else {
            std::copy(src + space_row * inner, src + (space_row + 1) * inner, o);
          }
        } else if (space_row >= 0) {
          std::copy(src + batch_row * inner, src + (batch_row + 1) * inner,
                    dst + space_row * inner);
        }
      });
    });
  }

 private:
  const bool to_batch_;
};

class SpaceDepthOp : public OpKernel {
 public:
  explicit SpaceDepthOp(OpKernelConstruction* c)
      : OpKernel(c), to_depth_(c->def().op() == "SpaceToDepth") {
    c->SetStatus(c->GetAttr("block_size", &block_));
    c->SetStatus(c->GetAttr("data_format", &format_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES(c, format_ == "NHWC",
                absl::InvalidArgumentError(absl::StrCat(
                    "Only NHWC data_format supported on CPU. Got ", format_)));
    OP_REQUIRES(c, in.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input rank should be: 4 instead of: ", in.dims())));
    OP_REQUIRES(c, block_ >= 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "Value for attr 'block_size' of ", block_,
                    " must be at least minimum 2")));
    const int64_t bs = block_;
    const int64_t batch = in.dim_size(0);
    // The space side's [height, width, depth] and the depth side's depth.
    int64_t h = in.dim_size(1), w = in.dim_size(2), depth = in.dim_size(3);
    if (to_depth_) {
      OP_REQUIRES(c, h % bs == 0 && w % bs == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Image height ", h, " and width ", w,
                      " should be divisible by block_size: ", bs)));
    } else {
      OP_REQUIRES(c, depth % (bs * bs) == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input depth dimension ", depth,
                      " should be divisible by: ", bs * bs)));
      h *= bs;
      w *= bs;
      depth /= bs * bs;
    }
    const TensorShape shape =
        to_depth_ ? TensorShape({batch, h / bs, w / bs, depth * bs * bs})
                  : TensorShape({batch, h, w, depth});
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    VisitStorage(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      // Row (b, y, x) of the space side is channels
      // [((y % bs) * bs + x % bs) * depth, +depth) of the depth side's
      // pixel (b, y / bs, x / bs).
      ParallelRange(c, batch * h * w, depth + 8, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t x = r % w, y = (r / w) % h, b = r / (w * h);
          const int64_t pixel = (b * (h / bs) + y / bs) * (w / bs) + x / bs;
          const int64_t at = pixel * depth * bs * bs + ((y % bs) * bs + x % bs) * depth;
          if (to_depth_) {
            std::copy(src + r * depth, src + (r + 1) * depth, dst + at);
          } else {
            std::copy(src + at, src + at + depth, dst + r * depth);
          }
        }
      });
    });
  }

 private:
  const bool to_depth_;
  int64_t block_ = 0;
  std::string format_;
};

}  // namespace

void RegisterSpaceBatchKernels(KernelRegistry* r) {
  for (const char* op : {"SpaceToBatchND", "BatchToSpaceND"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", RealNumberTypes()),
                MakeKernel<SpaceBatchOp>);
  }
  DataTypeVector all = PodAndStringTypes();
  all.push_back(DT_RESOURCE);
  all.push_back(DT_VARIANT);
  for (const char* op : {"SpaceToDepth", "DepthToSpace"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", all),
                MakeKernel<SpaceDepthOp>);
  }
}

}  // namespace weft
