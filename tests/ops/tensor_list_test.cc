// TensorList kernels one at a time (reserve, set, get, stack, gather,
// concat; a list is never changed in place, and an unset element takes its
// shape from the set ones), and the list's TensorProto coding: the bytes
// TensorFlow 2.21's tf.io.serialize_tensor writes decode to the same list,
// Weft's encoding round-trips, and malformed or hostile metadata is an error.
#include "ops/cpu/tensor_list.h"

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "proto/tensor.pb.h"
#include "runtime/checkpoint/coding.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

Tensor Int32s(const std::vector<int32_t>& v) {
  return MakeTensor<int32_t>({static_cast<int64_t>(v.size())}, v);
}
Tensor Int32(int32_t v) { return MakeTensor<int32_t>({}, {v}); }

// Reserve(3 of float [2]), then item 1 set to {1.5, -2}.
std::vector<Tensor> ReservedAndSet() {
  KernelRunner reserve(NodeBuilder("r", "TensorListReserve")
                           .Attr("element_dtype", DT_FLOAT)
                           .Attr("shape_type", DT_INT32)
                           .Build());
  auto list = reserve.Run({Int32s({2}), Int32(3)});
  EXPECT_TRUE(list.ok()) << list.status();
  KernelRunner set(NodeBuilder("s", "TensorListSetItem")
                       .Attr("element_dtype", DT_FLOAT)
                       .Build());
  auto set_list =
      set.Run({list->at(0), Int32(1), MakeTensor<float>({2}, {1.5f, -2.0f})});
  EXPECT_TRUE(set_list.ok()) << set_list.status();
  return {list->at(0), set_list->at(0)};
}

TEST(TensorListTest, SetMakesANewListAndUnsetItemsReadAsZeros) {
  std::vector<Tensor> lists = ReservedAndSet();
  KernelRunner get(NodeBuilder("g", "TensorListGetItem")
                       .Attr("element_dtype", DT_FLOAT)
                       .Build());
  auto before = get.Run({lists[0], Int32(1), Int32s({2})});
  auto after = get.Run({lists[1], Int32(1), Int32s({2})});
  ASSERT_TRUE(before.ok() && after.ok());
  ExpectTensorEqual(before->at(0), MakeTensor<float>({2}, {0, 0}));
  ExpectTensorEqual(after->at(0), MakeTensor<float>({2}, {1.5f, -2.0f}));

  KernelRunner stack(NodeBuilder("st", "TensorListStack")
                         .Attr("element_dtype", DT_FLOAT)
                         .Attr("num_elements", 3)
                         .Build());
  auto stacked = stack.Run({lists[1], Int32s({2})});
  ASSERT_TRUE(stacked.ok()) << stacked.status();
  ExpectTensorEqual(stacked->at(0),
                    MakeTensor<float>({3, 2}, {0, 0, 1.5f, -2.0f, 0, 0}));

  auto out_of_range = get.Run({lists[1], Int32(3), Int32s({2})});
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("3"), std::string::npos)
      << out_of_range.status();
}

// A variant vector of the lists in the variant scalars `lists`.
Tensor ListVector(const std::vector<Tensor>& lists) {
  Tensor t(DT_VARIANT, TensorShape({static_cast<int64_t>(lists.size())}));
  for (size_t i = 0; i < lists.size(); ++i) {
    t.data<Variant>()[i] = lists[i].data<Variant>()[0];
  }
  return t;
}

const TensorList& ListAt(const Tensor& t, int64_t i) {
  return *t.data<Variant>()[i].get<TensorList>();
}

TEST(TensorListTest, PushBackBatchAndConcatListsWorkPerList) {
  std::vector<Tensor> lists = ReservedAndSet();  // 3 elements each
  KernelRunner push(NodeBuilder("p", "TensorListPushBackBatch")
                        .Attr("element_dtype", DT_FLOAT)
                        .Build());
  auto pushed = push.Run({ListVector(lists), MakeTensor<float>({2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  ASSERT_EQ(pushed->at(0).NumElements(), 2);
  for (int64_t b = 0; b < 2; ++b) {
    const TensorList& l = ListAt(pushed->at(0), b);
    ASSERT_EQ(l.tensors.size(), 4u);
    ExpectTensorEqual(l.tensors[3], MakeTensor<float>({2}, {1.0f + 2 * b, 2.0f + 2 * b}));
  }
  // The inputs are unchanged (lists are values).
  EXPECT_EQ(ListAt(ListVector(lists), 0).tensors.size(), 3u);

  KernelRunner concat(NodeBuilder("c", "TensorListConcatLists")
                          .Attr("element_dtype", DT_FLOAT)
                          .Build());
  auto joined = concat.Run({ListVector(lists), ListVector({lists[1], lists[0]})});
  ASSERT_TRUE(joined.ok()) << joined.status();
  const TensorList& first = ListAt(joined->at(0), 0);  // unset list, then set
  ASSERT_EQ(first.tensors.size(), 6u);
  EXPECT_FALSE(first.tensors[1].IsInitialized());
  ExpectTensorEqual(first.tensors[4], MakeTensor<float>({2}, {1.5f, -2.0f}));
  const TensorList& second = ListAt(joined->at(0), 1);
  ExpectTensorEqual(second.tensors[1], MakeTensor<float>({2}, {1.5f, -2.0f}));
  EXPECT_FALSE(second.tensors[4].IsInitialized());

  // A row per list, lists of the element dtype, inputs of one shape.
  auto short_rows = push.Run({ListVector(lists), MakeTensor<float>({1, 2}, {1, 2})});
  ASSERT_FALSE(short_rows.ok());
  EXPECT_NE(short_rows.status().message().find("a row for each of the 2 lists"),
            std::string::npos) << short_rows.status();
  auto wrong_shape = push.Run({ListVector(lists), MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(wrong_shape.ok());
  auto mismatched = concat.Run({ListVector(lists), ListVector({lists[0]})});
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("same shape"), std::string::npos);
  KernelRunner ints(NodeBuilder("i", "TensorListPushBackBatch")
                        .Attr("element_dtype", DT_INT32)
                        .Build());
  EXPECT_FALSE(ints.Run({ListVector(lists), Int32s({1, 2})}).ok());
}

// Reserve(3 of float, shape unknown), then item 1 set to `item`.
Tensor UnknownShapeListWith(const Tensor& item) {
  KernelRunner reserve(NodeBuilder("r", "TensorListReserve")
                           .Attr("element_dtype", DT_FLOAT)
                           .Attr("shape_type", DT_INT32)
                           .Build());
  auto list = reserve.Run({Int32(-1), Int32(3)});
  EXPECT_TRUE(list.ok()) << list.status();
  KernelRunner set(NodeBuilder("s", "TensorListSetItem")
                       .Attr("element_dtype", DT_FLOAT)
                       .Build());
  auto set_list = set.Run({list->at(0), Int32(1), item});
  EXPECT_TRUE(set_list.ok()) << set_list.status();
  return set_list->at(0);
}

TEST(TensorListTest, UnsetElementsTakeTheSetElementsShape) {
  // Gather: the unset element 2 reads as zeros of the set element's [2].
  Tensor list = UnknownShapeListWith(MakeTensor<float>({2}, {1.5f, -2.0f}));
  KernelRunner gather(NodeBuilder("g", "TensorListGather")
                          .Attr("element_dtype", DT_FLOAT)
                          .Build());
  auto gathered = gather.Run({list, Int32s({1, 2}), Int32(-1)});
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  ExpectTensorEqual(gathered->at(0), MakeTensor<float>({2, 2}, {1.5f, -2.0f, 0, 0}));

  // Concat without leading_dims: unset elements have the set one's rows.
  Tensor rows = UnknownShapeListWith(MakeTensor<float>({2, 1}, {4, 5}));
  KernelRunner concat(NodeBuilder("c", "TensorListConcatV2")
                          .Attr("element_dtype", DT_FLOAT)
                          .Attr("shape_type", DT_INT32)
                          .Build());
  auto joined = concat.Run({rows, Int32(-1), MakeTensor<int64_t>({0}, {})});
  ASSERT_TRUE(joined.ok()) << joined.status();
  ExpectTensorEqual(joined->at(0), MakeTensor<float>({6, 1}, {0, 0, 4, 5, 0, 0}));
  ExpectTensorEqual(joined->at(1), MakeTensor<int64_t>({3}, {2, 2, 2}));

  // With nothing set and no element shape, there is no shape to read.
  KernelRunner reserve(NodeBuilder("r", "TensorListReserve")
                           .Attr("element_dtype", DT_FLOAT)
                           .Attr("shape_type", DT_INT32)
                           .Build());
  auto unset = reserve.Run({Int32(-1), Int32(3)});
  ASSERT_TRUE(unset.ok());
  auto none = gather.Run({unset->at(0), Int32s({0}), Int32(-1)});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("non-fully-defined element_shape"),
            std::string::npos) << none.status();
}

TEST(TensorListTest, StackMergesEachElementsShape) {
  KernelRunner empty(NodeBuilder("e", "EmptyTensorList")
                         .Attr("element_dtype", DT_FLOAT)
                         .Attr("shape_type", DT_INT32)
                         .Build());
  KernelRunner push(NodeBuilder("p", "TensorListPushBack")
                        .Attr("element_dtype", DT_FLOAT)
                        .Build());
  KernelRunner stack(NodeBuilder("st", "TensorListStack")
                         .Attr("element_dtype", DT_FLOAT)
                         .Attr("num_elements", -1)
                         .Build());
  auto list = empty.Run({Int32s({-1}), Int32(-1)});  // elements of shape [?]
  ASSERT_TRUE(list.ok()) << list.status();
  auto one = push.Run({list->at(0), MakeTensor<float>({1}, {1})});
  ASSERT_TRUE(one.ok()) << one.status();
  auto two = push.Run({one->at(0), MakeTensor<float>({2}, {2, 3})});
  ASSERT_TRUE(two.ok()) << two.status();
  auto stacked = stack.Run({two->at(0), Int32(-1)});
  ASSERT_FALSE(stacked.ok());
  EXPECT_EQ(stacked.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(stacked.status().message().find(
                "Incompatible shapes during merge: [1] vs. [2]"),
            std::string::npos) << stacked.status();

  // A full list refuses a push, in TensorFlow's words.
  auto bounded = empty.Run({Int32s({-1}), Int32(1)});
  ASSERT_TRUE(bounded.ok());
  auto full = push.Run({bounded->at(0), MakeTensor<float>({1}, {1})});
  ASSERT_TRUE(full.ok());
  auto over = push.Run({full->at(0), MakeTensor<float>({1}, {2})});
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("Tried to push item into a full list"),
            std::string::npos) << over.status();
}

TEST(TensorListTest, StridedSliceTakesAListOutOfAVectorOfLists) {
  std::vector<Tensor> lists = ReservedAndSet();
  KernelRunner slice(NodeBuilder("ss", "StridedSlice")
                         .Attr("T", DT_VARIANT)
                         .Attr("Index", DT_INT32)
                         .Attr("begin_mask", 0)
                         .Attr("end_mask", 0)
                         .Attr("ellipsis_mask", 0)
                         .Attr("new_axis_mask", 0)
                         .Attr("shrink_axis_mask", 1)
                         .Build());
  auto second = slice.Run({ListVector(lists), Int32s({1}), Int32s({2}), Int32s({1})});
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->at(0).dims(), 0);
  ExpectTensorEqual(ListAt(second->at(0), 0).tensors[1],
                    MakeTensor<float>({2}, {1.5f, -2.0f}));
}

// A list of variant holding one list: the float vector `values`.
Tensor ListOfOneList(const std::vector<float>& values) {
  KernelRunner from(NodeBuilder("f", "TensorListFromTensor")
                        .Attr("element_dtype", DT_FLOAT)
                        .Attr("shape_type", DT_INT32)
                        .Build());
  auto inner = from.Run({MakeTensor<float>({static_cast<int64_t>(values.size())}, values),
                         Int32s({})});
  EXPECT_TRUE(inner.ok()) << inner.status();
  KernelRunner empty(NodeBuilder("e", "EmptyTensorList")
                         .Attr("element_dtype", DT_VARIANT)
                         .Attr("shape_type", DT_INT32)
                         .Build());
  auto outer = empty.Run({Int32s({}), Int32(-1)});
  EXPECT_TRUE(outer.ok()) << outer.status();
  KernelRunner push(NodeBuilder("p", "TensorListPushBack")
                        .Attr("element_dtype", DT_VARIANT)
                        .Build());
  auto pushed = push.Run({outer->at(0), inner->at(0)});
  EXPECT_TRUE(pushed.ok()) << pushed.status();
  return pushed->at(0);
}

// The float elements of the list inside element 0 of `outer`.
const TensorList& InnerList(const Tensor& outer) {
  return ListAt(ListAt(outer, 0).tensors[0], 0);
}

TEST(TensorListTest, AddNAndZerosLikeRecurseIntoNestedLists) {
  KernelRunner add(NodeBuilder("a", "AddN")
                       .Attr("N", 2)
                       .Attr("T", DT_VARIANT)
                       .Build());
  auto sum = add.Run({ListOfOneList({1, 2}), ListOfOneList({3, 4})});
  ASSERT_TRUE(sum.ok()) << sum.status();
  const TensorList& added = InnerList(sum->at(0));
  ASSERT_EQ(added.tensors.size(), 2u);
  ExpectTensorEqual(added.tensors[0], MakeTensor<float>({}, {4}));
  ExpectTensorEqual(added.tensors[1], MakeTensor<float>({}, {6}));

  auto unequal = add.Run({ListOfOneList({1, 2}), ListOfOneList({3})});
  ASSERT_FALSE(unequal.ok());
  EXPECT_NE(unequal.status().message().find(
                "Trying to add two lists of tensors with different lengths"),
            std::string::npos) << unequal.status();

  KernelRunner zeros(NodeBuilder("z", "ZerosLike").Attr("T", DT_VARIANT).Build());
  auto zeroed = zeros.Run({ListOfOneList({5, 6})});
  ASSERT_TRUE(zeroed.ok()) << zeroed.status();
  const TensorList& inner = InnerList(zeroed->at(0));
  ASSERT_EQ(inner.tensors.size(), 2u);
  ExpectTensorEqual(inner.tensors[1], MakeTensor<float>({}, {0}));
}

// tf.io.serialize_tensor of TensorListReserve([2], 3, float) with item 1 set
// to [1.5, -2.0], from TensorFlow 2.21: the tensor_content form (a varint
// size, then the VariantTensorDataProto).
constexpr char kTensorFlowBytes[] =
    "081512002241400a1674656e736f72666c6f773a3a54656e736f724c697374121202000201"
    "ffffffffffffffffff01120208021a1208011204120208022a080000c03f000000c0";

void ExpectTheSetList(const Tensor& t) {
  ASSERT_EQ(t.dtype(), DT_VARIANT);
  ASSERT_EQ(t.NumElements(), 1);
  const TensorList* list = t.data<Variant>()[0].get<TensorList>();
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->element_dtype, DT_FLOAT);
  EXPECT_EQ(list->element_shape.DebugString(), "[2]");
  EXPECT_EQ(list->max_num_elements, -1);
  ASSERT_EQ(list->tensors.size(), 3u);
  EXPECT_FALSE(list->tensors[0].IsInitialized());
  EXPECT_FALSE(list->tensors[2].IsInitialized());
  ExpectTensorEqual(list->tensors[1], MakeTensor<float>({2}, {1.5f, -2.0f}));
}

TEST(TensorListCodingTest, ReadsTensorFlowsBytes) {
  RegisterTensorListCoder();
  tensorflow::TensorProto proto;
  ASSERT_TRUE(proto.ParseFromString(absl::HexStringToBytes(kTensorFlowBytes)));
  auto t = TensorFromProto(proto);
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectTheSetList(*t);
}

TEST(TensorListCodingTest, RoundTripsThroughVariantVal) {
  RegisterTensorListCoder();
  Tensor list = ReservedAndSet()[1];
  tensorflow::TensorProto proto;
  TensorToProto(list, &proto);
  ASSERT_EQ(proto.variant_val_size(), 1);
  EXPECT_EQ(proto.variant_val(0).type_name(), "tensorflow::TensorList");
  EXPECT_EQ(proto.variant_val(0).tensors_size(), 1);  // the one set item
  auto back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectTheSetList(*back);
}

// A list proto with `metadata` and `n_tensors` float [2] tensors.
tensorflow::TensorProto ListProto(std::string metadata, int n_tensors) {
  tensorflow::TensorProto proto;
  proto.set_dtype(tensorflow::DT_VARIANT);
  auto* v = proto.add_variant_val();
  v->set_type_name("tensorflow::TensorList");
  v->set_metadata(std::move(metadata));
  for (int i = 0; i < n_tensors; ++i) {
    TensorToProto(MakeTensor<float>({2}, {1, 2}), v->add_tensors());
  }
  return proto;
}

std::string Metadata(const std::vector<uint64_t>& varints,
                     const std::string& shape = "") {
  std::string m;
  for (uint64_t v : varints) coding::PutVarint(&m, v);
  return m + shape;
}

void ExpectError(const tensorflow::TensorProto& proto, const std::string& what) {
  auto t = TensorFromProto(proto);
  ASSERT_FALSE(t.ok()) << "expected an error about " << what;
  EXPECT_NE(t.status().message().find(what), std::string::npos) << t.status();
}

TEST(TensorListCodingTest, MalformedOrHostileMetadataIsAnError) {
  RegisterTensorListCoder();
  EXPECT_TRUE(TensorFromProto(ListProto(Metadata({0, 1, ~0ull}), 2)).ok());
  ExpectError(ListProto("", 1), "no count of unset elements");
  // 2^40 unset elements claimed by a few bytes: refused before allocating.
  ExpectError(ListProto(Metadata({uint64_t{1} << 40}), 0), "metadata bytes");
  ExpectError(ListProto(Metadata({1, 5, 1, 0}), 1), "out of range");
  ExpectError(ListProto(Metadata({2, 0, 0, 1, 0}), 1), "repeated");
  ExpectError(ListProto(Metadata({0}), 1), "no element dtype");
  ExpectError(ListProto(Metadata({0, 1u << 20, 0}), 1), "unsupported element dtype");
  ExpectError(ListProto(Metadata({0, 3, 0}), 1), "element 0 is float, not int32");
  ExpectError(ListProto(Metadata({0, 1, 0}, "\xff"), 1), "not a TensorShapeProto");
  tensorflow::TensorShapeProto deep;
  for (int i = 0; i < kMaxTensorRank + 1; ++i) deep.add_dim()->set_size(1);
  ExpectError(ListProto(Metadata({0, 1, 0}, deep.SerializeAsString()), 1),
              "element shape of rank 255");

  tensorflow::TensorProto unknown = ListProto(Metadata({0, 1, 0}), 0);
  unknown.mutable_variant_val(0)->set_type_name("tensorflow::Mystery");
  ExpectError(unknown, "'tensorflow::Mystery' cannot be decoded");
}

// A list of lists of lists ... nested past kMaxVariantNesting is refused
// (the decoder recurses once per level).
TEST(TensorListCodingTest, NestingIsBounded) {
  RegisterTensorListCoder();
  tensorflow::TensorProto proto = ListProto(Metadata({0, 1, 0}), 1);
  for (int level = 0; level < kMaxVariantNesting; ++level) {
    tensorflow::TensorProto outer =
        ListProto(Metadata({0, tensorflow::DT_VARIANT, 0}), 0);
    *outer.mutable_variant_val(0)->add_tensors() = proto;
    proto = outer;
  }
  ExpectError(proto, "nest more than");
}

}  // namespace
}  // namespace weft
