// StringSplit (v1: any byte of `delimiter` splits, "" splits into bytes,
// skip_empty), StringSplitV2 (Python's str.split: a separator string, or
// runs of whitespace when `sep` is "", at most `maxsplit` splits) and
// ReduceJoin (strings joined along the reduced dims, the first listed
// varying fastest, with `separator`). The splits give TensorFlow's sparse
// triple: indices [n, 2], values [n], shape [batch, longest row].
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

using Tokens = std::vector<absl::string_view>;

Tokens SplitV1(absl::string_view s, absl::string_view delim, bool skip_empty) {
  Tokens out;
  if (s.empty()) return out;
  if (delim.empty()) {
    for (size_t i = 0; i < s.size(); ++i) out.push_back(s.substr(i, 1));
    return out;
  }
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || delim.find(s[i]) != absl::string_view::npos) {
      if (!skip_empty || i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

Tokens SplitV2(absl::string_view s, absl::string_view sep, int64_t maxsplit) {
  Tokens out;
  if (sep.empty()) {
    // Runs of whitespace, TensorFlow's way: maxsplit 0 keeps the string as
    // it is; after the maxsplit-th token the rest (even "") is one more.
    if (maxsplit == 0) return {s};
    size_t i = 0;
    while (i < s.size() && absl::ascii_isspace(s[i])) ++i;
    while (i < s.size()) {
      size_t j = i;
      while (j < s.size() && !absl::ascii_isspace(s[j])) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
      while (i < s.size() && absl::ascii_isspace(s[i])) ++i;
      if (maxsplit > 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        out.push_back(s.substr(i));
        break;
      }
    }
    return out;
  }
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    const size_t at = s.find(sep, start);
    if (at == absl::string_view::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}

template <bool kV2>
class StringSplitOp : public OpKernel {
 public:
  explicit StringSplitOp(OpKernelConstruction* c) : OpKernel(c) {
    if constexpr (kV2) {
      c->SetStatus(c->GetAttr("maxsplit", &maxsplit_));
    } else {
      c->SetStatus(c->GetAttr("skip_empty", &skip_empty_));
    }
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const Tensor& delim = c->input(1);
    OP_REQUIRES(c, in.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be a vector, got shape: ",
                    in.shape().DebugString())));
    OP_REQUIRES(c, delim.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    kV2 ? "sep" : "delimiter", " must be a scalar, got shape: ",
                    delim.shape().DebugString())));
    const std::string& d = delim.scalar<std::string>();
    const int64_t batch = in.dim_size(0);
    std::vector<Tokens> rows(batch);
    int64_t total = 0, longest = 0;
    for (int64_t i = 0; i < batch; ++i) {
      const std::string& s = in.data<std::string>()[i];
      rows[i] = kV2 ? SplitV2(s, d, maxsplit_) : SplitV1(s, d, skip_empty_);
      total += rows[i].size();
      longest = std::max<int64_t>(longest, rows[i].size());
    }
    Tensor *indices = nullptr, *values = nullptr, *shape = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({total, 2}), &indices));
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({total}), &values));
    OP_REQUIRES_OK(c, c->allocate_output(2, TensorShape({2}), &shape));
    int64_t* ix = indices->data<int64_t>();
    std::string* v = values->data<std::string>();
    int64_t k = 0;
    for (int64_t i = 0; i < batch; ++i) {
      for (size_t j = 0; j < rows[i].size(); ++j, ++k) {
        ix[2 * k] = i;
        ix[2 * k + 1] = static_cast<int64_t>(j);
        v[k] = std::string(rows[i][j]);
      }
    }
    shape->data<int64_t>()[0] = batch;
    shape->data<int64_t>()[1] = longest;
  }

 private:
  int64_t maxsplit_ = -1;
  bool skip_empty_ = true;
};

class ReduceJoinOp : public OpKernel {
 public:
  explicit ReduceJoinOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("keep_dims", &keep_dims_));
    c->SetStatus(c->GetAttr("separator", &separator_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const Tensor& axes = c->input(1);
    const int rank = in.dims();
    std::vector<bool> reduced(rank, false);
    std::vector<int> kept, red;
    for (int64_t k = 0; k < axes.NumElements(); ++k) {
      const int32_t a = axes.data<int32_t>()[k];
      OP_REQUIRES(c, a >= -rank && a < rank,
                  absl::OutOfRangeError(absl::StrCat(
                      "Invalid reduction dimension ", a, " for input with ",
                      rank, " dimension(s)")));
      const int d = a < 0 ? a + rank : a;
      OP_REQUIRES(c, !reduced[d],
                  absl::InvalidArgumentError(
                      absl::StrCat("Duplicate reduction dimension ", a)));
      reduced[d] = true;
      red.push_back(d);  // the first listed varies fastest, as in TensorFlow
    }
    // Row-major strides of the input; kept and reduced dims apart.
    std::vector<int64_t> stride(rank, 1);
    for (int d = rank - 2; d >= 0; --d) {
      stride[d] = stride[d + 1] * in.dim_size(d + 1);
    }
    TensorShape out_shape;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) kept.push_back(d);
      if (!reduced[d]) {
        out_shape.AddDim(in.dim_size(d));
      } else if (keep_dims_) {
        out_shape.AddDim(1);
      }
    }
    int64_t red_count = 1;
    for (int d : red) red_count *= in.dim_size(d);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    const std::string* s = in.data<std::string>();
    std::vector<int64_t> idx(red.size());
    for (int64_t o = 0; o < out->NumElements(); ++o) {
      int64_t base = 0, rem = o;
      for (int k = static_cast<int>(kept.size()) - 1; k >= 0; --k) {
        const int64_t n = in.dim_size(kept[k]);
        base += (rem % n) * stride[kept[k]];
        rem /= n;
      }
      std::string joined;
      std::fill(idx.begin(), idx.end(), 0);
      for (int64_t r = 0; r < red_count; ++r) {
        int64_t off = base;
        for (size_t k = 0; k < red.size(); ++k) off += idx[k] * stride[red[k]];
        if (r > 0) joined += separator_;
        joined += s[off];
        for (size_t k = 0; k < red.size(); ++k) {
          if (++idx[k] < in.dim_size(red[k])) break;
          idx[k] = 0;
        }
      }
      out->data<std::string>()[o] = std::move(joined);
    }
  }

 private:
  bool keep_dims_ = false;
  std::string separator_;
};

}  // namespace

void RegisterStringSplitKernels(KernelRegistry* r) {
  r->Register(KernelDef("StringSplit", kDeviceTypeCpu),
              MakeKernel<StringSplitOp<false>>);
  r->Register(KernelDef("StringSplitV2", kDeviceTypeCpu),
              MakeKernel<StringSplitOp<true>>);
  r->Register(KernelDef("ReduceJoin", kDeviceTypeCpu),
              MakeKernel<ReduceJoinOp>);
}

}  // namespace weft
