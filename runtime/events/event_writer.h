// TensorBoard event files: DIR/events.out.tfevents.<unix s>.<host>.<pid>.<n>.v2,
// TFRecords (length, masked CRC of the length, data, masked CRC of the
// data) of Event protos, the first naming the file version, then one
// Event per step with its scalars as simple_value, which every TensorBoard
// reader loads (doc/event_format.md). Each record is flushed when written, so a crashed run's file
// ends at a whole record and TensorBoard shows everything before it.
//
//   WEFT_ASSIGN_OR_RETURN(auto w, EventWriter::Create("/logs/run1"));
//   WEFT_RETURN_IF_ERROR(w->WriteScalars(step, {{"loss", 0.3}, {"accuracy", 0.9}}));
//
// Thread safety: one thread per writer.
#ifndef WEFT_RUNTIME_EVENTS_EVENT_WRITER_H_
#define WEFT_RUNTIME_EVENTS_EVENT_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tensorflow {
class Event;
}

namespace weft {

class EventWriter {
 public:
  // Creates `dir` if needed and opens a new event file there.
  static absl::StatusOr<std::unique_ptr<EventWriter>> Create(const std::string& dir);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  absl::Status WriteScalars(int64_t step,
                            const std::vector<std::pair<std::string, double>>& scalars);
  absl::Status Write(const tensorflow::Event& event);
  const std::string& path() const { return path_; }

 private:
  EventWriter(std::string path, FILE* file) : path_(std::move(path)), file_(file) {}
  const std::string path_;
  FILE* file_;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_EVENTS_EVENT_WRITER_H_
