#include "distributed/rpc/tensor_coding.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/rpc/grpc_coding.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "proto/worker.pb.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/core/tensor_shape.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

// Wire tags: (field << 3) | wire type.
constexpr uint32_t kVarint = 0, kLength = 2;
constexpr uint32_t Tag(uint32_t field, uint32_t type) { return field << 3 | type; }
// RecvTensorResponse.tensor = 1, is_dead = 2; TensorProto.dtype = 1,
// tensor_shape = 2, tensor_content = 4.
constexpr uint32_t kResponseTensor = Tag(1, kLength);
constexpr uint32_t kResponseIsDead = Tag(2, kVarint);
constexpr uint32_t kProtoDtype = Tag(1, kVarint);
constexpr uint32_t kProtoShape = Tag(2, kLength);
constexpr uint32_t kProtoContent = Tag(4, kLength);

// Plain memory whose bytes are the values (bool needs its bytes checked).
bool FastPath(DataType dtype) {
  return !DataTypeIsObject(dtype) && dtype != DT_BOOL && DataTypeSize(dtype) > 0;
}

void DropTensorRef(void* tensor) { delete static_cast<Tensor*>(tensor); }

// A ZeroCopyInputStream over a message's slices, in order.
class SliceStream final : public google::protobuf::io::ZeroCopyInputStream {
 public:
  explicit SliceStream(const std::vector<grpc::Slice>* slices) : slices_(slices) {}
  bool Next(const void** data, int* size) override {
    if (backed_up_ > 0) {
      const grpc::Slice& s = (*slices_)[index_ - 1];
      *data = s.begin() + (s.size() - backed_up_);
      *size = backed_up_;
      count_ += backed_up_;
      backed_up_ = 0;
      return true;
    }
    while (index_ < slices_->size() && (*slices_)[index_].size() == 0) ++index_;
    if (index_ >= slices_->size()) return false;
    const grpc::Slice& s = (*slices_)[index_++];
    *data = s.begin();
    *size = static_cast<int>(s.size());
    count_ += s.size();
    return true;
  }
  void BackUp(int count) override {
    backed_up_ = count;
    count_ -= count;
  }
  bool Skip(int count) override {
    const void* data;
    int size;
    while (count > 0) {
      if (!Next(&data, &size)) return false;
      if (size > count) {
        BackUp(size - count);
        return true;
      }
      count -= size;
    }
    return true;
  }
  int64_t ByteCount() const override { return count_; }

 private:
  const std::vector<grpc::Slice>* slices_;
  size_t index_ = 0;
  int backed_up_ = 0;
  int64_t count_ = 0;
};

// Copies the next `n` bytes of `in` to `dst`: with `pool` and at least
// kParallelCopyBytes, the message's pieces are listed first and then copied
// by the calling thread and the pool's together. False when `in` ends first.
bool ReadContent(CodedInputStream* in, char* dst, size_t n, ThreadPool* pool) {
  if (pool == nullptr || n < kParallelCopyBytes) {
    return in->ReadRaw(dst, static_cast<int>(n));
  }
  struct Piece {
    const char* src;
    size_t offset;  // in dst
    size_t size;
  };
  std::vector<Piece> pieces;
  for (size_t offset = 0; offset < n;) {
    const void* data;
    int size;
    if (!in->GetDirectBufferPointer(&data, &size)) return false;
    const size_t take = std::min(n - offset, static_cast<size_t>(size));
    pieces.push_back({static_cast<const char*>(data), offset, take});
    in->Skip(static_cast<int>(take));
    offset += take;
  }
  // Byte ranges, each copied from the pieces it overlaps.
  pool->ParallelFor(static_cast<int64_t>(n), /*cost_per_unit=*/1,
                    [&](int64_t begin, int64_t end) {
    auto it = std::upper_bound(
        pieces.begin(), pieces.end(), static_cast<size_t>(begin),
        [](size_t at, const Piece& p) { return at < p.offset; });
    for (--it; it != pieces.end() && it->offset < static_cast<size_t>(end); ++it) {
      const size_t from = std::max(it->offset, static_cast<size_t>(begin));
      const size_t to = std::min(it->offset + it->size, static_cast<size_t>(end));
      std::memcpy(dst + from, it->src + (from - it->offset), to - from);
    }
  });
  return true;
}

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("RecvTensorResponse: malformed ", what));
}

// The fast path; false in `*fast` when the message needs the full parser.
absl::Status DecodeFast(const std::vector<grpc::Slice>& slices,
                        Allocator* allocator, ThreadPool* copy_pool,
                        Tensor* tensor, bool* is_dead, bool* fast) {
  *fast = false;
  SliceStream stream(&slices);
  CodedInputStream in(&stream);
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  bool have_tensor = false;
  DataType dtype = DT_INVALID;
  tensorflow::TensorShapeProto shape_proto;
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    if (tag == kResponseIsDead) {
      uint64_t v;
      if (!in.ReadVarint64(&v)) return Malformed("is_dead");
      *is_dead = v != 0;
      continue;
    }
    if (tag != kResponseTensor || have_tensor) {
      if (tag == kResponseTensor) return absl::OkStatus();  // repeated: slow path
      // Other fields (send_start_micros, require_ack, ...): skipped.
      if (!google::protobuf::internal::WireFormatLite::SkipField(&in, tag)) {
        return Malformed("field");
      }
      continue;
    }
    have_tensor = true;
    uint32_t length;
    if (!in.ReadVarint32(&length)) return Malformed("tensor");
    const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(length));
    bool have_content = false;
    for (uint32_t t = in.ReadTag(); t != 0; t = in.ReadTag()) {
      if (t == kProtoDtype) {
        uint32_t v;
        if (!in.ReadVarint32(&v)) return Malformed("tensor.dtype");
        dtype = static_cast<DataType>(v);
      } else if (t == kProtoShape) {
        uint32_t n;
        std::string bytes;
        if (!in.ReadVarint32(&n) || !in.ReadString(&bytes, static_cast<int>(n)) ||
            !shape_proto.ParseFromString(bytes)) {
          return Malformed("tensor.tensor_shape");
        }
      } else if (t == kProtoContent && !have_content && FastPath(dtype)) {
        have_content = true;
        uint32_t n;
        if (!in.ReadVarint32(&n)) return Malformed("tensor.tensor_content");
        absl::StatusOr<TensorShape> shape = TensorShape::FromProto(shape_proto);
        if (!shape.ok()) return shape.status();
        absl::StatusOr<Tensor> t2 = Tensor::Allocate(allocator, dtype, *shape);
        if (!t2.ok()) return t2.status();
        if (n != t2->TotalBytes()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "RecvTensorResponse: tensor_content has ", n, " bytes but shape ",
              shape->DebugString(), " of ", DataTypeString(dtype), " needs ",
              t2->TotalBytes()));
        }
        if (n > 0 && !ReadContent(&in, static_cast<char*>(t2->raw_data()), n,
                                  copy_pool)) {
          return Malformed("tensor.tensor_content (truncated)");
        }
        *tensor = *std::move(t2);
      } else {
        return absl::OkStatus();  // typed fields, strings, ...: slow path
      }
    }
    if (!in.ConsumedEntireMessage()) return Malformed("tensor");
    in.PopLimit(limit);
    if (!have_content) return absl::OkStatus();  // empty or typed: slow path
  }
  if (!in.ConsumedEntireMessage()) return Malformed("message");
  *fast = have_tensor || *is_dead;
  return absl::OkStatus();
}

}  // namespace

absl::Status EncodeRecvTensorResponse(const Tensor& tensor, bool is_dead,
                                      grpc::ByteBuffer* out) {
  if (is_dead || !tensor.IsInitialized() || !FastPath(tensor.dtype())) {
    tensorflow::RecvTensorResponse response;
    response.set_is_dead(is_dead);
    if (!is_dead) TensorToProto(tensor, response.mutable_tensor());
    return SerializeToByteBuffer(response, out);
  }
  tensorflow::TensorShapeProto shape;
  tensor.shape().ToProto(&shape);
  const size_t shape_bytes = shape.ByteSizeLong();
  const size_t content = tensor.TotalBytes();
  const size_t proto_bytes =
      CodedOutputStream::VarintSize32(kProtoDtype) +
      CodedOutputStream::VarintSize32(static_cast<uint32_t>(tensor.dtype())) +
      CodedOutputStream::VarintSize32(kProtoShape) +
      CodedOutputStream::VarintSize64(shape_bytes) + shape_bytes +
      CodedOutputStream::VarintSize32(kProtoContent) +
      CodedOutputStream::VarintSize64(content) + content;
  if (proto_bytes + 16 > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InternalError(absl::StrCat(
        "a tensor of ", content, " bytes is over the 2 GiB a gRPC message holds"));
  }
  const bool alias = content > kAliasBytes;
  const size_t header_bytes = CodedOutputStream::VarintSize32(kResponseTensor) +
                              CodedOutputStream::VarintSize64(proto_bytes) +
                              (proto_bytes - content);
  grpc::Slice header(header_bytes + (alias ? 0 : content));
  uint8_t* p = const_cast<uint8_t*>(header.begin());
  p = CodedOutputStream::WriteVarint32ToArray(kResponseTensor, p);
  p = CodedOutputStream::WriteVarint64ToArray(proto_bytes, p);
  p = CodedOutputStream::WriteVarint32ToArray(kProtoDtype, p);
  p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(tensor.dtype()), p);
  p = CodedOutputStream::WriteVarint32ToArray(kProtoShape, p);
  p = CodedOutputStream::WriteVarint64ToArray(shape_bytes, p);
  p = shape.SerializeWithCachedSizesToArray(p);
  p = CodedOutputStream::WriteVarint32ToArray(kProtoContent, p);
  p = CodedOutputStream::WriteVarint64ToArray(content, p);
  if (!alias) {
    if (content > 0) std::memcpy(p, tensor.raw_data(), content);
    grpc::ByteBuffer buffer(&header, 1);
    out->Swap(&buffer);
    return absl::OkStatus();
  }
  // The slice keeps a reference to the tensor until gRPC has sent it.
  grpc::Slice body(tensor.raw_data(), content, &DropTensorRef, new Tensor(tensor));
  grpc::Slice slices[2] = {std::move(header), std::move(body)};
  grpc::ByteBuffer buffer(slices, 2);
  out->Swap(&buffer);
  return absl::OkStatus();
}

absl::Status DecodeRecvTensorResponse(const grpc::ByteBuffer& in,
                                      Allocator* allocator,
                                      ThreadPool* copy_pool, Tensor* tensor,
                                      bool* is_dead) {
  if (allocator == nullptr) allocator = CpuAllocator();
  std::vector<grpc::Slice> slices;
  if (!in.Dump(&slices).ok()) return Malformed("message (unreadable)");
  *is_dead = false;
  bool fast = false;
  absl::Status s =
      DecodeFast(slices, allocator, copy_pool, tensor, is_dead, &fast);
  if (!s.ok() || fast) return s;
  tensorflow::RecvTensorResponse response;
  s = ParseFromByteBuffer(in, &response, "RecvTensorResponse");
  if (!s.ok()) return s;
  *is_dead = response.is_dead();
  if (*is_dead) return absl::OkStatus();
  absl::StatusOr<Tensor> value = TensorFromProto(response.tensor(), allocator);
  if (!value.ok()) return value.status();
  *tensor = *std::move(value);
  return absl::OkStatus();
}

}  // namespace weft
