// The main() of a fuzz target outside --config=fuzz: runs
// LLVMFuzzerTestOneInput once on each file named (directories: each file in
// them, in name order), so the regular build replays every committed corpus
// as a regression test. Arguments starting with '-' (libFuzzer flags) are
// ignored, so one command line works for both builds. Exits 1 when nothing
// was replayed: an empty or missing corpus is a broken test, not a pass.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      std::vector<fs::path> in_dir;
      for (const auto& entry : fs::directory_iterator(argv[i], ec)) {
        if (entry.is_regular_file()) in_dir.push_back(entry.path());
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::is_regular_file(argv[i], ec)) {
      files.emplace_back(argv[i]);
    } else {
      std::fprintf(stderr, "replay: '%s' is neither a file nor a directory\n",
                   argv[i]);
      return 1;
    }
  }
  for (const fs::path& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string data = bytes.str();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()),
                           data.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return files.empty() ? 1 : 0;
}
