// Fuzz target: structured graphs (tests/fuzz/random_graph.h) created and run
// in a local session, as `weft run` would, under a step deadline and a
// session memory limit, so that a kernel which trusts a size, an axis or an
// index from the graph shows up as a crash and a graph that asks for the
// host's memory as a clean RESOURCE_EXHAUSTED. The deadline also bounds
// graphs that wait (a Placeholder that is never fed fails at once; a kernel
// that loops without end leaves its step running and libFuzzer's -timeout
// reports the input).
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/session.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/random_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const weft::fuzz::RandomGraph g = weft::fuzz::GraphFromBytes(data, size);
  weft::SessionOptions options;
  options.memory_limit_bytes = int64_t{64} << 20;
  options.config.set_inter_op_parallelism_threads(1);
  options.config.set_intra_op_parallelism_threads(1);
  std::unique_ptr<weft::Session> session = weft::NewLocalSession(options);
  absl::Status s = session->Create(g.graph);
  weft::fuzz::ExpectClean(s, "Session::Create");
  if (s.ok()) {
    tensorflow::RunOptions run_options;
    run_options.set_timeout_in_ms(2000);
    std::vector<weft::Tensor> outputs;
    // Twice: state (variables, stacks) carries over to the second step.
    for (int step = 0; step < 2; ++step) {
      s = session->Run(run_options, {}, g.fetches, g.targets, &outputs, nullptr);
      weft::fuzz::ExpectClean(s, "Session::Run");
      if (s.ok()) {
        for (const weft::Tensor& t : outputs) (void)t.DebugString();
      }
    }
  }
  // WEFT_FUZZ_VERBOSE=1: one line per input, to see how deep inputs get.
  static const bool verbose = std::getenv("WEFT_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    std::fprintf(stderr, "%zu ops -> %s\n", g.targets.size(),
                 s.ToString().substr(0, 160).c_str());
  }
  weft::fuzz::ExpectClean(session->Close(), "Session::Close");
  return 0;
}
