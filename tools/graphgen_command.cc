// weft graphgen: write a ready-to-train GraphDef for one of the built-in
// models (graph/models/models.h names its nodes).
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/model_flags.h"

namespace weft {
namespace {

std::string Usage() {
  return absl::StrCat(
      "usage: weft graphgen --model mlp|cnn|transformer --out FILE\n"
      "                     [--batch B] [--optimizer O] [--lr X] ...\n"
      "\n"
      "  --out FILE       where to write the GraphDef: text if FILE ends in\n"
      "                   .pbtxt, binary otherwise\n",
      kModelFlagsUsage,
      "\n"
      "The graph feeds 'images' (float [B, 64]) and 'labels' (int64 [B]),\n"
      "fetches 'loss' and 'accuracy'; run 'init' once, then 'train_op' per\n"
      "step (it also increments 'global_step'). Train it with\n"
      "'weft train --graph FILE'.\n");
}

}  // namespace

int GraphgenCommand(int argc, char** argv) {
  const std::string usage = Usage();
  std::map<std::string, FlagKind> flags = {{"out", kValue}, {"help", kSwitch}};
  AddModelFlags(&flags);
  CommandLine cl(flags);
  if (std::optional<int> rc = StartCommand(argc, argv, usage.c_str(), {}, &cl)) {
    return *rc;
  }
  absl::StatusOr<ModelChoice> choice = ParseModelFlags(cl);
  if (!choice.ok()) return ReportUsage(choice.status(), usage.c_str());
  if (IsBetweenGraph(*choice)) {
    return ReportUsage(
        absl::InvalidArgumentError(absl::StrCat(
            "--mode ", choice->mode, " is for weft train --cluster (every "
            "worker builds its own copy of the graph)")),
        usage.c_str());
  }
  if (!cl.Has("out")) {
    return ReportUsage(absl::InvalidArgumentError("--out is required"),
                       usage.c_str());
  }
  absl::StatusOr<tensorflow::GraphDef> graph = BuildModelGraph(*choice);
  if (!graph.ok()) return ReportError(graph.status());
  const std::string out = cl.Get("out");
  std::string bytes;
  if (absl::EndsWith(out, ".pbtxt")) {
    google::protobuf::TextFormat::PrintToString(*graph, &bytes);
  } else {
    graph->SerializeToString(&bytes);
  }
  std::ofstream file(out, std::ios::binary);
  file << bytes;
  file.close();
  if (!file) {
    return ReportError(absl::UnavailableError(
        absl::StrCat("cannot write '", out, "': check the folder exists and is writable")));
  }
  std::printf("wrote %s: %d nodes (%s)\n", out.c_str(), graph->node_size(),
              DescribeModel(*choice).c_str());
  return kExitOk;
}

}  // namespace weft
