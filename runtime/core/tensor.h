// Tensor: a typed, shaped, reference-counted view of a memory buffer.
//
//   Tensor t(DT_FLOAT, TensorShape({2, 3}));
//   absl::Span<float> v = t.flat<float>();      // 6 floats, row-major
//   Tensor row = t.Slice(1, 2);                 // shares t's buffer
//   Tensor copy = t;                            // shares too (cheap)
//
// Copies and slices alias the same buffer; DeepCopy() makes an independent
// one. A buffer is freed when its last Tensor goes away. Buffers are aligned
// to kTensorAlignment so Eigen can vectorise over them.
//
// Thread safety: a Tensor object is a value; distinct Tensor objects may be
// used from different threads even when they share a buffer. Writing the
// elements while another thread reads them is the caller's race.
#ifndef WEFT_RUNTIME_CORE_TENSOR_H_
#define WEFT_RUNTIME_CORE_TENSOR_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/core/allocator.h"
#include "runtime/core/dcheck.h"
#include "runtime/core/tensor_shape.h"
#include "runtime/core/types.h"

namespace weft {

// The shared storage behind tensors: a header and the elements in one block.
class TensorBuffer {
 public:
  // Returns nullptr if the allocator is out of memory. Elements of object
  // dtypes (string, resource) are default-constructed; others are not zeroed.
  static TensorBuffer* New(Allocator* allocator, DataType dtype,
                           int64_t num_elements);

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref();
  bool RefCountIsOne() const {
    return refs_.load(std::memory_order_acquire) == 1;
  }
  char* data() { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  TensorBuffer() = default;
  ~TensorBuffer() = default;

  std::atomic<int32_t> refs_{1};
  DataType dtype_ = DT_INVALID;
  int64_t num_elements_ = 0;
  size_t bytes_ = 0;
  size_t block_bytes_ = 0;
  Allocator* allocator_ = nullptr;
  char* data_ = nullptr;
};

class Tensor {
 public:
  // An empty tensor: dtype DT_INVALID, not initialized.
  Tensor() = default;
  // Allocates from CpuAllocator(). For shapes the program controls; the
  // result is uninitialized (IsInitialized() false) if memory runs out.
  Tensor(DataType dtype, const TensorShape& shape);
  // Allocates, reporting RESOURCE_EXHAUSTED or an unsupported dtype.
  static absl::StatusOr<Tensor> Allocate(Allocator* allocator, DataType dtype,
                                         const TensorShape& shape);
  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t(DataTypeToEnum<T>::value, TensorShape());
    t.scalar<T>() = std::move(value);
    return t;
  }

  Tensor(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(const Tensor& other);
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor();

  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int i) const { return shape_.dim_size(i); }
  int64_t NumElements() const { return shape_.num_elements(); }
  // Bytes of element storage (plain-memory dtypes).
  size_t TotalBytes() const { return NumElements() * DataTypeSize(dtype_); }
  bool IsInitialized() const {
    return dtype_ != DT_INVALID && (buffer_ != nullptr || NumElements() == 0);
  }

  // T must be the dtype's C++ type (DataTypeToEnum<T>), or an unsigned
  // integer of the element's size for kernels that move plain-memory
  // elements without reading them (VisitStorage, ops/cpu/array_util.h);
  // checked under WEFT_DEBUG_CHECKS (runtime/core/dcheck.h).
  template <typename T>
  T* data() const {
    WEFT_DCHECK(data_ == nullptr || ReadableAs<T>(dtype_));
    return reinterpret_cast<T*>(data_);
  }
  void* raw_data() const { return data_; }
  template <typename T>
  absl::Span<T> flat() const {
    return absl::Span<T>(data<T>(), NumElements());
  }
  // The first element (of a scalar, or of a tensor holding at least one).
  template <typename T>
  T& scalar() const {
    WEFT_DCHECK(NumElements() >= 1);
    return *data<T>();
  }

  // Rows [start, limit) of dimension 0, sharing this buffer; requires
  // dims() >= 1 and 0 <= start <= limit <= dim_size(0) (checked under
  // WEFT_DEBUG_CHECKS, as Reshaped's count is).
  Tensor Slice(int64_t start, int64_t limit) const;
  // The same elements under another shape with equal element count.
  Tensor Reshaped(const TensorShape& shape) const;
  Tensor DeepCopy() const;

  bool SharesBufferWith(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }
  // True if no other Tensor holds this buffer: a kernel may then write into
  // it in place (output forwarding).
  bool BufferIsUnique() const {
    return buffer_ != nullptr && buffer_->RefCountIsOne();
  }

  // "Tensor<type: float shape: [2,3] values: 1 2 3 ...>"
  std::string DebugString(int max_entries = 6) const;
  // Element `i` as text (numbers as C++ prints them, strings quoted).
  std::string ElementString(int64_t i) const;

 private:
  template <typename T>
  static bool ReadableAs(DataType dtype) {
    if (dtype == DataTypeToEnum<T>::value) return true;
    if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T> &&
                  !std::is_same_v<T, bool>) {
      return !DataTypeIsObject(dtype) && DataTypeSize(dtype) == sizeof(T);
    }
    return false;
  }

  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  TensorBuffer* buffer_ = nullptr;
  char* data_ = nullptr;
};

// Copies t->TotalBytes() bytes that came from outside (a file, a peer's
// tensor_content) into the host tensor `t` of a plain-memory dtype. A bool
// byte other than 0 or 1 is read as true, as numpy and TensorFlow read it:
// copied as it is, it would not be a valid C++ bool, and reading it anywhere
// would be undefined behaviour.
void CopyFromExternalBytes(const void* src, Tensor* t);

// Copies and moves are inline: the executor moves tensors between nodes
// several times per node, and graphs of scalar ops are dominated by it.
inline Tensor::Tensor(const Tensor& other)
    : dtype_(other.dtype_),
      shape_(other.shape_),
      buffer_(other.buffer_),
      data_(other.data_) {
  if (buffer_ != nullptr) buffer_->Ref();
}

inline Tensor::Tensor(Tensor&& other) noexcept
    : dtype_(other.dtype_),
      shape_(std::move(other.shape_)),
      buffer_(other.buffer_),
      data_(other.data_) {
  other.buffer_ = nullptr;
  other.data_ = nullptr;
  other.dtype_ = DT_INVALID;
}

inline Tensor& Tensor::operator=(const Tensor& other) {
  if (this == &other) return *this;
  if (other.buffer_ != nullptr) other.buffer_->Ref();
  if (buffer_ != nullptr) buffer_->Unref();
  dtype_ = other.dtype_;
  shape_ = other.shape_;
  buffer_ = other.buffer_;
  data_ = other.data_;
  return *this;
}

inline Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this == &other) return *this;
  if (buffer_ != nullptr) buffer_->Unref();
  dtype_ = other.dtype_;
  shape_ = std::move(other.shape_);
  buffer_ = other.buffer_;
  data_ = other.data_;
  other.buffer_ = nullptr;
  other.data_ = nullptr;
  other.dtype_ = DT_INVALID;
  return *this;
}

inline Tensor::~Tensor() {
  if (buffer_ != nullptr) buffer_->Unref();
}

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_TENSOR_H_
