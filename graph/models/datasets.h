// Data sets for the model library: a deterministic synthetic one and
// scikit-learn's 8x8 handwritten digits, batched into the feeds of the
// "images" / "labels" placeholders (models.h).
//
//   absl::StatusOr<Dataset> digits = LoadDigits(DefaultDigitsPath());
//   Dataset synth = MakeSyntheticDataset({.examples = 4096, .seed = 7});
//   BatchIterator it(&synth, /*batch=*/32, /*seed=*/1);
//   Batch b = it.Next();   // b.images float [32, 64], b.labels int64 [32]
//
// The digits file (written once by tools/setup.sh from scikit-learn's
// bundled copy; 1797 examples) has this layout, all integers little-endian:
//   bytes 0-7    magic "WEFTDS1\n"
//   uint32       count (examples)
//   uint32       rows, then cols (8, 8)
//   uint32       num_classes (10)
//   uint32       pixel_max (16: pixels are 0..pixel_max)
//   count times: rows * cols uint8 pixels (row-major), then one uint8 label
// Pixels are scaled to [0, 1] by dividing by pixel_max when loaded.
//
// Thread safety: Dataset is a plain value; a BatchIterator is used from one
// thread and must not outlive its Dataset.
#ifndef WEFT_GRAPH_MODELS_DATASETS_H_
#define WEFT_GRAPH_MODELS_DATASETS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/core/tensor.h"

namespace weft {

struct Dataset {
  std::string name;
  int64_t rows = 0, cols = 0, num_classes = 0;
  std::vector<float> images;    // size() * rows * cols, in [0, 1]
  std::vector<int64_t> labels;  // size(), in [0, num_classes)
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  int64_t features() const { return rows * cols; }
};

// Learnable noise: each class has a fixed random prototype image (pixels
// uniform in [0, 1)); an example is a uniformly drawn label's prototype plus
// Gaussian noise of stddev `noise` per pixel, clipped to [0, 1]. With the
// default noise the classes overlap a little, so accuracy climbs over tens
// of steps rather than jumping to 1. Same options, same bytes, everywhere
// (it uses its own generator, not <random>'s distributions).
struct SyntheticOptions {
  int64_t examples = 4096;
  int64_t rows = 8, cols = 8;
  int64_t num_classes = 10;
  double noise = 0.5;
  uint64_t seed = 1;
};
Dataset MakeSyntheticDataset(const SyntheticOptions& options);

// $WEFT_DATA_DIR/digits.bin if WEFT_DATA_DIR is set, else
// $HOME/.cache/weft/data/digits.bin.
std::string DefaultDigitsPath();

// Reads the digits file. NOT_FOUND (telling the user to run tools/setup.sh)
// if it is missing; DATA_LOSS naming the file and what is wrong if it is
// malformed or truncated.
absl::StatusOr<Dataset> LoadDigits(const std::string& path);

// Writes `data` in the file format above (pixels are rounded to
// 0..pixel_max). Used by tests; the real file comes from tools/setup.sh.
absl::Status WriteDigitsFile(const Dataset& data, int pixel_max,
                             const std::string& path);

struct Batch {
  Tensor images;  // float [batch, rows * cols]
  Tensor labels;  // int64 [batch]
};

// Endless batches: passes over the data set in an order reshuffled each
// epoch (seeded); a batch that runs past the end continues in the next
// epoch, so every batch is full.
class BatchIterator {
 public:
  // `data` must outlive the iterator and be non-empty; batch >= 1.
  BatchIterator(const Dataset* data, int64_t batch, uint64_t seed);
  BatchIterator(const BatchIterator&) = delete;
  BatchIterator& operator=(const BatchIterator&) = delete;

  // The next batch, or RESOURCE_EXHAUSTED naming the batch size when its
  // tensors cannot be allocated (a --batch of 2^40, say).
  absl::StatusOr<Batch> Next();
  int64_t epoch() const { return epoch_; }

 private:
  void Shuffle();

  const Dataset* data_;
  int64_t batch_;
  uint64_t state_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0;
  int64_t epoch_ = 0;
};

}  // namespace weft

#endif  // WEFT_GRAPH_MODELS_DATASETS_H_
