#include "tools/graph_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace weft {
namespace {

// Text format is printable ASCII or UTF-8 text; binary protos almost always
// contain control bytes (tags, lengths) early on.
bool LooksLikeText(const std::string& bytes) {
  const size_t n = std::min<size_t>(bytes.size(), 4096);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = bytes[i];
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
  }
  return true;
}

class CollectFirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (message_.empty()) {
      message_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ",
                              message);
    }
  }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                             int64_t max_bytes) {
  // Opened without blocking (a FIFO with no writer would wait forever), then
  // checked on the descriptor, so the file checked is the file read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(
        "cannot open '", path, "': ", std::strerror(errno),
        " (does the file exist?)"));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return absl::DataLossError(
        absl::StrCat("cannot stat '", path, "': ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "' is not a regular file (",
        S_ISDIR(st.st_mode)    ? "a directory"
        : S_ISFIFO(st.st_mode) ? "a pipe"
        : S_ISCHR(st.st_mode)  ? "a character device"
                               : "not a plain file",
        "); give the path of a file"));
  }
  if (st.st_size > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "'", path, "' has ", st.st_size, " bytes, more than the limit of ",
        max_bytes, " (raise it with --max-input-bytes)"));
  }
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, &out[done], out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::DataLossError(absl::StrCat("error reading '", path,
                                              "': ", std::strerror(errno)));
    }
    if (n == 0) break;  // shrank while read
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

absl::StatusOr<tensorflow::GraphDef> ParseGraphDef(const std::string& bytes,
                                                   const std::string& path) {
  tensorflow::GraphDef graph;
  if (bytes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is empty, not a GraphDef"));
  }
  if (LooksLikeText(bytes)) {
    google::protobuf::TextFormat::Parser parser;
    CollectFirstError errors;
    parser.RecordErrorsTo(&errors);
    if (parser.ParseFromString(bytes, &graph)) return graph;
    // Printable bytes can still be a binary GraphDef (a graph of one node
    // with a short printable name is); the text error is the one to report
    // when neither parse works.
    graph.Clear();
    if (graph.ParseFromString(bytes)) return graph;
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a valid text GraphDef: ",
                     errors.message()));
  }
  if (!graph.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "' is not a valid binary GraphDef (", bytes.size(),
        " bytes; the protobuf decoder rejected them: truncated or not a "
        "GraphDef)"));
  }
  return graph;
}

absl::StatusOr<tensorflow::GraphDef> ReadGraphDefFile(const std::string& path,
                                                      int64_t max_bytes) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path, max_bytes);
  if (!bytes.ok()) return bytes.status();
  return ParseGraphDef(*bytes, path);
}

}  // namespace weft
