// Small graphs decoded from fuzzer bytes, for the targets that exercise shape
// inference and kernels (tests/fuzz/shape_inference_fuzzer.cc,
// tests/fuzz/session_fuzzer.cc).
//
// Random bytes almost never parse as a GraphDef that gets past validation,
// so these targets read choices instead (tests/fuzz/fuzz_input.h): one to
// four nodes of registered ops, each attr drawn for its OpDef kind (types
// from the allowed list, integers from the edge values that break narrowing
// and bounds checks, shapes, tensors), and each input either an earlier
// node's output or a fresh Const of the dtype the op expects, with a small
// shape and values that make sense as sizes, axes and indices. Most such
// graphs validate, so the fuzzer spends its time in shape functions and
// kernels, where the graph's numbers are used.
#ifndef WEFT_TESTS_FUZZ_RANDOM_GRAPH_H_
#define WEFT_TESTS_FUZZ_RANDOM_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/graph.pb.h"

namespace weft::fuzz {

struct RandomGraph {
  tensorflow::GraphDef graph;
  // Output 0 of every op node that has outputs, and every op node as a
  // target (so that stateful ops without outputs run too).
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

// Deterministic: the same bytes give the same graph. Ops whose names start
// with '_' (rendezvous and function-call plumbing, which wait for peers) are
// never chosen.
RandomGraph GraphFromBytes(const uint8_t* data, size_t size);

}  // namespace weft::fuzz

#endif  // WEFT_TESTS_FUZZ_RANDOM_GRAPH_H_
