// Builds a training graph (model, optimizer, variable kind from argv),
// writes its GraphDef to GRAPH_OUT, trains STEPS steps in Weft on seeded
// synthetic batches and writes, per step, the fed batch and the loss and
// accuracy Weft computed (before that step's update) to VALUES_OUT:
//   images STEP v0 v1 ...   labels STEP l0 l1 ...
//   loss STEP value         accuracy STEP value
// tf_training_compare_test.py replays the batches in TensorFlow.
// Two optional arguments, MODE K, build the graph over K CPU devices (and
// run it in a session with K): MODE "in-graph" (K towers, parameters on
// CPU:0) or "model-parallel" (layers over CPU:0..K-1); tf_parallel_compare_test.py
// replays those.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "graph/builder/optimizers.h"
#include "graph/models/datasets.h"
#include "graph/models/models.h"
#include "runtime/session.h"

namespace weft {
namespace {

int Main(int argc, char** argv) {
  if (argc != 7 && argc != 9) {
    std::cerr << "usage: dump_training_graph MODEL OPTIMIZER ref|resource "
                 "STEPS GRAPH_OUT VALUES_OUT [in-graph|model-parallel K]\n";
    return 2;
  }
  const std::string mode = argc == 9 ? argv[7] : "single";
  const int devices = argc == 9 ? std::atoi(argv[8]) : 1;
  std::vector<std::string> device_names;
  for (int i = 0; i < devices; ++i) {
    device_names.push_back("/device:CPU:" + std::to_string(i));
  }
  ModelKind kind;
  VariableKind vars;
  ModelOptions options;
  options.batch = 8;
  options.hidden = 16;
  absl::Status st = ParseModelKind(argv[1], &kind);
  if (st.ok()) st = ParseVariableKind(argv[3], &vars);
  options.variable_kind = vars;
  const float lr = std::string(argv[2]) == "adam" ? 0.01f : 0.1f;
  auto opt = NewOptimizerByName(argv[2], lr);
  if (st.ok()) st = opt.status();
  const int steps = std::atoi(argv[4]);
  if (mode == "model-parallel") options.layer_devices = device_names;
  Scope root = Scope::NewRoot();
  absl::StatusOr<TrainingGraph> g =
      !st.ok() ? absl::StatusOr<TrainingGraph>(st)
      : mode == "in-graph"
          ? BuildReplicatedTrainingGraph(root, kind, options, opt->get(),
                                         device_names, device_names[0])
          : BuildTrainingGraph(root, kind, options, opt->get());
  if (!g.ok()) {
    std::cerr << "error: " << g.status() << "\n";
    return 1;
  }
  tensorflow::GraphDef graph = root.graph();
  std::ofstream(argv[5], std::ios::binary) << graph.SerializeAsString();

  SessionOptions session_options;
  (*session_options.config.mutable_device_count())["CPU"] = devices;
  std::unique_ptr<Session> session = NewLocalSession(session_options);
  std::vector<Tensor> out;
  st = session->Create(graph);
  if (st.ok()) st = session->Run({}, {}, {"init"}, &out);
  SyntheticOptions data_options;
  data_options.examples = 256;
  Dataset data = MakeSyntheticDataset(data_options);
  BatchIterator batches(&data, options.batch, 3);
  std::ofstream values(argv[6]);
  for (int step = 0; st.ok() && step < steps; ++step) {
    Batch b = *batches.Next();
    st = session->Run({{"images", b.images}, {"labels", b.labels}},
                      {"loss", "accuracy"}, {"train_op"}, &out);
    if (!st.ok()) break;
    values << "images " << step;
    for (float v : b.images.flat<float>()) values << " " << v;
    values << "\nlabels " << step;
    for (int64_t v : b.labels.flat<int64_t>()) values << " " << v;
    values.precision(9);
    values << "\nloss " << step << " " << out[0].flat<float>()[0]
           << "\naccuracy " << step << " " << out[1].flat<float>()[0] << "\n";
  }
  if (!st.ok()) {
    std::cerr << "error: " << st << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace weft

int main(int argc, char** argv) { return weft::Main(argc, argv); }
