#include "tools/step_feeds.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/models/datasets.h"
#include "runtime/core/status.h"
#include "tools/graph_file.h"
#include "tools/npy.h"
#include "tools/train_common.h"

namespace weft {
namespace {

// Worker `index` of `shards`: the examples i with i mod shards == index
// (shards 0: one process, not a worker of a job).
Dataset Shard(const Dataset& all, int64_t shards, int64_t index) {
  if (shards <= 0) return all;
  Dataset d = all;
  d.name = absl::StrCat(all.name, " shard ", index, " of ", shards);
  d.images.clear();
  d.labels.clear();
  const int64_t f = all.features();
  for (int64_t i = index; i < all.size(); i += shards) {
    d.images.insert(d.images.end(), all.images.begin() + i * f,
                    all.images.begin() + (i + 1) * f);
    d.labels.push_back(all.labels[i]);
  }
  return d;
}

class DatasetStepFeeds : public StepFeeds {
 public:
  DatasetStepFeeds(Dataset data, int64_t batch, uint64_t seed)
      : data_(std::move(data)), batch_(batch), batches_(&data_, batch, seed) {}
  int64_t batch() const override { return batch_; }
  std::string Describe() const override {
    return absl::StrCat(data_.name, " data (", data_.size(), " examples)");
  }
  absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> Next() override {
    WEFT_ASSIGN_OR_RETURN(Batch b, batches_.Next());
    return std::vector<std::pair<std::string, Tensor>>{
        {"images", std::move(b.images)}, {"labels", std::move(b.labels)}};
  }

 private:
  const Dataset data_;
  const int64_t batch_;
  BatchIterator batches_;  // points into data_
};

// One input's examples: a file's rows, or a synthetic stream.
struct InputSource {
  ModelInput input;
  std::vector<int64_t> example_dims;  // the shape after the batch dimension
  Tensor rows;                        // from a file; uninitialised: synthetic
  uint64_t seed = 0;
};

// Bytes of one example of `s`.
int64_t ExampleBytes(const InputSource& s) {
  int64_t n = static_cast<int64_t>(DataTypeSize(s.input.dtype));
  for (int64_t d : s.example_dims) n *= d;
  return n;
}

template <typename T>
void FillSynthetic(uint64_t seed, int64_t example, int64_t classes, T* out,
                   int64_t n) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(example));
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      out[i] = static_cast<T>(std::uniform_real_distribution<double>(0, 1)(rng));
    } else if constexpr (std::is_same_v<T, bool>) {
      out[i] = (rng() & 1) != 0;
    } else {
      out[i] = static_cast<T>(rng() % static_cast<uint64_t>(classes));
    }
  }
}

class InputStepFeeds : public StepFeeds {
 public:
  InputStepFeeds(std::vector<InputSource> sources, const FeedOptions& o,
                 int64_t batch)
      : sources_(std::move(sources)), o_(o), batch_(batch) {}
  int64_t batch() const override { return batch_; }
  std::string Describe() const override {
    std::vector<std::string> parts;
    for (const InputSource& s : sources_) {
      parts.push_back(s.rows.IsInitialized()
                          ? absl::StrCat(s.input.name, " from ",
                                         o_.input_files.at(s.input.name), " (",
                                         s.rows.dim_size(0), " examples)")
                          : absl::StrCat(s.input.name, " synthetic"));
    }
    return absl::StrJoin(parts, ", ");
  }
  absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> Next() override {
    // This worker's slice of the global batch of step step_.
    const int64_t first = (step_ * std::max(o_.shards, 1) + o_.shard) * batch_;
    ++step_;
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const InputSource& s : sources_) {
      std::vector<int64_t> dims = {batch_};
      dims.insert(dims.end(), s.example_dims.begin(), s.example_dims.end());
      Tensor t(s.input.dtype, TensorShape(dims));
      const int64_t bytes = ExampleBytes(s);
      char* out = static_cast<char*>(t.raw_data());
      for (int64_t i = 0; i < batch_; ++i) {
        const int64_t example = first + i;
        if (s.rows.IsInitialized()) {
          const int64_t row = example % s.rows.dim_size(0);
          std::memcpy(out + i * bytes,
                      static_cast<const char*>(s.rows.raw_data()) + row * bytes, bytes);
          continue;
        }
        const int64_t n = bytes / static_cast<int64_t>(DataTypeSize(s.input.dtype));
        void* at = out + i * bytes;
        switch (s.input.dtype) {
          case DT_FLOAT: FillSynthetic(s.seed, example, 0, static_cast<float*>(at), n); break;
          case DT_DOUBLE: FillSynthetic(s.seed, example, 0, static_cast<double*>(at), n); break;
          case DT_INT32:
            FillSynthetic(s.seed, example, o_.synthetic_classes, static_cast<int32_t*>(at), n);
            break;
          case DT_INT64:
            FillSynthetic(s.seed, example, o_.synthetic_classes, static_cast<int64_t*>(at), n);
            break;
          case DT_UINT8:
            FillSynthetic(s.seed, example, o_.synthetic_classes, static_cast<uint8_t*>(at), n);
            break;
          case DT_BOOL: FillSynthetic(s.seed, example, 0, static_cast<bool*>(at), n); break;
          default:
            return absl::InternalError("unchecked synthetic dtype");  // checked in InputFeeds
        }
      }
      feeds.emplace_back(s.input.name, std::move(t));
    }
    return feeds;
  }

 private:
  const std::vector<InputSource> sources_;
  const FeedOptions o_;
  const int64_t batch_;
  int64_t step_ = 0;
};

bool CanSynthesize(DataType t) {
  return t == DT_FLOAT || t == DT_DOUBLE || t == DT_INT32 || t == DT_INT64 ||
         t == DT_UINT8 || t == DT_BOOL;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StepFeeds>> DatasetFeeds(
    const tensorflow::GraphDef& graph, const std::string& source,
    const FeedOptions& o) {
  WEFT_ASSIGN_OR_RETURN(GraphInfo info, InspectGraph(graph, source));
  WEFT_ASSIGN_OR_RETURN(Dataset all, LoadData(o.data, info.features, o.seed));
  Dataset data = Shard(all, o.shards, o.shard);
  // A worker's shard must hold a batch; one process's batches draw from the
  // whole set as BatchIterator does (datasets.h), a batch too large to
  // allocate failing there, naming its shape.
  if (o.shards > 0 && data.size() < info.batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker shard ", o.shard, " has ", data.size(),
        " examples, fewer than --batch ", info.batch));
  }
  return std::make_unique<DatasetStepFeeds>(std::move(data), info.batch,
                                            o.seed + o.shard);
}

absl::StatusOr<std::unique_ptr<StepFeeds>> InputFeeds(
    const std::vector<ModelInput>& inputs, const FeedOptions& o) {
  for (const auto& [name, path] : o.input_files) {
    bool known = false;
    for (const ModelInput& in : inputs) known |= in.name == name;
    if (!known) {
      std::vector<std::string> names;
      for (const ModelInput& in : inputs) names.push_back(in.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "--input ", name, "=", path, ": the loss depends on no placeholder '",
          name, "' (its inputs: ", names.empty() ? "none" : absl::StrJoin(names, ", "),
          ")"));
    }
  }
  // The batch: --batch, or the placeholders' static first dimension.
  int64_t batch = o.batch;
  for (const ModelInput& in : inputs) {
    if (!in.known_rank || in.shape.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", in.name, "' has ", in.known_rank ? "no batch dimension (a scalar)"
                                                      : "an unknown rank",
          ": export the model with its input shapes fixed"));
    }
    const int64_t first = in.shape[0];
    if (first > 0 && batch > 0 && first != batch) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", in.name, "' takes batches of ", first, ", not ",
          o.batch > 0 ? "--batch " : "", batch,
          o.batch > 0 ? "" : " as another input does"));
    }
    if (first > 0) batch = first;
  }
  if (batch <= 0) {
    return absl::InvalidArgumentError(
        "the inputs' batch dimension is unknown: give --batch");
  }
  std::vector<InputSource> sources;
  uint64_t seed = o.seed;
  for (const ModelInput& in : inputs) {
    InputSource s;
    s.input = in;
    s.seed = seed++;
    s.example_dims.assign(in.shape.begin() + 1, in.shape.end());
    auto file = o.input_files.find(in.name);
    if (file != o.input_files.end()) {
      WEFT_ASSIGN_OR_RETURN(std::string bytes,
                            ReadFileToString(file->second, o.max_file_bytes));
      WEFT_ASSIGN_OR_RETURN(s.rows, ParseNpy(bytes, file->second));
      const std::string what = absl::StrCat("--input ", in.name, "=", file->second);
      if (s.rows.dtype() != in.dtype) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": the file holds ", DataTypeString(s.rows.dtype()),
            ", the placeholder takes ", DataTypeString(in.dtype)));
      }
      if (DataTypeIsObject(in.dtype)) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": inputs of ", DataTypeString(in.dtype), " are not supported"));
      }
      if (s.rows.dims() != static_cast<int>(in.shape.size()) || s.rows.dim_size(0) < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": the file's shape ", s.rows.shape().DebugString(),
            " must be [examples, ...] with at least one example, of rank ",
            in.shape.size()));
      }
      for (size_t d = 1; d < in.shape.size(); ++d) {
        if (in.shape[d] >= 0 && s.rows.dim_size(static_cast<int>(d)) != in.shape[d]) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, ": the file's examples are ", s.rows.shape().DebugString(),
              " with the first axis counting them; dimension ", d,
              " must be ", in.shape[d]));
        }
        s.example_dims[d - 1] = s.rows.dim_size(static_cast<int>(d));
      }
    } else {
      for (int64_t d : s.example_dims) {
        if (d < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "input '", in.name, "' has an unknown dimension: give its data "
              "with --input ", in.name, "=FILE.npy"));
        }
      }
      if (!CanSynthesize(in.dtype)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", in.name, "' is ", DataTypeString(in.dtype),
            ", which has no synthetic data: give it with --input ", in.name,
            "=FILE.npy"));
      }
    }
    if (ExampleBytes(s) > (int64_t{1} << 30) / batch) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", in.name, "': a batch of ", batch, " would exceed 1 GiB"));
    }
    sources.push_back(std::move(s));
  }
  return std::make_unique<InputStepFeeds>(std::move(sources), o, batch);
}

absl::StatusOr<std::unique_ptr<StepFeeds>> ModelFeeds(const ModelChoice& choice,
                                                      const FeedOptions& options) {
  if (choice.forward == nullptr) {
    return absl::InternalError("ModelFeeds: not a graph the user brought");
  }
  WEFT_ASSIGN_OR_RETURN(ImportedTrainingGraph g,
                        InspectForwardGraph(*choice.forward, choice.imported));
  return InputFeeds(g.inputs, options);
}

absl::Status ParseInputFlag(const std::string& flag,
                            std::map<std::string, std::string>* files) {
  const size_t eq = flag.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--input takes NAME=FILE.npy (a placeholder and its examples), not '",
        flag, "'"));
  }
  if (!files->emplace(flag.substr(0, eq), flag.substr(eq + 1)).second) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input ", flag.substr(0, eq), " is given twice"));
  }
  return absl::OkStatus();
}

}  // namespace weft
