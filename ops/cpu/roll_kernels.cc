// Roll (elements shifted cyclically along axes, shifts on a repeated axis
// adding up) and ReverseSequence (each batch entry's first seq_lengths[b]
// steps along seq_dim reversed; bidirectional RNNs over padded batches).
// Both copy innermost rows: Roll's is two contiguous pieces, and
// ReverseSequence copies a row whole unless the innermost dim is itself the
// sequence or batch dim. Written once per element size (VisitStorage),
// rows shared out over the intra-op pool.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "ops/cpu/array_index_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// Reads input i as a scalar or vector of int32/int64.
absl::Status ReadScalarOrVector(const Tensor& t, const char* what,
                                std::vector<int64_t>* out) {
  if (t.dims() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be a scalar or a 1-D vector. Found: ", t.shape().DebugString()));
  }
  return ReadIntVector(t.Reshaped(TensorShape({t.NumElements()})), what, out);
}

// Calls fn(row, src, o) for each innermost row of `in`, with src the
// input's elements and o the start of output row `row` (both typed by
// element size), rows shared out over the intra-op pool.
template <typename Fn>
void ForEachRow(OpKernelContext* c, const Tensor& in, Tensor* out, Fn&& fn) {
  const int64_t width = in.dim_size(in.dims() - 1);
  VisitStorage(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = in.data<T>();
    T* dst = out->data<T>();
    ParallelRange(c, in.NumElements() / width, width + 8 * in.dims(),
                  [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) fn(row, src, dst + row * width);
    });
  });
}

class RollOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const int rank = in.dims();
    OP_REQUIRES(c, rank >= 1,
                absl::InvalidArgumentError("input must be 1-D or higher"));
    std::vector<int64_t> shifts, axes;
    OP_REQUIRES_OK(c, ReadScalarOrVector(c->input(1), "shift", &shifts));
    OP_REQUIRES_OK(c, ReadScalarOrVector(c->input(2), "axis", &axes));
    OP_REQUIRES(c, shifts.size() == axes.size(),
                absl::InvalidArgumentError(absl::StrCat(
                    "shift and axis must have the same size")));
    std::vector<int64_t> shift(rank, 0);  // per dim, in [0, dim)
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      OP_REQUIRES(c, a >= 0 && a < rank,
                  absl::InvalidArgumentError(
                      absl::StrCat("axis ", axes[i], " is out of range")));
      const int64_t n = in.dim_size(a);
      if (n > 0) shift[a] = ((shift[a] + shifts[i] % n) % n + n) % n;
    }
    if (in.NumElements() == 0 ||
        std::all_of(shift.begin(), shift.end(), [](int64_t s) { return s == 0; })) {
      c->set_output(0, in);
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    const std::vector<int64_t> strides = ShapeStrides(in.shape());
    const int64_t width = in.dim_size(rank - 1);
    const int64_t s = shift[rank - 1];
    ForEachRow(c, in, out, [&](int64_t row, const auto* src, auto* o) {
      int64_t from = 0;
      for (int64_t d = rank - 2, rest = row; d >= 0; --d) {
        const int64_t n = in.dim_size(d), i = rest % n;
        rest /= n;
        from += ((i - shift[d] + n) % n) * strides[d];
      }
      // Output j takes input (j - s) mod width.
      const auto* r = src + from;
      std::copy(r + width - s, r + width, o);
      std::copy(r, r + width - s, o + s);
    });
  }
};

class ReverseSequenceOp : public OpKernel {
 public:
  explicit ReverseSequenceOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("seq_dim", &seq_dim_));
    c->SetStatus(c->GetAttr("batch_dim", &batch_dim_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const Tensor& lengths = c->input(1);
    const int rank = in.dims();
    const int64_t seq = seq_dim_, batch = batch_dim_ < 0 ? batch_dim_ + rank : batch_dim_;
    OP_REQUIRES(c, lengths.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "seq_lengths must be 1-dim, not ", lengths.dims())));
    OP_REQUIRES(c, batch != seq,
                absl::InvalidArgumentError(absl::StrCat("batch_dim == seq_dim == ", seq)));
    OP_REQUIRES(c, seq >= 0 && seq < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "seq_dim must be < input rank", " ( ", seq, " vs. ", rank, ")")));
    OP_REQUIRES(c, batch >= 0 && batch < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "batch_dim must be < input rank", " ( ", batch_dim_, " vs. ",
                    rank, ")")));
    std::vector<int64_t> len;
    OP_REQUIRES_OK(c, ReadIntVector(lengths, "seq_lengths", &len));
    OP_REQUIRES(c, static_cast<int64_t>(len.size()) == in.dim_size(batch),
                absl::InvalidArgumentError(absl::StrCat(
                    "Length of seq_lengths != input.dims(", batch, "), ", "(",
                    len.size(), " vs. ", in.dim_size(batch), ")")));
    for (size_t d = 0; d < len.size(); ++d) {
      OP_REQUIRES(c, len[d] >= 0,
                  absl::InvalidArgumentError(absl::StrCat("seq_lens(", d, ") < 0")));
      OP_REQUIRES(c, len[d] <= in.dim_size(seq),
                  absl::InvalidArgumentError(absl::StrCat(
                      "seq_lens(", d, ") > input.dims(", seq, "), ", "(", len[d],
                      " vs. ", in.dim_size(seq), ")")));
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    if (in.NumElements() == 0) return;
    const std::vector<int64_t> strides = ShapeStrides(in.shape());
    const int64_t width = in.dim_size(rank - 1);
    ForEachRow(c, in, out, [&](int64_t row, const auto* src, auto* o) {
      absl::InlinedVector<int64_t, 8> idx(rank, 0);
      for (int64_t d = rank - 2, rest = row; d >= 0; --d) {
        idx[d] = rest % in.dim_size(d);
        rest /= in.dim_size(d);
      }
      const auto* r = src + row * width;
      if (seq == rank - 1) {  // reverse within the row
        const int64_t l = len[idx[batch]];
        std::reverse_copy(r, r + l, o);
        std::copy(r + l, r + width, o + l);
      } else if (batch == rank - 1) {  // each column its own length
        const int64_t t = idx[seq];
        for (int64_t j = 0; j < width; ++j) {
          const int64_t from = t < len[j] ? len[j] - 1 - t : t;
          o[j] = r[(from - t) * strides[seq] + j];
        }
      } else {
        const int64_t t = idx[seq], l = len[idx[batch]];
        const int64_t from = t < l ? l - 1 - t : t;
        const auto* from_row = r + (from - t) * strides[seq];
        std::copy(from_row, from_row + width, o);
      }
    });
  }

 private:
  int64_t seq_dim_ = 0;
  int64_t batch_dim_ = 0;
};

}  // namespace

void RegisterRollKernels(KernelRegistry* r) {
  DataTypeVector all = PodAndStringTypes();
  all.push_back(DT_RESOURCE);
  all.push_back(DT_VARIANT);
  r->Register(KernelDef("Roll", kDeviceTypeCpu).TypeConstraint("T", all),
              MakeKernel<RollOp>);
  r->Register(KernelDef("ReverseSequence", kDeviceTypeCpu)
                  .TypeConstraint("T", PodAndStringTypes()),
              MakeKernel<ReverseSequenceOp>);
}

}  // namespace weft
