#include "runtime/core/tensor_proto.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "proto/resource_handle.pb.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using tensorflow::TensorProto;

// Fills `out[0..n)` from `values`, repeating the last value (TensorFlow's
// splat rule) or zero-filling when `values` is empty.
template <typename T, typename Repeated, typename Convert>
absl::Status FillFromTyped(const Repeated& values, int64_t n, T* out,
                           Convert convert, const char* field) {
  // An empty shape ignores its values, as TensorFlow does (it writes one
  // for tf.zeros([0, 3], tf.string)); otherwise extra values are an error.
  if (n == 0) return absl::OkStatus();
  if (static_cast<int64_t>(values.size()) > n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorProto field ", field, " has ", values.size(),
        " values but the shape holds ", n));
  }
  if (values.empty()) {
    for (int64_t i = 0; i < n; ++i) out[i] = T{};
    return absl::OkStatus();
  }
  int64_t i = 0;
  for (; i < values.size(); ++i) out[i] = convert(values.Get(i));
  const T last = out[i - 1];
  for (; i < n; ++i) out[i] = last;
  return absl::OkStatus();
}

template <typename T>
T Same(T v) {
  return v;
}

// complex64/complex128 values come as (real, imag) pairs of scalars in
// scomplex_val/dcomplex_val; the splat and zero-fill rules are as above,
// per pair.
template <typename C, typename Repeated>
absl::Status FillComplex(const Repeated& values, int64_t n, C* out,
                         const char* field) {
  if (values.size() % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorProto field ", field, " has ", values.size(),
        " values, which is not a whole number of (real, imag) pairs"));
  }
  if (n == 0) return absl::OkStatus();
  const int64_t pairs = values.size() / 2;
  if (pairs > n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorProto field ", field, " has ", pairs,
        " complex values but the shape holds ", n));
  }
  int64_t i = 0;
  for (; i < pairs; ++i) out[i] = C(values.Get(2 * i), values.Get(2 * i + 1));
  const C last = pairs == 0 ? C() : out[pairs - 1];
  for (; i < n; ++i) out[i] = last;
  return absl::OkStatus();
}

struct VariantCoders {
  absl::Mutex mu;
  absl::flat_hash_map<std::string, VariantCoder> by_type ABSL_GUARDED_BY(mu);
};

VariantCoders& Coders() {
  static VariantCoders* const coders = new VariantCoders;
  return *coders;
}

VariantCoder FindCoder(const std::string& type_name) {
  VariantCoders& c = Coders();
  absl::MutexLock lock(&c.mu);
  auto it = c.by_type.find(type_name);
  return it == c.by_type.end() ? VariantCoder{} : it->second;
}

absl::Status DecodeVariant(const tensorflow::VariantTensorDataProto& proto,
                           Variant* out) {
  if (proto.type_name().empty() && proto.metadata().empty() &&
      proto.tensors().empty()) {
    *out = Variant();
    return absl::OkStatus();
  }
  const VariantCoder coder = FindCoder(proto.type_name());
  if (coder.decode == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "variant values of type '", absl::CEscape(proto.type_name()),
        "' cannot be decoded here (Weft decodes tensorflow::TensorList)"));
  }
  // A variant may hold tensors of variants (a list of lists): the sender
  // chooses the nesting, so it is bounded here, where the recursion is.
  thread_local int depth = 0;
  if (depth >= kMaxVariantNesting) {
    return absl::InvalidArgumentError(absl::StrCat(
        "variant values nest more than ", kMaxVariantNesting, " deep"));
  }
  ++depth;
  absl::StatusOr<Variant> value = coder.decode(proto);
  --depth;
  if (!value.ok()) return value.status();
  *out = *std::move(value);
  return absl::OkStatus();
}

// Decodes DT_STRING tensor_content: varint lengths, then the bytes.
absl::Status DecodeStringContent(const std::string& content, int64_t n,
                                 std::string* out) {
  const char* p = content.data();
  const char* end = p + content.size();
  std::vector<uint64_t> lengths(n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    int shift = 0;
    while (true) {
      if (p >= end || shift > 28) {
        return absl::InvalidArgumentError(
            "malformed string tensor_content (bad length prefix)");
      }
      const uint8_t byte = static_cast<uint8_t>(*p++);
      len |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) == 0) break;
    }
    lengths[i] = len;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<uint64_t>(end - p) < lengths[i]) {
      return absl::InvalidArgumentError(
          "malformed string tensor_content (truncated bytes)");
    }
    out[i].assign(p, lengths[i]);
    p += lengths[i];
  }
  return absl::OkStatus();
}

absl::Status DecodeTyped(const TensorProto& proto, Tensor& t) {
  const int64_t n = t.NumElements();
  switch (t.dtype()) {
    case tensorflow::DT_FLOAT:
      return FillFromTyped(proto.float_val(), n, t.data<float>(), Same<float>,
                           "float_val");
    case tensorflow::DT_DOUBLE:
      return FillFromTyped(proto.double_val(), n, t.data<double>(),
                           Same<double>, "double_val");
    case tensorflow::DT_INT32:
      return FillFromTyped(proto.int_val(), n, t.data<int32_t>(),
                           Same<int32_t>, "int_val");
    case tensorflow::DT_INT16:
      return FillFromTyped(
          proto.int_val(), n, t.data<int16_t>(),
          [](int32_t v) { return static_cast<int16_t>(v); }, "int_val");
    case tensorflow::DT_INT8:
      return FillFromTyped(
          proto.int_val(), n, t.data<int8_t>(),
          [](int32_t v) { return static_cast<int8_t>(v); }, "int_val");
    case tensorflow::DT_UINT8:
      return FillFromTyped(
          proto.int_val(), n, t.data<uint8_t>(),
          [](int32_t v) { return static_cast<uint8_t>(v); }, "int_val");
    case tensorflow::DT_UINT16:
      return FillFromTyped(
          proto.int_val(), n, t.data<uint16_t>(),
          [](int32_t v) { return static_cast<uint16_t>(v); }, "int_val");
    case tensorflow::DT_INT64:
      return FillFromTyped(proto.int64_val(), n, t.data<int64_t>(),
                           Same<int64_t>, "int64_val");
    case tensorflow::DT_UINT32:
      return FillFromTyped(proto.uint32_val(), n, t.data<uint32_t>(),
                           Same<uint32_t>, "uint32_val");
    case tensorflow::DT_UINT64:
      return FillFromTyped(proto.uint64_val(), n, t.data<uint64_t>(),
                           Same<uint64_t>, "uint64_val");
    case tensorflow::DT_BOOL:
      return FillFromTyped(proto.bool_val(), n, t.data<bool>(), Same<bool>,
                           "bool_val");
    case tensorflow::DT_HALF:
      return FillFromTyped(
          proto.half_val(), n, t.data<Half>(),
          [](int32_t v) { return Half{static_cast<uint16_t>(v)}; }, "half_val");
    case tensorflow::DT_BFLOAT16:
      return FillFromTyped(
          proto.half_val(), n, t.data<BFloat16>(),
          [](int32_t v) { return BFloat16{static_cast<uint16_t>(v)}; },
          "half_val");
    case tensorflow::DT_COMPLEX64:
      return FillComplex(proto.scomplex_val(), n, t.data<Complex64>(),
                         "scomplex_val");
    case tensorflow::DT_COMPLEX128:
      return FillComplex(proto.dcomplex_val(), n, t.data<Complex128>(),
                         "dcomplex_val");
    case tensorflow::DT_STRING:
      return FillFromTyped(
          proto.string_val(), n, t.data<std::string>(),
          [](const std::string& v) { return v; }, "string_val");
    case tensorflow::DT_RESOURCE:
      return FillFromTyped(
          proto.resource_handle_val(), n, t.data<ResourceHandle>(),
          [](const tensorflow::ResourceHandleProto& h) {
            ResourceHandle r;
            r.device = h.device();
            r.container = h.container();
            r.name = h.name();
            if (h.dtypes_and_shapes_size() > 0) {
              r.dtype = h.dtypes_and_shapes(0).dtype();
            }
            return r;
          },
          "resource_handle_val");
    case tensorflow::DT_VARIANT: {
      if (proto.variant_val_size() != 0 && proto.variant_val_size() != n) {
        return absl::InvalidArgumentError(absl::StrCat(
            "TensorProto field variant_val has ", proto.variant_val_size(),
            " values but the shape holds ", n));
      }
      Variant* out = t.data<Variant>();
      for (int64_t i = 0; i < proto.variant_val_size(); ++i) {
        WEFT_RETURN_IF_ERROR(DecodeVariant(proto.variant_val(i), &out[i]));
      }
      return absl::OkStatus();
    }
    default:
      return absl::UnimplementedError(absl::StrCat(
          "TensorProto of dtype ", DataTypeString(t.dtype()),
          " is not supported"));
  }
}

template <typename T, typename Add>
void EncodeTyped(const Tensor& t, Add add) {
  for (const T& v : t.flat<T>()) add(v);
}

}  // namespace

absl::StatusOr<Tensor> TensorFromProto(const TensorProto& proto,
                                       Allocator* allocator) {
  const DataType dtype = proto.dtype();
  if (dtype == DT_INVALID || !DataTypeIsSupported(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorProto has unsupported dtype ", DataTypeString(dtype)));
  }
  WEFT_ASSIGN_OR_RETURN(TensorShape shape,
                        TensorShape::FromProto(proto.tensor_shape()));
  WEFT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(allocator, dtype, shape));
  const int64_t n = t.NumElements();
  if (!proto.tensor_content().empty()) {
    if (dtype == DT_STRING) {
      WEFT_RETURN_IF_ERROR(
          DecodeStringContent(proto.tensor_content(), n, t.data<std::string>()));
      return t;
    }
    if (dtype == DT_RESOURCE) {
      return absl::UnimplementedError(
          "resource handles in tensor_content are not supported");
    }
    if (dtype == DT_VARIANT) {  // TensorFlow's form: sizes, then protos
      std::vector<std::string> parts(n);
      WEFT_RETURN_IF_ERROR(
          DecodeStringContent(proto.tensor_content(), n, parts.data()));
      for (int64_t i = 0; i < n; ++i) {
        tensorflow::VariantTensorDataProto part;
        if (!part.ParseFromString(parts[i])) {
          return absl::InvalidArgumentError(absl::StrCat(
              "variant tensor_content element ", i,
              " is not a VariantTensorDataProto"));
        }
        WEFT_RETURN_IF_ERROR(DecodeVariant(part, &t.data<Variant>()[i]));
      }
      return t;
    }
    if (proto.tensor_content().size() != t.TotalBytes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorProto tensor_content has ", proto.tensor_content().size(),
          " bytes but shape ", shape.DebugString(), " of ",
          DataTypeString(dtype), " needs ", t.TotalBytes()));
    }
    CopyFromExternalBytes(proto.tensor_content().data(), &t);
    return t;
  }
  WEFT_RETURN_IF_ERROR(DecodeTyped(proto, t));
  return t;
}

void TensorToProto(const Tensor& t, TensorProto* proto,
                   ProtoEncoding encoding) {
  proto->Clear();
  proto->set_dtype(t.dtype());
  t.shape().ToProto(proto->mutable_tensor_shape());
  if (!t.IsInitialized() || t.NumElements() == 0) return;
  const DataType dtype = t.dtype();
  if (encoding == ProtoEncoding::kTensorContent && !DataTypeIsObject(dtype)) {
    proto->set_tensor_content(t.raw_data(), t.TotalBytes());
    return;
  }
  switch (dtype) {
    case tensorflow::DT_FLOAT:
      EncodeTyped<float>(t, [&](float v) { proto->add_float_val(v); });
      break;
    case tensorflow::DT_DOUBLE:
      EncodeTyped<double>(t, [&](double v) { proto->add_double_val(v); });
      break;
    case tensorflow::DT_INT32:
      EncodeTyped<int32_t>(t, [&](int32_t v) { proto->add_int_val(v); });
      break;
    case tensorflow::DT_INT16:
      EncodeTyped<int16_t>(t, [&](int16_t v) { proto->add_int_val(v); });
      break;
    case tensorflow::DT_INT8:
      EncodeTyped<int8_t>(t, [&](int8_t v) { proto->add_int_val(v); });
      break;
    case tensorflow::DT_UINT8:
      EncodeTyped<uint8_t>(t, [&](uint8_t v) { proto->add_int_val(v); });
      break;
    case tensorflow::DT_UINT16:
      EncodeTyped<uint16_t>(t, [&](uint16_t v) { proto->add_int_val(v); });
      break;
    case tensorflow::DT_INT64:
      EncodeTyped<int64_t>(t, [&](int64_t v) { proto->add_int64_val(v); });
      break;
    case tensorflow::DT_UINT32:
      EncodeTyped<uint32_t>(t, [&](uint32_t v) { proto->add_uint32_val(v); });
      break;
    case tensorflow::DT_UINT64:
      EncodeTyped<uint64_t>(t, [&](uint64_t v) { proto->add_uint64_val(v); });
      break;
    case tensorflow::DT_BOOL:
      EncodeTyped<bool>(t, [&](bool v) { proto->add_bool_val(v); });
      break;
    case tensorflow::DT_HALF:
      EncodeTyped<Half>(t, [&](Half v) { proto->add_half_val(v.bits); });
      break;
    case tensorflow::DT_BFLOAT16:
      EncodeTyped<BFloat16>(t,
                            [&](BFloat16 v) { proto->add_half_val(v.bits); });
      break;
    case tensorflow::DT_COMPLEX64:
      EncodeTyped<Complex64>(t, [&](Complex64 v) {
        proto->add_scomplex_val(v.real());
        proto->add_scomplex_val(v.imag());
      });
      break;
    case tensorflow::DT_COMPLEX128:
      EncodeTyped<Complex128>(t, [&](Complex128 v) {
        proto->add_dcomplex_val(v.real());
        proto->add_dcomplex_val(v.imag());
      });
      break;
    case tensorflow::DT_STRING:
      EncodeTyped<std::string>(
          t, [&](const std::string& v) { proto->add_string_val(v); });
      break;
    case tensorflow::DT_RESOURCE:
      EncodeTyped<ResourceHandle>(t, [&](const ResourceHandle& v) {
        auto* h = proto->add_resource_handle_val();
        h->set_device(v.device);
        h->set_container(v.container);
        h->set_name(v.name);
      });
      break;
    case tensorflow::DT_VARIANT:
      EncodeTyped<Variant>(t, [&](const Variant& v) {
        tensorflow::VariantTensorDataProto* out = proto->add_variant_val();
        if (v.value == nullptr) return;
        const VariantCoder coder = FindCoder(v.value->TypeName());
        out->set_type_name(v.value->TypeName());
        if (coder.encode != nullptr) coder.encode(*v.value, out);
      });
      break;
    default:
      break;
  }
}

void RegisterVariantCoder(const std::string& type_name, VariantCoder coder) {
  VariantCoders& c = Coders();
  absl::MutexLock lock(&c.mu);
  c.by_type[type_name] = coder;
}

}  // namespace weft
