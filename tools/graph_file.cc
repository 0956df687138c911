#include "tools/graph_file.h"

#include <fstream>
#include <sstream>

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

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot open '", path, "' (does the file exist?)"));
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(absl::StrCat("error reading '", path, "'"));
  }
  return out.str();
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

absl::StatusOr<tensorflow::GraphDef> ReadGraphDefFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status();
  return ParseGraphDef(*bytes, path);
}

}  // namespace weft
