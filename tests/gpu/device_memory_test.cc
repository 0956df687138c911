// The device-memory rule (runtime/core/device_memory.h) checked without a GPU: a
// fake device allocator hands out host memory but registers it as device
// memory, so the split TensorBuffer, InHostMemory, the guarded printing and
// DeepCopy, and the copies a _Recv makes all run here. The fake poisons
// nothing, so what it checks is the bookkeeping, not protection.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "absl/synchronization/mutex.h"
#include "runtime/core/device_memory.h"
#include "runtime/core/tensor.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

class FakeDeviceAllocator final : public DeviceMemoryAllocator {
 public:
  std::string Name() const override { return "fake_device"; }
  void* Allocate(size_t alignment, size_t num_bytes) override {
    void* p = CpuAllocator()->Allocate(alignment, num_bytes);
    absl::MutexLock lock(&mu_);
    blocks_.Add(p, num_bytes);
    ++live_;
    return p;
  }
  void Deallocate(void* ptr, size_t num_bytes) override {
    {
      absl::MutexLock lock(&mu_);
      blocks_.Remove(ptr);
      --live_;
    }
    CpuAllocator()->Deallocate(ptr, num_bytes);
  }
  AllocatorStats GetStats() const override { return {}; }
  bool Owns(const void* ptr) const override {
    absl::MutexLock lock(&mu_);
    return blocks_.Contains(ptr);
  }
  absl::Status CopyToHost(const void* src, void* dst, size_t n) override {
    ++copies_to_host;
    std::memcpy(dst, src, n);
    return absl::OkStatus();
  }
  absl::Status CopyFromHost(const void* src, void* dst, size_t n) override {
    ++copies_from_host;
    std::memcpy(dst, src, n);
    return absl::OkStatus();
  }
  int live() const {
    absl::MutexLock lock(&mu_);
    return live_;
  }
  int copies_to_host = 0;
  int copies_from_host = 0;

 private:
  mutable absl::Mutex mu_;
  BlockRanges blocks_;
  int live_ = 0;
};

// Registered once, for the process (as real device allocators are).
FakeDeviceAllocator* Fake() {
  static FakeDeviceAllocator* const fake = [] {
    auto* f = new FakeDeviceAllocator;
    RegisterDeviceMemory(f);
    return f;
  }();
  return fake;
}

Tensor Iota(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.flat<float>()[i] = static_cast<float>(i) + 0.5f;
  return t;
}

TEST(DeviceMemoryTest, HostTensorsStayPutAndAreReadable) {
  Fake();
  Tensor t = Iota(5);
  EXPECT_TRUE(InHostMemory(t));
  EXPECT_EQ(DeviceMemoryOwner(t.raw_data()), nullptr);
  absl::StatusOr<Tensor> same = CopyTensorToAllocator(t, CpuAllocator());
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->SharesBufferWith(t));
  EXPECT_THAT(t.DebugString(), HasSubstr("values: 0.5 1.5"));
}

TEST(DeviceMemoryTest, RoundTripThroughDeviceMemory) {
  FakeDeviceAllocator* fake = Fake();
  const int live_before = fake->live();
  const int to_host = fake->copies_to_host, from_host = fake->copies_from_host;
  {
    Tensor host = Iota(1000);
    absl::StatusOr<Tensor> dev = CopyTensorToAllocator(host, fake);
    ASSERT_TRUE(dev.ok()) << dev.status();
    EXPECT_EQ(fake->copies_from_host, from_host + 1);
    EXPECT_FALSE(InHostMemory(*dev));
    EXPECT_EQ(DeviceMemoryOwner(dev->raw_data()), fake);
    // A slice points into the middle of the block: still device memory.
    EXPECT_FALSE(InHostMemory(dev->Slice(500, 600)));
    EXPECT_EQ(fake->live(), live_before + 1);
    // Nothing prints device elements.
    EXPECT_THAT(dev->DebugString(), HasSubstr("in device memory"));
    EXPECT_THAT(dev->DebugString(), ::testing::Not(HasSubstr("0.5")));
    // Already on that device: passed on, not copied.
    absl::StatusOr<Tensor> again = CopyTensorToAllocator(*dev, fake);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->SharesBufferWith(*dev));
    // Back to the host, bit for bit.
    absl::StatusOr<Tensor> back = CopyTensorToAllocator(*dev, CpuAllocator());
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(fake->copies_to_host, to_host + 1);
    EXPECT_TRUE(InHostMemory(*back));
    EXPECT_EQ(std::memcmp(back->raw_data(), host.raw_data(), host.TotalBytes()), 0);
    // DeepCopy of a device tensor is a host copy.
    Tensor deep = dev->DeepCopy();
    ASSERT_TRUE(deep.IsInitialized());
    EXPECT_TRUE(InHostMemory(deep));
    EXPECT_EQ(std::memcmp(deep.raw_data(), host.raw_data(), host.TotalBytes()), 0);
  }
  // The split buffer gave its elements back to the device allocator.
  EXPECT_EQ(fake->live(), live_before);
}

TEST(DeviceMemoryTest, AllocateFromDeviceKeepsTheHeaderOnTheHost) {
  FakeDeviceAllocator* fake = Fake();
  absl::StatusOr<Tensor> t = Tensor::Allocate(fake, DT_FLOAT, TensorShape({3, 4}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(InHostMemory(*t));
  // Object dtypes never live in device memory.
  absl::StatusOr<Tensor> s = Tensor::Allocate(fake, DT_STRING, TensorShape({2}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(InHostMemory(*s));
  // Empty tensors have no elements anywhere.
  absl::StatusOr<Tensor> e = Tensor::Allocate(fake, DT_FLOAT, TensorShape({0, 4}));
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(InHostMemory(*e));
  absl::StatusOr<Tensor> moved = CopyTensorToAllocator(*e, CpuAllocator());
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->shape(), TensorShape({0, 4}));
}

}  // namespace
}  // namespace weft
