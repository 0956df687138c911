// Tensor, TensorShape, TensorProto conversion and the allocator.
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "proto/tensor.pb.h"
#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

TEST(TensorShape, BuildRejectsNegativeAndOverflow) {
  EXPECT_TRUE(TensorShape::Build({2, 3}).ok());
  EXPECT_EQ(TensorShape::Build({2, -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TensorShape::Build({int64_t{1} << 40, int64_t{1} << 40}).status().code(),
            absl::StatusCode::kInvalidArgument);
  TensorShape s({2, 3, 4});
  EXPECT_EQ(s.num_elements(), 24);
  s.RemoveDim(1);
  EXPECT_EQ(s, TensorShape({2, 4}));
  s.InsertDim(0, 5);
  EXPECT_EQ(s.DebugString(), "[5,2,4]");
}

TEST(PartialShape, Compatibility) {
  PartialShape a({-1, 3});
  EXPECT_TRUE(a.IsCompatibleWith(TensorShape({7, 3})));
  EXPECT_FALSE(a.IsCompatibleWith(TensorShape({7, 4})));
  EXPECT_FALSE(a.IsCompatibleWith(TensorShape({3})));
  EXPECT_TRUE(PartialShape::UnknownRank().IsCompatibleWith(TensorShape({1, 2, 3})));
  EXPECT_EQ(a.DebugString(), "[?,3]");
}

TEST(Tensor, AllocatesAlignedAndCopiesShareBuffers) {
  Tensor t(DT_FLOAT, TensorShape({4, 3}));
  ASSERT_TRUE(t.IsInitialized());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
  for (int i = 0; i < 12; ++i) t.data<float>()[i] = i;
  Tensor copy = t;
  EXPECT_TRUE(copy.SharesBufferWith(t));
  EXPECT_FALSE(t.BufferIsUnique());
  Tensor deep = t.DeepCopy();
  EXPECT_FALSE(deep.SharesBufferWith(t));
  deep.data<float>()[0] = 100;
  EXPECT_EQ(t.data<float>()[0], 0);
}

TEST(Tensor, SliceAliasesRows) {
  Tensor t(DT_INT32, TensorShape({4, 2}));
  for (int i = 0; i < 8; ++i) t.data<int32_t>()[i] = i;
  Tensor rows = t.Slice(1, 3);
  EXPECT_EQ(rows.shape(), TensorShape({2, 2}));
  EXPECT_EQ(rows.data<int32_t>()[0], 2);
  rows.data<int32_t>()[0] = -1;
  EXPECT_EQ(t.data<int32_t>()[2], -1);
  EXPECT_EQ(t.Reshaped(TensorShape({8})).data<int32_t>()[2], -1);
}

TEST(Tensor, StringsAreObjects) {
  Tensor t(DT_STRING, TensorShape({2}));
  t.data<std::string>()[0] = std::string(1000, 'x');
  Tensor copy = t.DeepCopy();
  EXPECT_EQ(copy.data<std::string>()[0].size(), 1000u);
  EXPECT_EQ(copy.data<std::string>()[1], "");
}

// A variant element holds a shared, immutable object: copies of the tensor
// and deep copies share it, and the last holder frees it.
TEST(Tensor, VariantsShareTheirValue) {
  struct Probe : VariantValue {
    explicit Probe(int* alive) : alive(alive) { ++*alive; }
    ~Probe() override { --*alive; }
    std::string TypeName() const override { return "probe"; }
    std::string DebugString() const override { return "<probe>"; }
    int* alive;
  };
  int alive = 0;
  {
    Tensor t(DT_VARIANT, TensorShape({2}));
    ASSERT_TRUE(t.IsInitialized());
    EXPECT_EQ(t.data<Variant>()[1].value, nullptr);
    t.data<Variant>()[0].value = std::make_shared<Probe>(&alive);
    Tensor deep = t.DeepCopy();
    t = Tensor();
    EXPECT_EQ(alive, 1);
    ASSERT_NE(deep.data<Variant>()[0].get<Probe>(), nullptr);
    EXPECT_EQ(deep.ElementString(0), "<probe>");
    EXPECT_EQ(deep.ElementString(1), "<empty variant>");
  }
  EXPECT_EQ(alive, 0);
}

TEST(Tensor, AllocateReportsExhaustion) {
  absl::StatusOr<Tensor> huge = Tensor::Allocate(
      CpuAllocator(), DT_FLOAT, TensorShape({int64_t{1} << 50}));
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Tensor::Allocate(CpuAllocator(), tensorflow::DT_QINT8,
                             TensorShape({1}))
                .status()
                .code(),
            absl::StatusCode::kUnimplemented);
}

TEST(Allocator, TracksBytesInUseAndPeak) {
  TrackingCpuAllocator alloc;
  void* a = alloc.Allocate(64, 1000);
  void* b = alloc.Allocate(64, 500);
  EXPECT_EQ(alloc.GetStats().bytes_in_use, 1500);
  alloc.Deallocate(a, 1000);
  EXPECT_EQ(alloc.GetStats().bytes_in_use, 500);
  EXPECT_EQ(alloc.GetStats().peak_bytes_in_use, 1500);
  EXPECT_EQ(alloc.GetStats().largest_alloc_size, 1000);
  alloc.Deallocate(b, 500);
  EXPECT_EQ(alloc.GetStats().num_allocs, 2);
}

TEST(Allocator, LargeBlocksAreAlignedAndReusedBySizeClass) {
  TrackingCpuAllocator alloc;
  const size_t mib = size_t{1} << 20;
  for (size_t alignment : {size_t{64}, size_t{4096}}) {
    void* p = alloc.Allocate(alignment, 3 * mib);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);
    std::memset(p, 1, 3 * mib);  // the whole block is usable
    alloc.Deallocate(p, 3 * mib);
  }
  EXPECT_EQ(alloc.Allocate(8192, 2 * mib), nullptr);  // past a page: refused
  EXPECT_EQ(alloc.GetStats().bytes_in_use, 0);
#if !defined(__SANITIZE_ADDRESS__)
  // A freed large block serves the next request of its size class, the
  // way a training step allocates the same sizes every time.
  void* a = alloc.Allocate(64, 5 * mib);
  alloc.Deallocate(a, 5 * mib);
  void* b = alloc.Allocate(64, 5 * mib + 100);  // same class
  EXPECT_EQ(a, b);
  std::memset(b, 2, 5 * mib + 100);
  void* c = alloc.Allocate(64, 5 * mib + 100);  // the class is taken now
  EXPECT_NE(c, b);
  alloc.Deallocate(b, 5 * mib + 100);
  alloc.Deallocate(c, 5 * mib + 100);
  EXPECT_EQ(alloc.GetStats().bytes_in_use, 0);
#endif
}

TEST(LimitedAllocator, RefusesPastTheLimitAndTakesBytesBack) {
  LimitedAllocator* limited = LimitedAllocator::New(CpuAllocator(), 1000);
  void* a = limited->Allocate(64, 600);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(limited->Allocate(64, 401), nullptr);  // 1001 > 1000
  EXPECT_EQ(limited->Allocate(64, 1001), nullptr);
  void* b = limited->Allocate(64, 400);            // exactly the limit
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(limited->GetStats().bytes_in_use, 1000);
  limited->Deallocate(a, 600);
  limited->Deallocate(b, 400);
  EXPECT_EQ(limited->GetStats().bytes_in_use, 0);
  EXPECT_EQ(limited->GetStats().peak_bytes_in_use, 1000);
  EXPECT_EQ(limited->GetStats().num_allocs, 2);

  absl::StatusOr<Tensor> t =
      Tensor::Allocate(limited, DT_FLOAT, TensorShape({10, 30}));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(t.status().message().find(
                "tensor of shape [10,30] and dtype float (1200 bytes) on cpu "
                "(session memory limit 1000 bytes, 0 in use"),
            std::string::npos)
      << t.status();
  limited->Unref();
}

TEST(LimitedAllocator, TensorsOutliveTheirCreator) {
  // Fetched tensors may outlive the session that made them: the allocator
  // lives until its last block is freed (ASan reports a use after free
  // otherwise).
  LimitedAllocator* limited = LimitedAllocator::New(CpuAllocator(), 1 << 20);
  absl::StatusOr<Tensor> t = Tensor::Allocate(limited, DT_FLOAT, TensorShape({4}));
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<Tensor> s = Tensor::Allocate(limited, DT_STRING, TensorShape({2}));
  ASSERT_TRUE(s.ok()) << s.status();
  s->data<std::string>()[1] = std::string(100, 'x');
  limited->Unref();
  t->data<float>()[3] = 1.5f;
  Tensor copy = *t;
  t = Tensor();
  EXPECT_EQ(copy.data<float>()[3], 1.5f);
}

TEST(LimitedAllocator, ConcurrentRequestsNeverPassTheLimit) {
  constexpr int64_t kLimit = 64 << 10;
  LimitedAllocator* limited = LimitedAllocator::New(CpuAllocator(), kLimit);
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 2000; ++j) {
        const size_t n = 1024 * (1 + (i + j) % 24);
        void* p = limited->Allocate(64, n);
        if (p == nullptr) {
          refused.fetch_add(1);
          continue;
        }
        static_cast<char*>(p)[n - 1] = 1;
        limited->Deallocate(p, n);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(limited->GetStats().peak_bytes_in_use, kLimit);
  EXPECT_EQ(limited->GetStats().bytes_in_use, 0);
  EXPECT_EQ(limited->GetStats().num_allocs + refused.load(), 4 * 2000);
  limited->Unref();
}

TEST(TensorProto, TensorContentRoundTrip) {
  Tensor t(DT_DOUBLE, TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) t.data<double>()[i] = i * 1.5;
  tensorflow::TensorProto proto;
  TensorToProto(t, &proto);
  EXPECT_EQ(proto.tensor_content().size(), 32u);
  absl::StatusOr<Tensor> back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->data<double>()[3], 4.5);
}

TEST(TensorProto, BoolContentBytesOtherThanZeroOrOneAreTrue) {
  // A peer's bytes: 0x65 is not a valid C++ bool, so it is read as true (as
  // numpy and TensorFlow read it) rather than copied as it is.
  tensorflow::TensorProto proto;
  proto.set_dtype(tensorflow::DT_BOOL);
  proto.mutable_tensor_shape()->add_dim()->set_size(3);
  proto.set_tensor_content(std::string("\x00\x65\x01", 3));
  absl::StatusOr<Tensor> t = TensorFromProto(proto);
  ASSERT_TRUE(t.ok()) << t.status();
  const auto* bytes = static_cast<const unsigned char*>(t->raw_data());
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[1], 1);
  EXPECT_EQ(bytes[2], 1);
  EXPECT_EQ(t->DebugString(), "Tensor<type: bool shape: [3] values: false true true>");
}

TEST(TensorProto, TypedFieldsSplatLastValue) {
  tensorflow::TensorProto proto;
  proto.set_dtype(DT_FLOAT);
  proto.mutable_tensor_shape()->add_dim()->set_size(4);
  proto.add_float_val(1);
  proto.add_float_val(2);
  absl::StatusOr<Tensor> t = TensorFromProto(proto);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data<float>()[3], 2);
  proto.clear_float_val();
  t = TensorFromProto(proto);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data<float>()[3], 0);  // empty typed field: zeros
}

TEST(TensorProto, ComplexPairsSplatAndRoundTrip) {
  tensorflow::TensorProto proto;
  proto.set_dtype(tensorflow::DT_COMPLEX64);
  proto.mutable_tensor_shape()->add_dim()->set_size(3);
  for (float v : {1.f, -2.f, 3.f, 4.f}) proto.add_scomplex_val(v);
  absl::StatusOr<Tensor> t = TensorFromProto(proto);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data<Complex64>()[0], Complex64(1, -2));
  EXPECT_EQ(t->data<Complex64>()[2], Complex64(3, 4));  // the last pair splats
  EXPECT_EQ(t->ElementString(0), "(1-2j)");
  for (ProtoEncoding encoding :
       {ProtoEncoding::kTypedFields, ProtoEncoding::kTensorContent}) {
    tensorflow::TensorProto out;
    TensorToProto(*t, &out, encoding);
    absl::StatusOr<Tensor> back = TensorFromProto(out);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->data<Complex64>()[1], Complex64(3, 4));
  }
  proto.add_scomplex_val(5);  // half a pair
  t = TensorFromProto(proto);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("scomplex_val"), std::string::npos);
}

TEST(TensorProto, StringsBothEncodings) {
  Tensor t(DT_STRING, TensorShape({2}));
  t.data<std::string>()[0] = "hello";
  t.data<std::string>()[1] = std::string(200, 'z');
  tensorflow::TensorProto proto;
  TensorToProto(t, &proto, ProtoEncoding::kTypedFields);
  absl::StatusOr<Tensor> back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data<std::string>()[1].size(), 200u);
  // tensor_content form: varint lengths (5, 200 = 0xc8 0x01) then bytes.
  tensorflow::TensorProto content;
  content.set_dtype(DT_STRING);
  content.mutable_tensor_shape()->add_dim()->set_size(2);
  std::string bytes = "\x05\xc8\x01hello" + std::string(200, 'z');
  content.set_tensor_content(bytes);
  back = TensorFromProto(content);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->data<std::string>()[0], "hello");
  content.set_tensor_content(bytes.substr(0, 20));
  EXPECT_EQ(TensorFromProto(content).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorProto, RejectsMismatchesCleanly) {
  tensorflow::TensorProto proto;
  proto.set_dtype(DT_INT32);
  proto.mutable_tensor_shape()->add_dim()->set_size(3);
  proto.set_tensor_content(std::string(8, '\0'));  // needs 12
  EXPECT_EQ(TensorFromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);
  proto.clear_tensor_content();
  for (int i = 0; i < 5; ++i) proto.add_int_val(i);  // too many values
  EXPECT_EQ(TensorFromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);
  proto.mutable_tensor_shape()->mutable_dim(0)->set_size(-2);
  EXPECT_EQ(TensorFromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);
  proto.set_dtype(tensorflow::DT_INVALID);
  EXPECT_EQ(TensorFromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorProto, HalfUsesHalfVal) {
  Tensor t(DT_HALF, TensorShape({2}));
  t.data<Half>()[0] = FloatToHalf(1.5f);
  t.data<Half>()[1] = FloatToHalf(-2.0f);
  tensorflow::TensorProto proto;
  TensorToProto(t, &proto, ProtoEncoding::kTypedFields);
  ASSERT_EQ(proto.half_val_size(), 2);
  absl::StatusOr<Tensor> back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(HalfToFloat(back->data<Half>()[1]), -2.0f);
}

TEST(Types, NamesParseBothWays) {
  EXPECT_EQ(DataTypeString(DT_FLOAT), "float");
  EXPECT_EQ(DataTypeNumpyName(DT_FLOAT), "float32");
  EXPECT_EQ(DataTypeString(MakeRefType(DT_INT32)), "int32_ref");
  EXPECT_EQ(*ParseDataType("float32"), DT_FLOAT);
  EXPECT_EQ(*ParseDataType("DT_DOUBLE"), DT_DOUBLE);
  EXPECT_EQ(*ParseDataType("float64"), DT_DOUBLE);
  EXPECT_FALSE(ParseDataType("complex256").ok());
}

// Contract checks (runtime/core/dcheck.h) fire in the builds that enable them.
TEST(TensorDcheckDeathTest, WrongTypeBadSliceAndReshape) {
#if defined(WEFT_DEBUG_CHECKS)
  Tensor t(DT_FLOAT, TensorShape({2, 3}));
  EXPECT_DEATH((void)t.data<int32_t>(), "WEFT_DCHECK failed: data_ == nullptr");
  EXPECT_DEATH((void)t.data<uint64_t>(), "WEFT_DCHECK failed: data_ == nullptr");
  // Unsigned storage of the element's size is how VisitStorage moves bytes.
  EXPECT_EQ(static_cast<void*>(t.data<uint32_t>()), t.raw_data());
  EXPECT_DEATH((void)t.Slice(1, 3), "WEFT_DCHECK failed: 0 <= start");
  EXPECT_DEATH((void)t.Reshaped(TensorShape({5})), "WEFT_DCHECK failed: shape.num_elements");
  EXPECT_DEATH((void)t.shape().dim_size(2), "WEFT_DCHECK failed: i >= 0");
  EXPECT_EQ(t.Slice(1, 2).dim_size(0), 1);  // in-contract calls pass
#else
  GTEST_SKIP() << "WEFT_DEBUG_CHECKS is off in this build; on in --config=asan, tsan and fuzz";
#endif
}

}  // namespace
}  // namespace weft
