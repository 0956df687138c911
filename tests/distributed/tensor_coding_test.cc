// RecvTensorResponse coding: what the encoder writes parses as the proto
// says, the decoder reads what a proto (TensorFlow's sender) writes, over
// any split into slices, and malformed bytes are errors, not crashes.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "distributed/rpc/grpc_coding.h"
#include "distributed/rpc/tensor_coding.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/worker.pb.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

std::string Flatten(const grpc::ByteBuffer& b) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(b.Dump(&slices).ok());
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

// `bytes` as a buffer of slices cut at every `cut` bytes.
grpc::ByteBuffer Split(const std::string& bytes, size_t cut) {
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i < bytes.size(); i += cut) {
    slices.emplace_back(bytes.data() + i, std::min(cut, bytes.size() - i));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

Tensor Floats(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n, 1}));
  for (int64_t i = 0; i < n; ++i) t.flat<float>()[i] = 0.5f * i;
  return t;
}

TEST(TensorCodingTest, RoundTripsSmallAndAliasedLargeTensors) {
  for (int64_t n : {0, 3, 256, 100000}) {
    Tensor t = Floats(n);
    grpc::ByteBuffer buffer;
    ASSERT_TRUE(EncodeRecvTensorResponse(t, false, &buffer).ok());
    // It is a RecvTensorResponse for protobuf too.
    tensorflow::RecvTensorResponse proto;
    ASSERT_TRUE(proto.ParseFromString(Flatten(buffer))) << n;
    Tensor via_proto = TensorFromProto(proto.tensor()).value();
    ASSERT_EQ(via_proto.NumElements(), n);
    for (size_t cut : {size_t{1}, size_t{7}, size_t{1} << 20}) {
      Tensor got;
      bool dead = true;
      absl::Status s = DecodeRecvTensorResponse(Split(Flatten(buffer), cut),
                                                CpuAllocator(), nullptr, &got, &dead);
      ASSERT_TRUE(s.ok()) << s << " n=" << n << " cut=" << cut;
      EXPECT_FALSE(dead);
      ASSERT_EQ(got.shape().DebugString(), t.shape().DebugString());
      if (t.TotalBytes() > 0) {  // an empty tensor may have no buffer
        EXPECT_EQ(std::memcmp(got.raw_data(), t.raw_data(), t.TotalBytes()), 0);
      }
    }
  }
}

TEST(TensorCodingTest, ReadsWhatAProtoWritesWhateverTheEncoding) {
  // Typed fields (a scalar as Python writes it), bools, strings, dead
  // tensors, and fields before the tensor (TensorFlow's order).
  std::vector<tensorflow::RecvTensorResponse> cases(4);
  cases[0].mutable_tensor()->set_dtype(tensorflow::DT_FLOAT);
  cases[0].mutable_tensor()->add_float_val(2.5f);
  cases[0].set_send_start_micros(12345);
  Tensor b(DT_BOOL, TensorShape({2}));
  b.flat<bool>()[0] = true;
  b.flat<bool>()[1] = false;
  TensorToProto(b, cases[1].mutable_tensor());
  Tensor s(DT_STRING, TensorShape({1}));
  s.flat<std::string>()[0] = "hello";
  TensorToProto(s, cases[2].mutable_tensor());
  cases[3].set_is_dead(true);
  for (size_t i = 0; i < cases.size(); ++i) {
    Tensor got;
    bool dead = false;
    absl::Status st = DecodeRecvTensorResponse(
        Split(cases[i].SerializeAsString(), 5), CpuAllocator(), nullptr, &got, &dead);
    ASSERT_TRUE(st.ok()) << st << " case " << i;
    if (i == 0) EXPECT_EQ(got.flat<float>()[0], 2.5f);
    if (i == 1) EXPECT_TRUE(got.flat<bool>()[0] && !got.flat<bool>()[1]);
    if (i == 2) EXPECT_EQ(got.flat<std::string>()[0], "hello");
    if (i == 3) EXPECT_TRUE(dead);
  }
  // What the encoder sends for a dead tensor and a string tensor.
  grpc::ByteBuffer buffer;
  ASSERT_TRUE(EncodeRecvTensorResponse(Tensor(), true, &buffer).ok());
  Tensor got;
  bool dead = false;
  ASSERT_TRUE(DecodeRecvTensorResponse(buffer, CpuAllocator(), nullptr, &got, &dead).ok());
  EXPECT_TRUE(dead);
  ASSERT_TRUE(EncodeRecvTensorResponse(s, false, &buffer).ok());
  ASSERT_TRUE(DecodeRecvTensorResponse(buffer, CpuAllocator(), nullptr, &got, &dead).ok());
  EXPECT_EQ(got.flat<std::string>()[0], "hello");
}

TEST(TensorCodingTest, LargeContentIsCopiedByThePoolIntoPlace) {
  // Over kParallelCopyBytes, in slices of odd sizes (pieces that straddle
  // the copy's ranges), with a pool and without.
  const int64_t n = static_cast<int64_t>(kParallelCopyBytes / sizeof(float)) + 12345;
  Tensor t = Floats(n);
  grpc::ByteBuffer buffer;
  ASSERT_TRUE(EncodeRecvTensorResponse(t, false, &buffer).ok());
  const std::string bytes = Flatten(buffer);
  std::unique_ptr<ThreadPool> pool = ThreadPool::Create("copy", 3).value();
  for (size_t cut : {size_t{4093}, size_t{1} << 20, bytes.size()}) {
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), pool.get()}) {
      Tensor got;
      bool dead = true;
      absl::Status s = DecodeRecvTensorResponse(Split(bytes, cut),
                                                CpuAllocator(), p, &got, &dead);
      ASSERT_TRUE(s.ok()) << s << " cut=" << cut;
      EXPECT_FALSE(dead);
      ASSERT_EQ(got.NumElements(), n);
      EXPECT_EQ(std::memcmp(got.raw_data(), t.raw_data(), t.TotalBytes()), 0)
          << "cut=" << cut << (p ? " with" : " without") << " a pool";
    }
  }
  // Cut short inside the content: an error, with the pool too.
  Tensor got;
  bool dead;
  absl::Status s = DecodeRecvTensorResponse(
      Split(bytes.substr(0, bytes.size() - 100), 65536), CpuAllocator(),
      pool.get(), &got, &dead);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("tensor_content"));
}

TEST(TensorCodingTest, MalformedBytesAreErrors) {
  grpc::ByteBuffer buffer;
  ASSERT_TRUE(EncodeRecvTensorResponse(Floats(300), false, &buffer).ok());
  const std::string bytes = Flatten(buffer);
  Tensor got;
  bool dead;
  // Truncated anywhere.
  for (size_t keep : {size_t{1}, size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    absl::Status s = DecodeRecvTensorResponse(Split(bytes.substr(0, keep), 3),
                                              CpuAllocator(), nullptr, &got, &dead);
    EXPECT_FALSE(s.ok()) << keep;
  }
  // Content that does not fit the shape.
  tensorflow::RecvTensorResponse lie;
  lie.mutable_tensor()->set_dtype(tensorflow::DT_FLOAT);
  lie.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(1000);
  lie.mutable_tensor()->set_tensor_content(std::string(8, '\0'));
  absl::Status s = DecodeRecvTensorResponse(Split(lie.SerializeAsString(), 4),
                                            CpuAllocator(), nullptr, &got, &dead);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("tensor_content"));
  // A hostile shape: 2^40 elements claimed.
  lie.mutable_tensor()->mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 40);
  s = DecodeRecvTensorResponse(Split(lie.SerializeAsString(), 4), CpuAllocator(),
                               nullptr, &got, &dead);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace weft
