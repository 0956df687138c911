// Round trips of the TensorFlow-compatible protos through binary and text
// format, unknown-field preservation, and bytes written by TensorFlow itself.

#include <cstdint>
#include <memory>
#include <string>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "proto/attr_value.pb.h"
#include "proto/config.pb.h"
#include "proto/device_attributes.pb.h"
#include "proto/error_codes.pb.h"
#include "proto/function.pb.h"
#include "proto/graph.pb.h"
#include "proto/named_tensor.pb.h"
#include "proto/node_def.pb.h"
#include "proto/tensor.pb.h"
#include "proto/types.pb.h"

namespace weft {
namespace {

using google::protobuf::TextFormat;
using google::protobuf::UnknownFieldSet;
using google::protobuf::util::MessageDifferencer;

std::string Deterministic(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  EXPECT_TRUE(m.SerializeToCodedStream(&coded));
  coded.Trim();
  return out;
}

// A node carrying an attr of every AttrValue kind.
tensorflow::NodeDef MakeNode() {
  tensorflow::NodeDef n;
  n.set_name("layer/op");
  n.set_op("Fancy");
  n.add_input("a");
  n.add_input("b:1");
  n.add_input("^c");
  n.set_device("/job:worker/replica:0/task:1/device:CPU:0");
  auto& attr = *n.mutable_attr();

  attr["s"].set_s(std::string("bytes\0with nul", 14));
  attr["i"].set_i(-(int64_t{1} << 40));
  attr["f"].set_f(0.25f);
  attr["b"].set_b(true);
  attr["type"].set_type(tensorflow::DT_BFLOAT16);

  auto* shape = attr["shape"].mutable_shape();
  shape->add_dim()->set_size(-1);
  shape->add_dim()->set_size(784);
  attr["unknown_rank"].mutable_shape()->set_unknown_rank(true);

  auto* t = attr["tensor"].mutable_tensor();
  t->set_dtype(tensorflow::DT_FLOAT);
  t->mutable_tensor_shape()->add_dim()->set_size(3);
  t->add_float_val(1.0f);
  t->add_float_val(-2.5f);
  t->add_float_val(1e30f);

  auto* list = attr["list"].mutable_list();
  list->add_s("x");
  list->add_s("");
  list->add_i(7);
  list->add_i(-7);
  list->add_f(3.5f);
  list->add_b(false);
  list->add_b(true);
  list->add_type(tensorflow::DT_INT64);
  list->add_type(tensorflow::DT_FLOAT_REF);
  list->add_shape()->add_dim()->set_size(2);
  auto* lt = list->add_tensor();
  lt->set_dtype(tensorflow::DT_STRING);
  lt->add_string_val("hello");
  list->add_func()->set_name("f0");

  attr["empty_list"].mutable_list();  // set but empty: must stay distinct

  auto* func = attr["func"].mutable_func();
  func->set_name("my_fn");
  (*func->mutable_attr())["T"].set_type(tensorflow::DT_DOUBLE);

  attr["placeholder"].set_placeholder("T");

  n.mutable_experimental_debug_info()->add_original_node_names("orig");
  n.mutable_experimental_type()->set_type_id(tensorflow::TFT_TENSOR);
  return n;
}

tensorflow::GraphDef MakeGraph() {
  tensorflow::GraphDef g;
  *g.add_node() = MakeNode();
  g.mutable_versions()->set_producer(2314);
  g.mutable_versions()->set_min_consumer(0);
  g.mutable_versions()->add_bad_consumers(3);

  auto* fn = g.mutable_library()->add_function();
  fn->mutable_signature()->set_name("my_fn");
  auto* arg = fn->mutable_signature()->add_input_arg();
  arg->set_name("x");
  arg->set_type_attr("T");
  (*fn->mutable_ret())["y"] = "id:output:0";
  (*(*fn->mutable_arg_attr())[0].mutable_attr())["_noinline"].set_b(true);
  (*fn->mutable_resource_arg_unique_id())[1] = 5;
  auto* body = fn->add_node_def();
  body->set_name("id");
  body->set_op("Identity");
  body->add_input("x");
  auto* grad = g.mutable_library()->add_gradient();
  grad->set_function_name("my_fn");
  grad->set_gradient_func("my_fn_grad");

  auto* dbg = g.mutable_debug_info();
  dbg->add_files("model.py");
  auto& frame = (*dbg->mutable_frames_by_id())[42];
  frame.set_file_index(0);
  frame.set_line(17);
  (*dbg->mutable_traces_by_id())[9].add_frame_id(42);
  (*dbg->mutable_name_to_trace_id())["layer/op"] = 9;
  return g;
}

TEST(ProtoRoundTrip, AttrKinds) {
  const auto n = MakeNode();
  const auto& a = n.attr();
  EXPECT_EQ(a.at("s").value_case(), tensorflow::AttrValue::kS);
  EXPECT_EQ(a.at("i").value_case(), tensorflow::AttrValue::kI);
  EXPECT_EQ(a.at("f").value_case(), tensorflow::AttrValue::kF);
  EXPECT_EQ(a.at("b").value_case(), tensorflow::AttrValue::kB);
  EXPECT_EQ(a.at("type").value_case(), tensorflow::AttrValue::kType);
  EXPECT_EQ(a.at("shape").value_case(), tensorflow::AttrValue::kShape);
  EXPECT_EQ(a.at("tensor").value_case(), tensorflow::AttrValue::kTensor);
  EXPECT_EQ(a.at("list").value_case(), tensorflow::AttrValue::kList);
  EXPECT_EQ(a.at("func").value_case(), tensorflow::AttrValue::kFunc);
  EXPECT_EQ(a.at("placeholder").value_case(),
            tensorflow::AttrValue::kPlaceholder);
}

TEST(ProtoRoundTrip, Binary) {
  const auto g = MakeGraph();
  std::string bytes;
  ASSERT_TRUE(g.SerializeToString(&bytes));
  tensorflow::GraphDef back;
  ASSERT_TRUE(back.ParseFromString(bytes));
  EXPECT_TRUE(MessageDifferencer::Equals(g, back))
      << back.DebugString();

  // An empty list attr survives as "list set, zero entries", not "unset".
  const auto& empty = back.node(0).attr().at("empty_list");
  EXPECT_EQ(empty.value_case(), tensorflow::AttrValue::kList);
  EXPECT_EQ(empty.list().i_size(), 0);
  EXPECT_EQ(back.node(0).attr().at("s").s(), std::string("bytes\0with nul", 14));
  EXPECT_TRUE(back.node(0).attr().at("unknown_rank").shape().unknown_rank());
  EXPECT_EQ(back.debug_info().frames_by_id().at(42).line(), 17);
  EXPECT_TRUE(back.debug_info().frames_by_id().at(42).has_file_index());
  EXPECT_EQ(Deterministic(g), Deterministic(back));
}

TEST(ProtoRoundTrip, TextFormat) {
  const auto g = MakeGraph();
  std::string text;
  ASSERT_TRUE(TextFormat::PrintToString(g, &text));
  tensorflow::GraphDef back;
  ASSERT_TRUE(TextFormat::ParseFromString(text, &back)) << text;
  EXPECT_TRUE(MessageDifferencer::Equals(g, back)) << text;
  // Field names in text form are TensorFlow's (pbtxt files interoperate).
  EXPECT_NE(text.find("versions {"), std::string::npos);
  EXPECT_NE(text.find("type: DT_BFLOAT16"), std::string::npos);
  EXPECT_NE(text.find("placeholder: \"T\""), std::string::npos);
}

TEST(ProtoRoundTrip, TextFormatWrittenByTensorFlow) {
  // Shaped like a GraphDef pbtxt written by tf.io.write_graph.
  const char* kText = R"pb(
    node {
      name: "Placeholder"
      op: "Placeholder"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr {
        key: "shape"
        value { shape { dim { size: -1 } dim { size: 784 } } }
      }
    }
    versions { producer: 2314 }
  )pb";
  tensorflow::GraphDef g;
  ASSERT_TRUE(TextFormat::ParseFromString(kText, &g));
  ASSERT_EQ(g.node_size(), 1);
  EXPECT_EQ(g.node(0).attr().at("dtype").type(), tensorflow::DT_FLOAT);
  EXPECT_EQ(g.node(0).attr().at("shape").shape().dim(0).size(), -1);
  EXPECT_EQ(g.versions().producer(), 2314);
}

TEST(ProtoRoundTrip, UnknownFieldsSurvive) {
  // A GraphDef with a NodeDef that carries fields this schema does not know
  // (as if written by a newer TensorFlow), at two nesting levels.
  tensorflow::GraphDef g = MakeGraph();
  auto* node_unknown =
      g.mutable_node(0)->GetReflection()->MutableUnknownFields(g.mutable_node(0));
  node_unknown->AddVarint(1000, 42);
  node_unknown->AddLengthDelimited(1001, "future");
  g.GetReflection()->MutableUnknownFields(&g)->AddFixed64(77, 0x0123456789abcdefULL);

  std::string bytes;
  ASSERT_TRUE(g.SerializeToString(&bytes));
  tensorflow::GraphDef back;
  ASSERT_TRUE(back.ParseFromString(bytes));

  const UnknownFieldSet& top = back.GetReflection()->GetUnknownFields(back);
  ASSERT_EQ(top.field_count(), 1);
  EXPECT_EQ(top.field(0).number(), 77);
  EXPECT_EQ(top.field(0).fixed64(), 0x0123456789abcdefULL);

  const UnknownFieldSet& inner =
      back.node(0).GetReflection()->GetUnknownFields(back.node(0));
  ASSERT_EQ(inner.field_count(), 2);
  EXPECT_EQ(inner.field(0).number(), 1000);
  EXPECT_EQ(inner.field(0).varint(), 42u);
  EXPECT_EQ(inner.field(1).number(), 1001);
  EXPECT_EQ(inner.field(1).length_delimited(), "future");

  // And they are written out again unchanged (deterministic order, since map
  // entries are otherwise emitted in hash order).
  const std::string again = Deterministic(back);
  EXPECT_EQ(again, Deterministic(g));
  EXPECT_NE(again.find("future"), std::string::npos);

  // The known part is unaffected.
  back.mutable_node(0)->GetReflection()->MutableUnknownFields(
      back.mutable_node(0))->Clear();
  back.GetReflection()->MutableUnknownFields(&back)->Clear();
  EXPECT_TRUE(MessageDifferencer::Equals(MakeGraph(), back));
}

TEST(ProtoRoundTrip, BytesWrittenByTensorFlow) {
  // NodeDef serialized (deterministically) by TensorFlow 2.21's Python
  // protobuf: Const "c" with dtype, value (float tensor [1, 2]), _class and
  // an empty list attr.
  static const char kTf[] =
      "\x0a\x01\x63\x12\x05\x43\x6f\x6e\x73\x74\x1a\x01\x78\x1a\x02\x5e\x79\x22"
      "\x0e\x2f\x6a\x6f\x62\x3a\x70\x73\x2f\x74\x61\x73\x6b\x3a\x30\x2a\x14\x0a"
      "\x06\x5f\x63\x6c\x61\x73\x73\x12\x0a\x0a\x08\x12\x06\x6c\x6f\x63\x3a\x40"
      "\x76\x2a\x0b\x0a\x05\x64\x74\x79\x70\x65\x12\x02\x30\x01\x2a\x0b\x0a\x05"
      "\x65\x6d\x70\x74\x79\x12\x02\x0a\x00\x2a\x1d\x0a\x05\x76\x61\x6c\x75\x65"
      "\x12\x14\x42\x12\x08\x01\x12\x04\x12\x02\x08\x02\x2a\x08\x00\x00\x80\x3f"
      "\x00\x00\x00\x40";
  const std::string tf_bytes(kTf, sizeof(kTf) - 1);
  ASSERT_EQ(tf_bytes.size(), 112u);

  tensorflow::NodeDef n;
  ASSERT_TRUE(n.ParseFromString(tf_bytes));
  EXPECT_EQ(n.name(), "c");
  EXPECT_EQ(n.op(), "Const");
  ASSERT_EQ(n.input_size(), 2);
  EXPECT_EQ(n.input(1), "^y");
  EXPECT_EQ(n.device(), "/job:ps/task:0");
  EXPECT_EQ(n.attr().at("dtype").type(), tensorflow::DT_FLOAT);
  const auto& t = n.attr().at("value").tensor();
  EXPECT_EQ(t.dtype(), tensorflow::DT_FLOAT);
  ASSERT_EQ(t.tensor_shape().dim_size(), 1);
  EXPECT_EQ(t.tensor_shape().dim(0).size(), 2);
  ASSERT_EQ(t.float_val_size(), 2);
  EXPECT_EQ(t.float_val(1), 2.0f);
  EXPECT_EQ(n.attr().at("_class").list().s(0), "loc:@v");
  EXPECT_EQ(n.attr().at("empty").value_case(), tensorflow::AttrValue::kList);
  EXPECT_EQ(n.GetReflection()->GetUnknownFields(n).field_count(), 0);

  // Deterministic serialization reproduces TensorFlow's bytes exactly.
  EXPECT_EQ(Deterministic(n), tf_bytes);
}

TEST(ProtoRoundTrip, WireDetails) {
  // incarnation is fixed64 (field 6, wire type 1 => tag 0x31).
  tensorflow::DeviceAttributes d;
  d.set_incarnation(0x8000000000000001ULL);
  std::string b;
  ASSERT_TRUE(d.SerializeToString(&b));
  ASSERT_EQ(b.size(), 9u);
  EXPECT_EQ(static_cast<uint8_t>(b[0]), 0x31);

  // Packed repeated scalars are written packed (field 5, wire type 2)...
  tensorflow::TensorProto t;
  t.add_float_val(1.0f);
  t.add_float_val(2.0f);
  ASSERT_TRUE(t.SerializeToString(&b));
  EXPECT_EQ(static_cast<uint8_t>(b[0]), 0x2a);
  EXPECT_EQ(static_cast<uint8_t>(b[1]), 8);

  // ...and unpacked encodings are accepted too (two separate 0x2d fields).
  const char kUnpacked[] = "\x2d\x00\x00\x80\x3f\x2d\x00\x00\x00\x40";
  tensorflow::TensorProto u;
  ASSERT_TRUE(u.ParseFromString(std::string(kUnpacked, sizeof(kUnpacked) - 1)));
  ASSERT_EQ(u.float_val_size(), 2);
  EXPECT_EQ(u.float_val(0), 1.0f);

  // Enum numbers used on the wire.
  EXPECT_EQ(tensorflow::DT_FLOAT_REF, 101);
  EXPECT_EQ(tensorflow::DT_UINT2_REF, 132);
  EXPECT_EQ(tensorflow::error::UNAVAILABLE, 14);
  EXPECT_EQ(tensorflow::error::UNAUTHENTICATED, 16);
}

TEST(ProtoRoundTrip, ConfigAndNamedTensor) {
  tensorflow::ConfigProto c;
  (*c.mutable_device_count())["CPU"] = 1;
  c.add_device_filters("/job:ps");
  c.set_operation_timeout_in_ms(5000);
  c.mutable_graph_options()->mutable_rewrite_options()->set_disable_meta_optimizer(true);
  (*c.mutable_cluster_def()->add_job()->mutable_tasks())[0] = "localhost:2222";
  c.mutable_experimental()->set_mlir_bridge_rollout(
      tensorflow::ConfigProto::Experimental::MLIR_BRIDGE_ROLLOUT_DISABLED);
  c.mutable_experimental()->mutable_coordination_config()->set_service_type(
      "standalone");

  tensorflow::RunOptions ro;
  ro.set_trace_level(tensorflow::RunOptions::FULL_TRACE);
  ro.mutable_debug_options()->add_debug_tensor_watch_opts()->set_node_name("x");
  ro.mutable_experimental()->mutable_run_handler_pool_options()->set_priority(3);

  tensorflow::NamedTensorProto nt;
  nt.set_name("x:0");
  nt.mutable_tensor()->set_dtype(tensorflow::DT_STRING);
  nt.mutable_tensor()->add_string_val("v");

  for (const google::protobuf::Message* m :
       {static_cast<const google::protobuf::Message*>(&c),
        static_cast<const google::protobuf::Message*>(&ro),
        static_cast<const google::protobuf::Message*>(&nt)}) {
    std::unique_ptr<google::protobuf::Message> back(m->New());
    ASSERT_TRUE(back->ParseFromString(m->SerializeAsString()));
    EXPECT_TRUE(MessageDifferencer::Equals(*m, *back)) << m->GetTypeName();
  }
}

}  // namespace
}  // namespace weft
