#include "graph/models/datasets.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

constexpr char kMagic[8] = {'W', 'E', 'F', 'T', 'D', 'S', '1', '\n'};
constexpr int kHeaderBytes = 8 + 5 * 4;

// SplitMix64: small, fast and fully specified, so synthetic data and
// shuffles are the same on every platform.
uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double Uniform(uint64_t* state) {  // [0, 1)
  return static_cast<double>(NextRandom(state) >> 11) * 0x1.0p-53;
}
double Gaussian(uint64_t* state) {  // Box-Muller
  const double u1 = 1.0 - Uniform(state), u2 = Uniform(state);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

uint32_t ReadU32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 |
         uint32_t{p[3]} << 24;
}
void AppendU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

}  // namespace

Dataset MakeSyntheticDataset(const SyntheticOptions& o) {
  Dataset d;
  d.name = "synthetic";
  d.rows = o.rows;
  d.cols = o.cols;
  d.num_classes = o.num_classes;
  uint64_t state = o.seed;
  const int64_t f = o.rows * o.cols;
  std::vector<double> prototype(o.num_classes * f);
  for (double& p : prototype) p = Uniform(&state);
  d.images.resize(o.examples * f);
  d.labels.resize(o.examples);
  for (int64_t i = 0; i < o.examples; ++i) {
    const int64_t label = static_cast<int64_t>(NextRandom(&state) %
                                               static_cast<uint64_t>(o.num_classes));
    d.labels[i] = label;
    float* x = &d.images[i * f];
    for (int64_t j = 0; j < f; ++j) {
      const double v = prototype[label * f + j] + o.noise * Gaussian(&state);
      x[j] = static_cast<float>(std::clamp(v, 0.0, 1.0));
    }
  }
  return d;
}

std::string DefaultDigitsPath() {
  if (const char* dir = std::getenv("WEFT_DATA_DIR"); dir && *dir) {
    return absl::StrCat(dir, "/digits.bin");
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home ? home : ".", "/.cache/weft/data/digits.bin");
}

absl::StatusOr<Dataset> LoadDigits(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "digits data set '", path,
        "' not found; run tools/setup.sh to export it from scikit-learn "
        "(or set WEFT_DATA_DIR to the folder holding digits.bin)"));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  auto bad = [&](const std::string& why) {
    return absl::DataLossError(
        absl::StrCat("digits data set '", path, "': ", why,
                     "; rerun tools/setup.sh after deleting the file"));
  };
  if (bytes.size() < kHeaderBytes ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return bad("not a Weft data set file (bad magic)");
  }
  const auto* h = reinterpret_cast<const unsigned char*>(bytes.data()) + 8;
  const uint32_t count = ReadU32(h), rows = ReadU32(h + 4),
                 cols = ReadU32(h + 8), classes = ReadU32(h + 12),
                 pixel_max = ReadU32(h + 16);
  if (rows == 0 || cols == 0 || classes == 0 || pixel_max == 0 ||
      rows > 4096 || cols > 4096 || classes > 256) {
    return bad(absl::StrCat("bad header (rows ", rows, ", cols ", cols,
                            ", classes ", classes, ", pixel_max ", pixel_max,
                            ")"));
  }
  const uint64_t record = uint64_t{rows} * cols + 1;
  if (bytes.size() != kHeaderBytes + record * count) {
    return bad(absl::StrCat("size ", bytes.size(), " bytes, expected ",
                            kHeaderBytes + record * count, " for ", count,
                            " examples"));
  }
  Dataset d;
  d.name = "digits";
  d.rows = rows;
  d.cols = cols;
  d.num_classes = classes;
  d.images.reserve(count * (record - 1));
  const auto* p = h + 20;
  for (uint32_t i = 0; i < count; ++i, p += record) {
    for (uint64_t j = 0; j + 1 < record; ++j) {
      d.images.push_back(static_cast<float>(p[j]) / pixel_max);
    }
    if (p[record - 1] >= classes) {
      return bad(absl::StrCat("example ", i, " has label ",
                              int{p[record - 1]}, " >= ", classes));
    }
    d.labels.push_back(p[record - 1]);
  }
  return d;
}

absl::Status WriteDigitsFile(const Dataset& data, int pixel_max,
                             const std::string& path) {
  std::string out(kMagic, sizeof(kMagic));
  for (int64_t v : {data.size(), data.rows, data.cols, data.num_classes,
                    int64_t{pixel_max}}) {
    AppendU32(&out, static_cast<uint32_t>(v));
  }
  const int64_t f = data.features();
  for (int64_t i = 0; i < data.size(); ++i) {
    for (int64_t j = 0; j < f; ++j) {
      long q = std::lround(data.images[i * f + j] * pixel_max);
      out.push_back(static_cast<char>(std::clamp<long>(q, 0, pixel_max)));
    }
    out.push_back(static_cast<char>(data.labels[i]));
  }
  std::ofstream file(path, std::ios::binary);
  file << out;
  if (!file.good()) {
    return absl::UnavailableError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

BatchIterator::BatchIterator(const Dataset* data, int64_t batch, uint64_t seed)
    : data_(data), batch_(batch), state_(seed), order_(data->size()) {
  std::iota(order_.begin(), order_.end(), 0);
  Shuffle();
}

void BatchIterator::Shuffle() {  // Fisher-Yates
  for (int64_t i = static_cast<int64_t>(order_.size()) - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(NextRandom(&state_) % (i + 1));
    std::swap(order_[i], order_[j]);
  }
}

absl::StatusOr<Batch> BatchIterator::Next() {
  const int64_t f = data_->features();
  absl::StatusOr<TensorShape> shape = TensorShape::Build({batch_, f});
  if (!shape.ok()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a batch of ", batch_, " examples of ", f,
        " features is too large: ", shape.status().message()));
  }
  auto allocate = [this](const char* part, DataType dtype,
                         const TensorShape& shape) -> absl::StatusOr<Tensor> {
    absl::StatusOr<Tensor> t = Tensor::Allocate(CpuAllocator(), dtype, shape);
    if (t.ok()) return t;
    return absl::ResourceExhaustedError(absl::StrCat(
        part, " of a batch of ", batch_, " examples: ", t.status().message()));
  };
  Batch b;
  WEFT_ASSIGN_OR_RETURN(b.images, allocate("images", DT_FLOAT, *shape));
  WEFT_ASSIGN_OR_RETURN(b.labels,
                        allocate("labels", DT_INT64, TensorShape({batch_})));
  float* images = b.images.flat<float>().data();
  int64_t* labels = b.labels.flat<int64_t>().data();
  for (int64_t i = 0; i < batch_; ++i) {
    if (pos_ == static_cast<int64_t>(order_.size())) {
      pos_ = 0;
      ++epoch_;
      Shuffle();
    }
    const int64_t e = order_[pos_++];
    std::memcpy(images + i * f, &data_->images[e * f], f * sizeof(float));
    labels[i] = data_->labels[e];
  }
  return b;
}

}  // namespace weft
