#include "runtime/core/tensor.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/escaping.h"
#include "runtime/core/device_memory.h"

namespace weft {
namespace {

size_t ElementBytes(DataType dtype) {
  switch (dtype) {
    case DT_STRING:
      return sizeof(std::string);
    case DT_RESOURCE:
      return sizeof(ResourceHandle);
    case DT_VARIANT:
      return sizeof(Variant);
    default:
      return DataTypeSize(dtype);
  }
}

// Header size rounded up so the elements start aligned.
constexpr size_t kHeaderBytes =
    (sizeof(TensorBuffer) + kTensorAlignment - 1) / kTensorAlignment *
    kTensorAlignment;

}  // namespace

// Device memory (runtime/core/device_memory.h): the header, which the host reads
// and writes, comes from host memory and only the elements from the device.
// Such a buffer is recognised by its elements not following its header.
TensorBuffer* TensorBuffer::New(Allocator* allocator, DataType dtype,
                                int64_t num_elements) {
  const size_t bytes = ElementBytes(dtype) * num_elements;
  // The host allocator, the hot path, is told apart by one comparison.
  DeviceMemoryAllocator* device = nullptr;
  if (allocator != CpuAllocator()) {
    device = AsDeviceMemory(allocator);
    if (device != nullptr && DataTypeIsObject(dtype)) {
      allocator = CpuAllocator();  // C++ objects live on the host
      device = nullptr;
    }
  }
  void* data = nullptr;
  if (device != nullptr) {
    data = device->Allocate(kTensorAlignment, bytes);
    if (data == nullptr) return nullptr;
  }
  const size_t block = device != nullptr ? kHeaderBytes : kHeaderBytes + bytes;
  void* mem = (device != nullptr ? CpuAllocator() : allocator)
                  ->Allocate(kTensorAlignment, block);
  if (mem == nullptr) {
    if (device != nullptr) device->Deallocate(data, bytes);
    return nullptr;
  }
  TensorBuffer* buf = new (mem) TensorBuffer;
  buf->dtype_ = dtype;
  buf->num_elements_ = num_elements;
  buf->bytes_ = bytes;
  buf->block_bytes_ = block;
  buf->allocator_ = allocator;
  buf->data_ = device != nullptr ? static_cast<char*>(data)
                                 : static_cast<char*>(mem) + kHeaderBytes;
  if (dtype == DT_STRING) {
    auto* p = reinterpret_cast<std::string*>(buf->data_);
    for (int64_t i = 0; i < num_elements; ++i) new (p + i) std::string;
  } else if (dtype == DT_RESOURCE) {
    auto* p = reinterpret_cast<ResourceHandle*>(buf->data_);
    for (int64_t i = 0; i < num_elements; ++i) new (p + i) ResourceHandle;
  } else if (dtype == DT_VARIANT) {
    auto* p = reinterpret_cast<Variant*>(buf->data_);
    for (int64_t i = 0; i < num_elements; ++i) new (p + i) Variant;
  }
  return buf;
}

void TensorBuffer::Unref() {
  // The sole owner frees without an atomic read-modify-write: nobody else
  // can take a reference to a buffer only it holds.
  if (refs_.load(std::memory_order_acquire) != 1 &&
      refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return;
  }
  if (dtype_ == DT_STRING) {
    auto* p = reinterpret_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) p[i].~basic_string();
  } else if (dtype_ == DT_RESOURCE) {
    auto* p = reinterpret_cast<ResourceHandle*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) p[i].~ResourceHandle();
  } else if (dtype_ == DT_VARIANT) {
    auto* p = reinterpret_cast<Variant*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) p[i].~Variant();
  }
  Allocator* allocator = allocator_;
  size_t block = block_bytes_;
  if (data_ != reinterpret_cast<char*>(this) + kHeaderBytes) {
    allocator->Deallocate(data_, bytes_);  // device elements, host header
    allocator = CpuAllocator();
  }
  this->~TensorBuffer();
  allocator->Deallocate(this, block);
}

Tensor::Tensor(DataType dtype, const TensorShape& shape)
    : dtype_(dtype), shape_(shape) {
  if (NumElements() > 0 && DataTypeIsSupported(dtype)) {
    buffer_ = TensorBuffer::New(CpuAllocator(), dtype, NumElements());
    if (buffer_ == nullptr) {
      dtype_ = DT_INVALID;
      return;
    }
    data_ = buffer_->data();
  }
}

absl::StatusOr<Tensor> Tensor::Allocate(Allocator* allocator, DataType dtype,
                                        const TensorShape& shape) {
  if (!DataTypeIsSupported(dtype)) {
    return absl::UnimplementedError(
        absl::StrCat("tensors of dtype ", DataTypeString(dtype),
                     " are not supported"));
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  if (shape.num_elements() > 0) {
    const int64_t max_elements =
        static_cast<int64_t>((size_t{1} << 46) / ElementBytes(dtype));
    if (shape.num_elements() > max_elements) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "tensor of shape ", shape.DebugString(), " and dtype ",
          DataTypeString(dtype), " is too large to allocate"));
    }
    t.buffer_ = TensorBuffer::New(allocator, dtype, shape.num_elements());
    if (t.buffer_ == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "out of memory allocating tensor of shape ", shape.DebugString(),
          " and dtype ", DataTypeString(dtype), " (",
          ElementBytes(dtype) * shape.num_elements(), " bytes) on ",
          allocator->Name()));
    }
    t.data_ = t.buffer_->data();
  }
  return t;
}

Tensor Tensor::Slice(int64_t start, int64_t limit) const {
  WEFT_DCHECK(dims() >= 1);
  WEFT_DCHECK(0 <= start && start <= limit && limit <= dim_size(0));
  Tensor t(*this);
  const int64_t row_elements =
      dims() == 0 || dim_size(0) == 0 ? 0 : NumElements() / dim_size(0);
  t.shape_.set_dim(0, limit - start);
  if (t.data_ != nullptr) {
    t.data_ += start * row_elements * ElementBytes(dtype_);
  }
  return t;
}

Tensor Tensor::Reshaped(const TensorShape& shape) const {
  WEFT_DCHECK(shape.num_elements() == NumElements());
  Tensor t(*this);
  t.shape_ = shape;
  return t;
}

Tensor Tensor::DeepCopy() const {
  if (!InHostMemory(*this)) {
    // A host copy (runtime/core/device_memory.h); uninitialized if it failed.
    absl::StatusOr<Tensor> host = CopyTensorToAllocator(*this, CpuAllocator());
    return host.ok() ? *std::move(host) : Tensor();
  }
  Tensor copy(dtype_, shape_);
  if (!copy.IsInitialized() || NumElements() == 0) return copy;
  if (dtype_ == DT_STRING) {
    std::copy_n(data<std::string>(), NumElements(), copy.data<std::string>());
  } else if (dtype_ == DT_RESOURCE) {
    std::copy_n(data<ResourceHandle>(), NumElements(),
                copy.data<ResourceHandle>());
  } else if (dtype_ == DT_VARIANT) {
    std::copy_n(data<Variant>(), NumElements(), copy.data<Variant>());
  } else {
    std::memcpy(copy.data_, data_, TotalBytes());
  }
  return copy;
}

namespace {

template <typename T>
std::string ElementToString(const T& v) {
  return absl::StrCat(v);
}
std::string ElementToString(const std::string& v) {
  return absl::StrCat("\"", absl::CEscape(v), "\"");
}
std::string ElementToString(const ResourceHandle& v) {
  return absl::StrCat("<resource ", v.container, "/", v.name, ">");
}
std::string ElementToString(const Variant& v) {
  return v.value == nullptr ? "<empty variant>" : v.value->DebugString();
}
std::string ElementToString(Half v) { return absl::StrCat(HalfToFloat(v)); }
std::string ElementToString(BFloat16 v) {
  return absl::StrCat(BFloat16ToFloat(v));
}
template <typename R>
std::string ElementToString(const std::complex<R>& v) {  // NumPy's (1+2j)
  return absl::StrCat("(", v.real(), std::signbit(v.imag()) ? "" : "+", v.imag(),
                      "j)");
}
std::string ElementToString(bool v) { return v ? "true" : "false"; }
std::string ElementToString(int8_t v) { return absl::StrCat(int{v}); }
std::string ElementToString(uint8_t v) { return absl::StrCat(int{v}); }

}  // namespace

std::string Tensor::ElementString(int64_t i) const {
  std::string out = "?";
  if (!InHostMemory(*this)) return out;
  if (dtype_ == DT_VARIANT) return ElementToString(data<Variant>()[i]);
  WEFT_SWITCH_ALL_TYPES(dtype_, out = ElementToString(data<T>()[i]), break);
  return out;
}

void CopyFromExternalBytes(const void* src, Tensor* t) {
  const size_t n = t->TotalBytes();
  if (n == 0) return;
  std::memcpy(t->raw_data(), src, n);
  if (t->dtype() == DT_BOOL) {
    auto* bytes = static_cast<unsigned char*>(t->raw_data());
    for (size_t i = 0; i < n; ++i) bytes[i] = bytes[i] != 0;
  }
}

std::string Tensor::DebugString(int max_entries) const {
  std::string out = absl::StrCat("Tensor<type: ", DataTypeString(dtype_),
                                 " shape: ", shape_.DebugString());
  if (!IsInitialized()) return out + " uninitialized>";
  if (!InHostMemory(*this)) return out + " in device memory>";
  out += " values:";
  const int64_t n = NumElements();
  for (int64_t i = 0; i < n && i < max_entries; ++i) {
    absl::StrAppend(&out, " ", ElementString(i));
  }
  if (n > max_entries) out += " ...";
  return out + ">";
}

}  // namespace weft
