// ScalarSummary on the CPU: a serialized tensorflow.Summary with one
// simple_value per element, tagged by the element of `tags` at the same
// place (tags and values of one shape, as TensorFlow requires); the value
// is converted to float. The proto is written here by hand (its wire
// format: value = 1, and in each value tag = 1, simple_value = 2), which
// spares the kernels a dependency on the summary protos.
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

float ElementAsFloat(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DT_FLOAT: return t.data<float>()[i];
    case DT_DOUBLE: return static_cast<float>(t.data<double>()[i]);
    case DT_INT32: return static_cast<float>(t.data<int32_t>()[i]);
    case DT_UINT8: return t.data<uint8_t>()[i];
    case DT_INT16: return t.data<int16_t>()[i];
    case DT_INT8: return t.data<int8_t>()[i];
    case DT_INT64: return static_cast<float>(t.data<int64_t>()[i]);
    case DT_BFLOAT16: return BFloat16ToFloat(t.data<BFloat16>()[i]);
    case DT_UINT16: return t.data<uint16_t>()[i];
    case DT_HALF: return HalfToFloat(t.data<Half>()[i]);
    case DT_UINT32: return static_cast<float>(t.data<uint32_t>()[i]);
    default: return static_cast<float>(t.data<uint64_t>()[i]);
  }
}

void AppendVarint(uint64_t v, std::string* out) {
  for (; v >= 0x80; v >>= 7) out->push_back(static_cast<char>((v & 0x7f) | 0x80));
  out->push_back(static_cast<char>(v));
}

// One Summary.Value {tag, simple_value}, as field 1 of a Summary.
void AppendValue(const std::string& tag, float value, std::string* out) {
  std::string v;
  v.push_back(0x0a);  // tag: field 1, length-delimited
  AppendVarint(tag.size(), &v);
  v += tag;
  v.push_back(0x15);  // simple_value: field 2, fixed32 (little-endian)
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<char>(bits >> (8 * i)));
  out->push_back(0x0a);  // value: field 1, length-delimited
  AppendVarint(v.size(), out);
  *out += v;
}

class ScalarSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& tags = c->input(0);
    const Tensor& values = c->input(1);
    OP_REQUIRES(c, tags.shape() == values.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "tags and values are not the same shape: ", tags.shape().DebugString(),
                    " != ", values.shape().DebugString())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    std::string& summary = out->scalar<std::string>();
    for (int64_t i = 0; i < tags.NumElements(); ++i) {
      AppendValue(tags.data<std::string>()[i], ElementAsFloat(values, i), &summary);
    }
  }
};

}  // namespace

void RegisterSummaryKernels(KernelRegistry* r) {
  r->Register(KernelDef("ScalarSummary", kDeviceTypeCpu), MakeKernel<ScalarSummaryOp>);
}

}  // namespace weft
