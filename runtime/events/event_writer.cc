#include "runtime/events/event_writer.h"

#include <unistd.h>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "proto/summary.pb.h"
#include "runtime/checkpoint/coding.h"
#include "runtime/checkpoint/crc32c.h"
#include "runtime/checkpoint/file_util.h"

namespace weft {
namespace {

double Now() { return absl::ToUnixMicros(absl::Now()) / 1e6; }

}  // namespace

absl::StatusOr<std::unique_ptr<EventWriter>> EventWriter::Create(const std::string& dir) {
  if (absl::Status s = CreateDirectories(dir); !s.ok()) return s;
  static std::atomic<int> counter{0};
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  const std::string path = absl::StrFormat(
      "%s/events.out.tfevents.%010d.%s.%d.%d.v2", dir,
      static_cast<int64_t>(absl::ToUnixSeconds(absl::Now())), host,
      static_cast<int>(getpid()), counter++);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return FileError("cannot create", path);
  std::unique_ptr<EventWriter> w(new EventWriter(path, f));
  tensorflow::Event first;
  first.set_wall_time(static_cast<double>(absl::ToUnixSeconds(absl::Now())));
  first.set_file_version("brain.Event:2");
  first.mutable_source_metadata()->set_writer("weft");
  if (absl::Status s = w->Write(first); !s.ok()) return s;
  return w;
}

EventWriter::~EventWriter() { std::fclose(file_); }

absl::Status EventWriter::Write(const tensorflow::Event& event) {
  const std::string data = event.SerializeAsString();
  std::string record;
  coding::PutFixed(&record, data.size(), 8);
  coding::PutFixed(&record, MaskCrc(Crc32c(record.data(), 8)), 4);
  record += data;
  coding::PutFixed(&record, MaskCrc(Crc32c(data.data(), data.size())), 4);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0) {
    return FileError("cannot write", path_);
  }
  return absl::OkStatus();
}

absl::Status EventWriter::WriteScalars(
    int64_t step, const std::vector<std::pair<std::string, double>>& scalars) {
  tensorflow::Event e;
  e.set_wall_time(Now());
  e.set_step(step);
  for (const auto& [tag, value] : scalars) {
    tensorflow::Summary::Value* v = e.mutable_summary()->add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
  }
  return Write(e);
}

}  // namespace weft
