// ResourceMgr, Var, CancellationManager and devices.
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/device.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace {

TEST(ResourceMgr, CreateLookupDelete) {
  ResourceMgr rm;
  auto var = std::make_shared<Var>(DT_FLOAT);
  ASSERT_TRUE(rm.Create<Var>("c", "v", var).ok());
  EXPECT_EQ(rm.Create<Var>("c", "v", var).code(), absl::StatusCode::kAlreadyExists);
  absl::StatusOr<std::shared_ptr<Var>> found = rm.Lookup<Var>("c", "v");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->get(), var.get());
  absl::Status missing = rm.Lookup<Var>("c", "w").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("c/w"), std::string::npos);
  EXPECT_EQ(rm.List(), std::vector<std::string>{"c/v"});
  ASSERT_TRUE(rm.Delete<Var>("c", "v").ok());
  EXPECT_FALSE(rm.Lookup<Var>("c", "v").ok());
  // The deleted variable stays alive for holders.
  EXPECT_EQ(var->dtype(), DT_FLOAT);
}

TEST(ResourceMgr, LookupOrCreateIsAtomicAcrossThreads) {
  ResourceMgr rm;
  std::vector<Var*> seen(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      auto v = rm.LookupOrCreate<Var>("c", "shared", [] {
        return std::make_shared<Var>(DT_INT32);
      });
      seen[i] = v->get();
    });
  }
  for (auto& t : threads) t.join();
  for (Var* v : seen) EXPECT_EQ(v, seen[0]);
  rm.Cleanup("c");
  EXPECT_TRUE(rm.List().empty());
}

TEST(Cancellation, CallbacksRunOnceAndLateRegistrationFails) {
  CancellationManager cm;
  int calls = 0;
  CancellationToken a = cm.Register([&] { ++calls; });
  CancellationToken b = cm.Register([&] { calls += 10; });
  ASSERT_NE(a, kInvalidToken);
  EXPECT_TRUE(cm.Deregister(b));
  cm.StartCancel();
  cm.StartCancel();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(cm.IsCancelled());
  EXPECT_EQ(cm.Register([&] { ++calls; }), kInvalidToken);
}

TEST(DeviceMgr, NamesAndLookup) {
  LocalDeviceOptions options;
  options.num_cpus = 2;
  std::unique_ptr<DeviceMgr> mgr = DeviceMgr::NewLocal(options).value();
  ASSERT_EQ(mgr->devices().size(), 2u);
  EXPECT_EQ(mgr->devices()[1]->name(), "/job:localhost/replica:0/task:0/device:CPU:1");
  EXPECT_NE(mgr->devices()[0]->attributes().incarnation(), 0u);
  for (const char* name : {"/job:localhost/replica:0/task:0/device:CPU:1",
                           "/device:CPU:1", "/cpu:1", "CPU:1"}) {
    absl::StatusOr<Device*> d = mgr->Lookup(name);
    ASSERT_TRUE(d.ok()) << name;
    EXPECT_EQ(*d, mgr->devices()[1]);
  }
  absl::Status s = mgr->Lookup("/device:GPU:0").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("CPU:0"), std::string::npos) << s;
}

TEST(ThreadPool, ParallelForCoversRange) {
  std::unique_ptr<ThreadPool> owned = ThreadPool::Create("test", 3).value();
  ThreadPool& pool = *owned;
  std::vector<int> hits(1000, 0);
  pool.ParallelFor(1000, 10000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (int h : hits) EXPECT_EQ(h, 1);
}

}  // namespace
}  // namespace weft
