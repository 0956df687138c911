// The seeds a shuffle's iterators draw (TensorFlow's SeedGenerator): each
// new pass over a shuffled dataset (an iterator, or an epoch of a
// shuffle-and-repeat) asks for a (seed, seed2) pair and seeds its own Philox
// stream with it.
//   - fixed (reshuffle_each_iteration = false): always the dataset's seeds,
//     so every pass has the same order;
//   - random (reshuffle_each_iteration = true): the next two 32-bit words of
//     a Philox stream seeded with the dataset's seeds, so passes differ but
//     the whole sequence of passes is reproducible.
// Seeds (0, 0) mean "unseeded": two 64-bit values from the system's entropy
// replace them once, when the generator is made, as TensorFlow does.
//
// A generator is shared: by every iterator of a dataset (ShuffleDataset) or,
// through the AnonymousSeedGenerator resource, by several datasets.
//
// Thread safety: GenerateSeeds is thread-safe.
#ifndef WEFT_OPS_DATA_SEED_GENERATOR_H_
#define WEFT_OPS_DATA_SEED_GENERATOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/philox_random.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace data {

class SeedGenerator {
 public:
  SeedGenerator(int64_t seed, int64_t seed2, bool reshuffle);
  SeedGenerator(const SeedGenerator&) = delete;
  SeedGenerator& operator=(const SeedGenerator&) = delete;

  // The seeds of the next pass.
  void GenerateSeeds(int64_t* seed, int64_t* seed2);
  bool reshuffle() const { return reshuffle_; }

 private:
  const bool reshuffle_;
  int64_t seed_;
  int64_t seed2_;
  absl::Mutex mu_;
  philox::PhiloxRandom parent_ ABSL_GUARDED_BY(mu_);
  philox::SingleSampleAdapter words_ ABSL_GUARDED_BY(mu_){&parent_};
};
using SeedGeneratorPtr = std::shared_ptr<SeedGenerator>;

// What AnonymousSeedGenerator and AnonymousRandomSeedGenerator make: a
// resource holding one generator for the datasets given its handle.
class SeedGeneratorResource : public ResourceBase {
 public:
  explicit SeedGeneratorResource(SeedGeneratorPtr generator)
      : generator_(std::move(generator)) {}
  const SeedGeneratorPtr& generator() const { return generator_; }
  std::string DebugString() const override { return "SeedGenerator"; }

 private:
  const SeedGeneratorPtr generator_;
};

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_SEED_GENERATOR_H_
