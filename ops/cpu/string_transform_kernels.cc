// Element-wise string kernels: StringLength (bytes or UTF-8 characters),
// StringUpper/StringLower (ASCII, or Unicode with encoding "utf-8",
// string_utf8.h), StringStrip (ASCII whitespace), Substr (bytes or UTF-8
// characters; pos/len elementwise, scalar or broadcast; TensorFlow's
// out-of-range errors) and EncodeBase64/DecodeBase64 (the web-safe
// alphabet, TensorFlow's padding rules). Big tensors run in parallel.
#include <array>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/string_utf8.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

// Output 0 = fn(input 0) element by element (string in, Out out).
template <typename Out, typename Fn>
void MapStrings(OpKernelContext* c, Fn&& fn) {
  const Tensor& in = c->input(0);
  Tensor* out = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
  const std::string* s = in.data<std::string>();
  Out* o = out->data<Out>();
  ParallelRange(c, in.NumElements(), 100, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = fn(s[i]);
  });
}

class StringLengthOp : public OpKernel {
 public:
  explicit StringLengthOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string unit;
    c->SetStatus(c->GetAttr("unit", &unit));
    chars_ = unit == "UTF8_CHAR";
  }
  void Compute(OpKernelContext* c) override {
    MapStrings<int32_t>(c, [&](const std::string& s) {
      return static_cast<int32_t>(chars_ ? Utf8Length(s) : s.size());
    });
  }

 private:
  bool chars_ = false;
};

template <bool kUpper>
class StringCaseOp : public OpKernel {
 public:
  explicit StringCaseOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string encoding;
    c->SetStatus(c->GetAttr("encoding", &encoding));
    if (!encoding.empty() && encoding != "utf-8") {
      c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
          "only utf-8 or '' (no encoding) is supported, received ",
          encoding)));
    }
    utf8_ = encoding == "utf-8";
  }
  void Compute(OpKernelContext* c) override {
    MapStrings<std::string>(c, [&](const std::string& s) {
      if (utf8_) return kUpper ? Utf8ToUpper(s) : Utf8ToLower(s);
      return kUpper ? absl::AsciiStrToUpper(s) : absl::AsciiStrToLower(s);
    });
  }

 private:
  bool utf8_ = false;
};

class StringStripOp : public OpKernel {
 public:
  explicit StringStripOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    MapStrings<std::string>(c, [](const std::string& s) {
      return std::string(absl::StripAsciiWhitespace(s));
    });
  }
};

template <typename T>
class SubstrOp : public OpKernel {
 public:
  explicit SubstrOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string unit;
    c->SetStatus(c->GetAttr("unit", &unit));
    chars_ = unit == "UTF8_CHAR";
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const Tensor& pos = c->input(1);
    const Tensor& len = c->input(2);
    OP_REQUIRES(c, pos.shape() == len.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "pos and len should have the same shape, got: ",
                    pos.shape().DebugString(), " vs. ",
                    len.shape().DebugString())));
    TensorShape shape;
    std::array<std::vector<int64_t>, 3> strides;
    OP_REQUIRES(c,
                BroadcastShape(in.shape(), pos.shape(), &shape) &&
                    BroadcastStrides(in.shape(), shape, &strides[0]) &&
                    BroadcastStrides(pos.shape(), shape, &strides[1]) &&
                    BroadcastStrides(len.shape(), shape, &strides[2]),
                absl::InvalidArgumentError(absl::StrCat(
                    "Incompatible shapes: ", in.shape().DebugString(),
                    " vs. ", pos.shape().DebugString())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const std::string* s = in.data<std::string>();
    const T* p = pos.data<T>();
    const T* l = len.data<T>();
    std::string* o = out->data<std::string>();
    absl::Status status;
    ForEachBroadcast<3>(shape, strides,
                        [&](int64_t i, const std::array<int64_t, 3>& off) {
      if (!status.ok()) return;
      status = One(s[off[0]], p[off[1]], l[off[2]], i, &o[i]);
    });
    OP_REQUIRES_OK(c, status);
  }

 private:
  absl::Status One(const std::string& s, int64_t pos, int64_t len, int64_t i,
                   std::string* out) const {
    const int64_t size = chars_ ? Utf8Length(s) : static_cast<int64_t>(s.size());
    if (pos > size || pos < -size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pos ", pos, " out of range for string",
          chars_ ? "" : absl::StrCat(" b'", s, "'"), " at index ", i));
    }
    if (pos < 0) pos += size;
    // A negative len: to the end in bytes, nothing in characters (as
    // TensorFlow does).
    const int64_t count = len >= 0 ? std::min(len, size - pos)
                          : chars_ ? 0
                                   : size - pos;
    if (!chars_) {
      *out = s.substr(pos, count);
      return absl::OkStatus();
    }
    const size_t begin = Utf8Offset(s, pos);
    const size_t end =
        begin + Utf8Offset(absl::string_view(s).substr(begin), count);
    *out = s.substr(begin, end - begin);
    return absl::OkStatus();
  }

  bool chars_ = false;
};

constexpr char kWebSafe[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

class EncodeBase64Op : public OpKernel {
 public:
  explicit EncodeBase64Op(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("pad", &pad_));
  }
  void Compute(OpKernelContext* c) override {
    MapStrings<std::string>(c, [&](const std::string& s) {
      std::string out;
      out.reserve((s.size() + 2) / 3 * 4);
      size_t i = 0;
      for (; i + 3 <= s.size(); i += 3) {
        const uint32_t v = (static_cast<uint8_t>(s[i]) << 16) |
                           (static_cast<uint8_t>(s[i + 1]) << 8) |
                           static_cast<uint8_t>(s[i + 2]);
        for (int k = 18; k >= 0; k -= 6) out.push_back(kWebSafe[(v >> k) & 63]);
      }
      const size_t rest = s.size() - i;
      if (rest > 0) {
        uint32_t v = static_cast<uint8_t>(s[i]) << 16;
        if (rest == 2) v |= static_cast<uint8_t>(s[i + 1]) << 8;
        for (size_t k = 0; k <= rest; ++k) {
          out.push_back(kWebSafe[(v >> (18 - 6 * k)) & 63]);
        }
        if (pad_) out.append(3 - rest, '=');
      }
      return out;
    });
  }

 private:
  bool pad_ = false;
};

int Base64Value(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '-') return 62;
  if (ch == '_') return 63;
  return -1;
}

// Decodes groups of up to 4 characters, TensorFlow's way: "=" or "==" may
// end a final group of 4; a final group of 1 is an error.
absl::Status DecodeBase64(const std::string& s, std::string* out) {
  out->clear();
  size_t end = s.size();
  if (end == 0) return absl::OkStatus();
  const size_t last = end - ((end - 1) % 4 + 1);  // start of the last group
  if (end - last == 4) {
    if (s[last + 2] == '=' && s[last + 3] == '=') {
      end -= 2;
    } else if (s[last + 3] == '=') {
      end -= 1;
    }
  }
  for (size_t g = 0; g < end; g += 4) {
    const size_t n = std::min<size_t>(4, end - g);
    if (n == 1) {
      return absl::InvalidArgumentError(
          "Base64 string length cannot be 1 modulo 4.");
    }
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int d = k < n ? Base64Value(s[g + k]) : 0;
      if (d < 0) {
        return absl::InvalidArgumentError(
            "Invalid character found in base64.");
      }
      v = (v << 6) | d;
    }
    for (size_t k = 0; k + 1 < n; ++k) {
      out->push_back(static_cast<char>(v >> (16 - 8 * k)));
    }
  }
  return absl::OkStatus();
}

class DecodeBase64Op : public OpKernel {
 public:
  explicit DecodeBase64Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      OP_REQUIRES_OK(c, DecodeBase64(in.data<std::string>()[i],
                                     &out->data<std::string>()[i]));
    }
  }
};

}  // namespace

// The other string kernel files' registrations, called from here.
void RegisterStringFormatKernels(KernelRegistry* r);
void RegisterStringHashKernels(KernelRegistry* r);
void RegisterStringNumberKernels(KernelRegistry* r);
void RegisterStringRegexKernels(KernelRegistry* r);
void RegisterStringSplitKernels(KernelRegistry* r);
void RegisterStringNGramsKernels(KernelRegistry* r);

void RegisterStringKernels(KernelRegistry* r) {
  RegisterStringFormatKernels(r);
  RegisterStringHashKernels(r);
  RegisterStringNumberKernels(r);
  RegisterStringRegexKernels(r);
  RegisterStringSplitKernels(r);
  RegisterStringNGramsKernels(r);
  r->Register(KernelDef("StringLength", kDeviceTypeCpu),
              MakeKernel<StringLengthOp>);
  r->Register(KernelDef("StringUpper", kDeviceTypeCpu),
              MakeKernel<StringCaseOp<true>>);
  r->Register(KernelDef("StringLower", kDeviceTypeCpu),
              MakeKernel<StringCaseOp<false>>);
  r->Register(KernelDef("StringStrip", kDeviceTypeCpu),
              MakeKernel<StringStripOp>);
  r->Register(KernelDef("Substr", kDeviceTypeCpu).TypeConstraint("T", DT_INT32),
              MakeKernel<SubstrOp<int32_t>>);
  r->Register(KernelDef("Substr", kDeviceTypeCpu).TypeConstraint("T", DT_INT64),
              MakeKernel<SubstrOp<int64_t>>);
  r->Register(KernelDef("EncodeBase64", kDeviceTypeCpu),
              MakeKernel<EncodeBase64Op>);
  r->Register(KernelDef("DecodeBase64", kDeviceTypeCpu),
              MakeKernel<DecodeBase64Op>);
}

}  // namespace weft
