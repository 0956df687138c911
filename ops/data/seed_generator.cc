// SeedGenerator (ops/data/seed_generator.h) and the ops that make and drop
// it as a resource:
//   - AnonymousSeedGenerator(seed, seed2, reshuffle), AnonymousRandomSeedGenerator
//     (seed, seed2; always reshuffles): a new generator in the step's
//     container, its handle and an (empty) deleter;
//   - DummySeedGenerator: a handle naming no resource, which tells a
//     ShuffleDatasetV3 to make a generator of its own from its seed inputs;
//   - DeleteSeedGenerator, DeleteRandomSeedGenerator: drop the resource
//     (datasets made from it keep the generator itself).
#include "ops/data/seed_generator.h"

#include <atomic>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/cpu/shared_resource.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

// TensorFlow's RandomSeeds: (0, 0) asks for seeds from the system.
int64_t EntropySeed() {
  std::random_device rd;
  return static_cast<int64_t>((static_cast<uint64_t>(rd()) << 32) ^ rd());
}

}  // namespace

SeedGenerator::SeedGenerator(int64_t seed, int64_t seed2, bool reshuffle)
    : reshuffle_(reshuffle),
      seed_((seed | seed2) == 0 ? EntropySeed() : seed),
      seed2_((seed | seed2) == 0 ? EntropySeed() : seed2),
      parent_(static_cast<uint64_t>(seed_), static_cast<uint64_t>(seed2_)) {}

void SeedGenerator::GenerateSeeds(int64_t* seed, int64_t* seed2) {
  if (!reshuffle_) {
    *seed = seed_;
    *seed2 = seed2_;
    return;
  }
  absl::MutexLock lock(&mu_);
  *seed = words_();
  *seed2 = words_();
}

namespace {

// AnonymousSeedGenerator (inputs seed, seed2, reshuffle) and
// AnonymousRandomSeedGenerator (seed, seed2).
class AnonymousSeedGeneratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<int64_t> seed = ScalarInt64Input(c, 0, "seed");
    OP_REQUIRES_OK(c, seed.status());
    absl::StatusOr<int64_t> seed2 = ScalarInt64Input(c, 1, "seed2");
    OP_REQUIRES_OK(c, seed2.status());
    bool reshuffle = true;
    if (c->num_inputs() > 2) {
      absl::StatusOr<bool> r = ScalarBoolInput(c, 2, "reshuffle");
      OP_REQUIRES_OK(c, r.status());
      reshuffle = *r;
    }
    static std::atomic<int64_t> next{0};
    ResourceHandle h;
    h.device = c->device()->name();
    h.container = StepContainerName(c->step_id());
    h.name = absl::StrCat("_AnonymousSeedGenerator", next.fetch_add(1));
    OP_REQUIRES_OK(c, c->resource_manager()->Create<SeedGeneratorResource>(
                          h.container, h.name,
                          std::make_shared<SeedGeneratorResource>(
                              std::make_shared<SeedGenerator>(*seed, *seed2,
                                                              reshuffle))));
    c->set_output(0, ResourceHandleTensor(h));
    c->set_output(1, Tensor(DT_VARIANT, TensorShape()));
  }
};

class DummySeedGeneratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    ResourceHandle h;
    h.device = c->device()->name();
    h.container = c->resource_manager()->default_container();
    h.name = "_DummySeedGenerator";
    c->set_output(0, ResourceHandleTensor(h));
  }
};

// Drops the resource; one already gone (its step ended) is not an error.
class DeleteSeedGeneratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<ResourceHandle> h = HandleFromInput(c, 0, "handle");
    OP_REQUIRES_OK(c, h.status());
    absl::Status s = c->resource_manager()->Delete<SeedGeneratorResource>(
        h->container, h->name);
    if (!absl::IsNotFound(s)) OP_REQUIRES_OK(c, s);
  }
};

}  // namespace

void RegisterSeedGeneratorKernels(KernelRegistry* r) {
  for (const char* op : {"AnonymousSeedGenerator", "AnonymousRandomSeedGenerator"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<AnonymousSeedGeneratorOp>);
  }
  r->Register(KernelDef("DummySeedGenerator", kDeviceTypeCpu),
              MakeKernel<DummySeedGeneratorOp>);
  for (const char* op : {"DeleteSeedGenerator", "DeleteRandomSeedGenerator"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<DeleteSeedGeneratorOp>);
  }
}

}  // namespace data
}  // namespace weft
