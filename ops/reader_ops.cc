// TensorFlow 1.x's readers, with TensorFlow's OpDefs: the V2 (resource
// handle) forms TensorFlow 2.x writes for tf.compat.v1.TFRecordReader and
// friends, the verbs on them, and ReadFile/WriteFile. Kernels:
// ops/cpu/reader_kernels.cc, ops/cpu/file_io_kernels.cc.
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

OpDefBuilder ReaderDef(const char* name) {
  OpDefBuilder b(name);
  b.Output("reader_handle: resource")
      .Attr("container: string = ''")
      .Attr("shared_name: string = ''")
      .SetIsStateful();
  return b;
}

absl::Status TwoVectors(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));
  WEFT_RETURN_IF_ERROR(c->WithRank(2, 0));
  c->set_output(0, PartialShape({-1}));
  c->set_output(1, PartialShape({-1}));
  return absl::OkStatus();
}

}  // namespace

void RegisterReaderOps(OpRegistry* r) {
  r->Register(ReaderDef("TFRecordReaderV2").Attr("compression_type: string = ''"),
              ScalarShape);
  r->Register(ReaderDef("WholeFileReaderV2"), ScalarShape);
  r->Register(ReaderDef("TextLineReaderV2").Attr("skip_header_lines: int = 0"),
              ScalarShape);
  r->Register(ReaderDef("FixedLengthRecordReaderV2")
                  .Attr("header_bytes: int = 0")
                  .Attr("record_bytes: int")
                  .Attr("footer_bytes: int = 0")
                  .Attr("hop_bytes: int = 0")
                  .Attr("encoding: string = ''"),
              ScalarShape);
  r->Register(ReaderDef("IdentityReaderV2"), ScalarShape);
  r->Register(OpDefBuilder("ReaderReadV2")
                  .Input("reader_handle: resource")
                  .Input("queue_handle: resource")
                  .Output("key: string")
                  .Output("value: string")
                  .SetIsStateful(),
              [](InferenceContext* c) {
                WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
                WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));
                c->set_output(0, PartialShape({}));
                c->set_output(1, PartialShape({}));
                return absl::OkStatus();
              });
  r->Register(OpDefBuilder("ReaderReadUpToV2")
                  .Input("reader_handle: resource")
                  .Input("queue_handle: resource")
                  .Input("num_records: int64")
                  .Output("keys: string")
                  .Output("values: string")
                  .SetIsStateful(),
              TwoVectors);
  r->Register(OpDefBuilder("ReaderNumRecordsProducedV2")
                  .Input("reader_handle: resource")
                  .Output("records_produced: int64")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("ReaderNumWorkUnitsCompletedV2")
                  .Input("reader_handle: resource")
                  .Output("units_completed: int64")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("ReaderResetV2").Input("reader_handle: resource").SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("ReaderSerializeStateV2")
                  .Input("reader_handle: resource")
                  .Output("state: string")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("ReaderRestoreStateV2")
                  .Input("reader_handle: resource")
                  .Input("state: string")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("ReadFile").Input("filename: string").Output("contents: string"),
              ScalarShape);
  r->Register(OpDefBuilder("WriteFile")
                  .Input("filename: string")
                  .Input("contents: string")
                  .SetIsStateful(),
              UnknownShape);
}

}  // namespace weft
