// DecodeRaw: each string's bytes reinterpreted as a vector of out_type
// elements (output shape = input shape + [bytes / element size]), byte-
// swapped element by element when the data's byte order is not the host's.
// All strings must be the same size, a multiple of the element size.
#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

class DecodeRawOp : public OpKernel {
 public:
  explicit DecodeRawOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("out_type", &out_type_);
    if (s.ok()) s = c->GetAttr("little_endian", &little_endian_);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES(c, in.dtype() == DT_STRING,
                absl::InvalidArgumentError("DecodeRaw: bytes must be strings"));
    const auto strings = in.flat<std::string>();
    const int64_t n = in.NumElements();
    const size_t width = DataTypeSize(out_type_);
    const size_t size = n > 0 ? strings[0].size() : 0;
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(c, strings[i].size() == size,
                  absl::InvalidArgumentError(absl::StrCat(
                      "DecodeRaw requires input strings to all be the same "
                      "size, but element ", i, " has size ", strings[i].size(),
                      " != ", size)));
    }
    OP_REQUIRES(c, size % width == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input to DecodeRaw has length ", size,
                    " that is not a multiple of ", width, ", the size of ",
                    DataTypeString(out_type_))));
    TensorShape shape = in.shape();
    shape.AddDim(static_cast<int64_t>(size / width));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    char* dst = static_cast<char*>(out->raw_data());
    const bool swap = !little_endian_ && width > 1;
    for (int64_t i = 0; i < n; ++i, dst += size) {
      if (size == 0) continue;
      std::memcpy(dst, strings[i].data(), size);
      if (swap) {
        for (size_t e = 0; e < size; e += width) std::reverse(dst + e, dst + e + width);
      }
      if (out_type_ == DT_BOOL) {  // any nonzero byte is true
        for (size_t e = 0; e < size; ++e) dst[e] = dst[e] != 0;
      }
    }
  }

 private:
  DataType out_type_ = DT_FLOAT;
  bool little_endian_ = true;
};

}  // namespace

void RegisterDecodeRawKernel(KernelRegistry* r) {
  r->Register(KernelDef("DecodeRaw", kDeviceTypeCpu), MakeKernel<DecodeRawOp>);
}

}  // namespace weft
