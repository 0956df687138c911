// dump_op_defs: prints every op Weft registers as a text-format
// tensorflow.OpList, sorted by name. Used by //tests/ops:op_def_compat_test to
// compare Weft's OpDefs with TensorFlow's; handy for a quick look too:
//
//   bazel run //ops/testing:dump_op_defs | grep -A20 'name: "ConcatV2"'
//
// Exits 1 (after printing the error to stderr) if any op failed to register.
#include <google/protobuf/text_format.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "ops/framework/op_registry.h"
#include "proto/op_def.pb.h"
#include "runtime/core/status.h"

int main() {
  const weft::OpRegistry& registry = weft::GlobalOpRegistry();
  if (!registry.status().ok()) {
    std::cerr << "dump_op_defs: op registration failed: "
              << weft::StatusToString(registry.status()) << "\n";
    return 1;
  }
  tensorflow::OpList list;
  for (const std::string& name : registry.OpNames()) {
    *list.add_op() = *registry.LookUpOpDef(name);
  }
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(list, &text)) {
    std::cerr << "dump_op_defs: could not print the OpList\n";
    return 1;
  }
  std::cout << text;
  return std::cout.good() ? 0 : 1;
}
