// StringNGrams: for every row of a ragged string tensor (flat tokens in
// `data`, rows given by `data_splits`) and every width W in ngram_widths,
// the W-token windows joined with `separator`, in width order. Each row is
// padded with min(pad_width, W - 1) copies of left_pad and right_pad (W - 1
// when pad_width < 0); with preserve_short_sequences a non-empty row too
// short for any window gives one n-gram: the whole row with pad_width pads
// on each side. Output and errors follow TensorFlow's kernel, including its
// empty case (no data or no splits: as many empty strings as data has, and
// zero splits).
//
// Everything a peer sends is checked before a token is read: splits start
// at 0, never decrease and end at the number of tokens; widths are positive
// and, like pad_width, fit an int32; and the output (n-grams, the pieces
// joined, their bytes) is counted first and refused past 2**31 - 1, so a
// huge width or pad cannot exhaust memory.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
// The most n-grams, joined pieces or output bytes one run may make.
constexpr int64_t kMaxOutput = kInt32Max;

// Where one n-gram's pieces come from: `left` left pads, then `tokens`
// tokens from row offset `start`, then `right` right pads.
struct Window {
  int64_t left, start, tokens, right;
};

class StringNGramsOp : public OpKernel {
 public:
  explicit StringNGramsOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("separator", &separator_));
    c->SetStatus(c->GetAttr("ngram_widths", &widths_));
    c->SetStatus(c->GetAttr("left_pad", &left_pad_));
    c->SetStatus(c->GetAttr("right_pad", &right_pad_));
    c->SetStatus(c->GetAttr("pad_width", &pad_width_));
    c->SetStatus(c->GetAttr("preserve_short_sequences", &preserve_short_));
    if (pad_width_ < kInt32Min || pad_width_ > kInt32Max) {
      c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
          "Attr pad_width has value ", pad_width_, " out of range for an int32")));
    }
    for (int64_t w : widths_) {
      if (w < kInt32Min || w > kInt32Max) {
        c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
            "Attr ngram_widths has value ", w, " out of range for an int32")));
      }
    }
  }

  void Compute(OpKernelContext* c) override;

 private:
  int64_t PadFor(int64_t width) const {
    return std::min(pad_width_ < 0 ? width - 1 : pad_width_, width - 1);
  }
  int64_t CountFor(int64_t length, int64_t width) const {
    return std::max<int64_t>(0, length + 2 * PadFor(width) - width + 1);
  }
  // The n-gram `k` of `count` at `width` over a row (padded by `pad`).
  static Window WindowAt(int64_t k, int64_t count, int64_t width, int64_t pad) {
    Window w;
    w.left = std::max<int64_t>(0, pad - k);
    w.right = std::max<int64_t>(0, pad - (count - 1 - k));
    w.tokens = width - w.left - w.right;
    w.start = w.left > 0 ? 0 : k - pad;
    return w;
  }
  // Calls fn(window, width) for every n-gram of a row of `length` tokens
  // whose plain count was `plain`, in output order.
  template <typename Fn>
  void ForEachWindow(int64_t length, int64_t plain, Fn fn) const {
    for (int64_t width : widths_) {
      const int64_t count = CountFor(length, width), pad = PadFor(width);
      for (int64_t k = 0; k < count; ++k) fn(WindowAt(k, count, width, pad), width);
    }
    if (preserve_short_ && length > 0 && plain == 0) {
      const int64_t width = length + 2 * pad_width_;
      fn(WindowAt(0, 1, width, std::min(pad_width_, width - 1)), width);
    }
  }
  template <typename S>
  absl::Status CheckSplits(const S* s, int64_t size, int64_t n) const;
  template <typename S>
  void ComputeFor(OpKernelContext* c);

  std::string separator_, left_pad_, right_pad_;
  std::vector<int64_t> widths_;
  int64_t pad_width_ = 0;
  bool preserve_short_ = false;
};

template <typename S>
absl::Status StringNGramsOp::CheckSplits(const S* s, int64_t size, int64_t n) const {
  if (size == 0) return absl::OkStatus();
  if (s[0] != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("First split value must be 0, got ", s[0], " (data_splits)"));
  }
  for (int64_t i = 1; i < size; ++i) {
    if (s[i] < s[i - 1] || s[i] > n) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid split value ", s[i], ", must be in [", s[i - 1], ", ", n,
                       "] (data_splits[", i, "])"));
    }
  }
  if (s[size - 1] != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("Last split value must be data size. Expected ", n, ", got ",
                     s[size - 1], " (data_splits)"));
  }
  return absl::OkStatus();
}

void StringNGramsOp::Compute(OpKernelContext* c) {
  for (int64_t w : widths_) {
    OP_REQUIRES(c, w > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "ngram_widths must contain positive values, got ", w)));
  }
  if (c->input(1).dtype() == DT_INT32) {
    ComputeFor<int32_t>(c);
  } else {
    ComputeFor<int64_t>(c);
  }
}

template <typename S>
void StringNGramsOp::ComputeFor(OpKernelContext* c) {
  const Tensor& data = c->input(0);
  const Tensor& splits = c->input(1);
  const int64_t n = data.NumElements();
  const int64_t size = splits.NumElements();
  const S* s = splits.data<S>();
  OP_REQUIRES_OK(c, CheckSplits(s, size, n));
  const int64_t rows = size - 1;
  Tensor* out_splits = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(1, splits.shape(), &out_splits));
  S* os = out_splits->data<S>();
  if (n == 0 || size == 0) {
    // TensorFlow's empty result: data's shape in empty strings.
    std::fill(os, os + size, S(0));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, data.shape(), &out));
    return;
  }
  const std::string* tokens = data.data<std::string>();
  std::vector<int64_t> prefix(n + 1, 0);  // bytes of the tokens before each
  for (int64_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + tokens[i].size();

  // Count every row's n-grams, then the pieces they join (in closed form,
  // so a huge width is refused without walking its windows), then their
  // bytes; all before making any.
  std::vector<int64_t> plain(rows, 0);
  int64_t total = 0, pieces = 0;
  __int128 bytes = 0;
  const auto too_many = [](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        "StringNGrams would make more than ", kMaxOutput, " ", what,
        " (ngram_widths, pad_width, separator, left_pad, right_pad)"));
  };
  os[0] = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t length = static_cast<int64_t>(s[r + 1]) - s[r];
    for (int64_t width : widths_) {
      const int64_t count = CountFor(length, width);
      plain[r] += count;
      OP_REQUIRES(c, count == 0 || width <= (kMaxOutput - pieces) / count,
                  too_many("joined pieces"));
      pieces += count * width;
    }
    const bool keep_short = preserve_short_ && length > 0 && plain[r] == 0;
    OP_REQUIRES(c, !keep_short || pad_width_ >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Pad width should be >= 0 when preserve_short_sequences is True and "
                    "ngram_widths are not provided, got ", pad_width_, " (pad_width)")));
    if (keep_short) pieces += length + 2 * pad_width_;
    OP_REQUIRES(c, pieces <= kMaxOutput, too_many("joined pieces"));
    total += plain[r] + (keep_short ? 1 : 0);
    os[r + 1] = static_cast<S>(total);
    const int64_t base = s[r];
    // In 128 bits: a window's bytes can pass 2**63 before the check.
    ForEachWindow(length, plain[r], [&](const Window& w, int64_t width) {
      bytes += static_cast<__int128>(w.left) * left_pad_.size() +
               static_cast<__int128>(w.right) * right_pad_.size() +
               static_cast<__int128>(width - 1) * separator_.size() +
               (prefix[base + w.start + w.tokens] - prefix[base + w.start]);
    });
    OP_REQUIRES(c, bytes <= kMaxOutput, too_many("bytes"));
  }
  Tensor* out = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({total}), &out));
  std::string* o = out->data<std::string>();
  int64_t at = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t length = static_cast<int64_t>(s[r + 1]) - s[r];
    const std::string* row = tokens + s[r];
    ForEachWindow(length, plain[r], [&](const Window& w, int64_t width) {
      std::string& g = o[at++];
      for (int64_t i = 0; i < width; ++i) {
        if (i > 0) g += separator_;
        if (i < w.left) {
          g += left_pad_;
        } else if (i < w.left + w.tokens) {
          g += row[w.start + i - w.left];
        } else {
          g += right_pad_;
        }
      }
    });
  }
}

}  // namespace

// Called by RegisterStringKernels (string_transform_kernels.cc).
void RegisterStringNGramsKernels(KernelRegistry* r) {
  for (DataType t : {DT_INT32, DT_INT64}) {
    r->Register(KernelDef("StringNGrams", kDeviceTypeCpu).TypeConstraint("Tsplits", t),
                MakeKernel<StringNGramsOp>);
  }
}

}  // namespace weft
