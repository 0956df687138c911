// StringToNumber, as TensorFlow parses: floats with strtof/strtod in the C
// locale (leading and trailing whitespace, inf/infinity/nan in any case,
// hex; at most 31 characters, TensorFlow's limit), integers as optional
// whitespace, sign, decimal digits, whitespace, in range of the type.
// Anything else: INVALID_ARGUMENT "StringToNumberOp could not correctly
// convert string: <s>".
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

template <typename T>
bool ParseFloat(const std::string& s, T* out) {
  if (s.empty() || s.size() >= 32) return false;
  const char* begin = s.c_str();
  // strtod skips leading whitespace itself; TensorFlow's parser accepts
  // the same set.
  char* end = nullptr;
  if constexpr (std::is_same_v<T, float>) {
    *out = std::strtof(begin, &end);
  } else {
    *out = std::strtod(begin, &end);
  }
  if (end == begin) return false;
  for (const char* p = end; *p != '\0'; ++p) {
    if (!absl::ascii_isspace(*p)) return false;
  }
  return true;
}

template <typename T>
bool ParseInt(const std::string& s, T* out) {
  absl::string_view v = absl::StripAsciiWhitespace(s);
  if (v.empty()) return false;
  bool neg = false;
  if (v[0] == '+' || v[0] == '-') {
    neg = v[0] == '-';
    v.remove_prefix(1);
  }
  if (v.empty()) return false;
  using Wide = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
  Wide value = 0;
  for (char ch : v) {
    if (ch < '0' || ch > '9') return false;
    value = value * 10 + (ch - '0');
    if (value > static_cast<Wide>(std::numeric_limits<T>::max()) + 1) {
      return false;
    }
  }
  if (neg) {
    if constexpr (std::is_unsigned_v<T>) return false;  // even "-0"
    value = -value;
  }
  if (value > static_cast<Wide>(std::numeric_limits<T>::max()) ||
      value < static_cast<Wide>(std::numeric_limits<T>::min())) {
    return false;
  }
  *out = static_cast<T>(value);
  return true;
}

template <typename T>
class StringToNumberOp : public OpKernel {
 public:
  explicit StringToNumberOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      const std::string& s = in.data<std::string>()[i];
      bool ok;
      if constexpr (std::is_floating_point_v<T>) {
        ok = ParseFloat(s, &out->data<T>()[i]);
      } else {
        ok = ParseInt(s, &out->data<T>()[i]);
      }
      OP_REQUIRES(c, ok,
                  absl::InvalidArgumentError(absl::StrCat(
                      "StringToNumberOp could not correctly convert string: ",
                      s)));
    }
  }
};

template <typename T>
void Add(KernelRegistry* r) {
  r->Register(KernelDef("StringToNumber", kDeviceTypeCpu)
                  .TypeConstraint("out_type", DataTypeToEnum<T>::value),
              MakeKernel<StringToNumberOp<T>>);
}

}  // namespace

void RegisterStringNumberKernels(KernelRegistry* r) {
  Add<float>(r);
  Add<double>(r);
  Add<int32_t>(r);
  Add<int64_t>(r);
  Add<uint32_t>(r);
  Add<uint64_t>(r);
}

}  // namespace weft
