#include "distributed/training/checkpoint_dir.h"


#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "runtime/checkpoint/file_util.h"
#include "runtime/checkpoint/tensor_bundle.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

constexpr int kKeep = 5;

std::string StatePath(const std::string& dir) { return dir + "/checkpoint"; }

// The quoted paths of `field` lines in a CheckpointState text.
std::vector<std::string> Paths(const std::string& text, absl::string_view field) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, field) || !absl::ConsumePrefix(&line, ":")) continue;
    line = absl::StripAsciiWhitespace(line);
    if (line.size() >= 2 && line.front() == '"' && line.back() == '"') {
      out.emplace_back(line.substr(1, line.size() - 2));
    }
  }
  return out;
}

std::string Resolve(const std::string& dir, const std::string& path) {
  return absl::StartsWith(path, "/") ? path : dir + "/" + path;
}

absl::Status WriteState(const std::string& dir, const std::vector<std::string>& all) {
  std::string text = absl::StrCat("model_checkpoint_path: \"", all.back(), "\"\n");
  for (const std::string& p : all) {
    absl::StrAppend(&text, "all_model_checkpoint_paths: \"", p, "\"\n");
  }
  return WriteFileAtomically(StatePath(dir), text);
}

// Deletes the files of the checkpoint at `prefix` (index first, so no
// half-deleted checkpoint looks whole).
void Remove(const std::string& prefix) {
  auto reader = BundleReader::Open(prefix);
  const int shards = reader.ok() ? (*reader)->header().num_shards() : 0;
  std::remove(IndexFilename(prefix).c_str());
  for (int i = 0; i < shards; ++i) std::remove(DataFilename(prefix, i, shards).c_str());
}

}  // namespace

absl::StatusOr<std::optional<std::string>> LatestCheckpoint(const std::string& dir) {
  std::ifstream in(StatePath(dir));
  if (!in) return std::optional<std::string>();
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<std::string> latest = Paths(text.str(), "model_checkpoint_path");
  if (latest.empty()) {
    return absl::DataLossError(absl::StrCat(
        StatePath(dir), " names no model_checkpoint_path: remove it to start afresh"));
  }
  return std::optional<std::string>(Resolve(dir, latest.back()));
}

namespace {

// The global step a checkpoint holds under `tensor`.
absl::StatusOr<int64_t> HeldStep(const std::string& prefix,
                                 const std::string& tensor) {
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader,
                        BundleReader::Open(prefix));
  WEFT_ASSIGN_OR_RETURN(Tensor value, reader->Read(tensor, DT_INT64));
  if (value.NumElements() != 1) {
    return absl::DataLossError(absl::StrCat(
        "checkpoint ", prefix, ": '", tensor, "' is not a scalar"));
  }
  return value.flat<int64_t>()[0];
}

// Renames the files of the checkpoint at `from` to `to`.
absl::Status RenameCheckpoint(const std::string& from, const std::string& to) {
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader,
                        BundleReader::Open(from));
  const int n = reader->header().num_shards();
  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 0; i < n; ++i) {
    files.emplace_back(DataFilename(from, i, n), DataFilename(to, i, n));
  }
  // The index last: a reader finds the checkpoint only once it is whole.
  files.emplace_back(IndexFilename(from), IndexFilename(to));
  for (const auto& [a, b] : files) {
    if (std::rename(a.c_str(), b.c_str()) != 0) {
      return FileError(absl::StrCat("cannot rename ", a, " to"), b);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> SaveCheckpoint(Session* session, const SaverNodes& saver,
                                           const std::string& dir, int64_t step,
                                           const std::string& step_tensor) {
  WEFT_RETURN_IF_ERROR(WithContext(CreateDirectories(dir), "--checkpoint-dir"));
  std::string name = absl::StrCat("model-", step);
  std::string prefix = dir + "/" + name;
  const std::vector<std::string> parts = ShardPrefixes(prefix, saver.num_shards);
  Tensor parts_t(DT_STRING, TensorShape({static_cast<int64_t>(parts.size())}));
  for (size_t i = 0; i < parts.size(); ++i) parts_t.flat<std::string>()[i] = parts[i];
  std::vector<Tensor> out;
  WEFT_RETURN_IF_ERROR(WithContext(
      session->Run({{saver.prefix, Tensor::Scalar<std::string>(prefix)},
                    {saver.parts, parts_t}},
                   {}, {saver.save}, &out),
      absl::StrCat("saving checkpoint ", prefix)));
  if (!step_tensor.empty()) {
    // Other workers may have stepped on between `step` and the save (async
    // training): the checkpoint is named by the step it holds.
    WEFT_ASSIGN_OR_RETURN(const int64_t held, HeldStep(prefix, step_tensor));
    if (held != step) {
      const std::string held_name = absl::StrCat("model-", held);
      const std::string held_prefix = dir + "/" + held_name;
      WEFT_RETURN_IF_ERROR(RenameCheckpoint(prefix, held_prefix));
      name = held_name;
      prefix = held_prefix;
    }
  }
  std::vector<std::string> all;
  std::ifstream in(StatePath(dir));
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    all = Paths(text.str(), "all_model_checkpoint_paths");
  }
  all.erase(std::remove(all.begin(), all.end(), name), all.end());
  all.push_back(name);
  std::vector<std::string> dropped;
  while (static_cast<int>(all.size()) > kKeep) {
    dropped.push_back(all.front());
    all.erase(all.begin());
  }
  WEFT_RETURN_IF_ERROR(WriteState(dir, all));
  for (const std::string& old : dropped) Remove(Resolve(dir, old));
  return prefix;
}

absl::Status RestoreCheckpoint(Session* session, const SaverNodes& saver,
                               const std::string& prefix) {
  std::vector<Tensor> out;
  return WithContext(
      session->Run({{saver.prefix, Tensor::Scalar<std::string>(prefix)}}, {},
                   {saver.restore}, &out),
      absl::StrCat("restoring checkpoint ", prefix));
}

}  // namespace weft
