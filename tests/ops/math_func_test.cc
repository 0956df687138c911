// Error paths and edge cases of the element-wise math kernels
// (ops/cpu/math_*_kernels.cc): integer TruncateDiv/TruncateMod by zero,
// shapes that do not broadcast, the *Grad ops' element counts on half,
// empty tensors, shift amounts out of range, INT_MIN / -1, and values the
// conformance test (tests/conformance/math_ops_test.py) also checks
// against TensorFlow.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Node;
using testing_util::RunOk;
using testing_util::RunStatus;

template <typename T>
Tensor Vec(const std::vector<T>& v) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = v[i];
  return t;
}

Tensor HalfVec(const std::vector<float>& v) {
  Tensor t(DT_HALF, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.data<Half>()[i] = FloatToHalf(v[i]);
  return t;
}

TEST(MathFuncTest, IntegerDivisionByZero) {
  for (const char* op : {"TruncateDiv", "TruncateMod"}) {
    absl::Status s = RunStatus(Node(op, DT_INT32), {Vec<int32_t>({1, 2}),
                                                    Vec<int32_t>({1, 0})});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op;
    EXPECT_NE(s.message().find("Integer division by zero"), std::string::npos);
  }
  absl::Status s = RunStatus(Node("TruncateDiv", DT_UINT8),
                             {Vec<uint8_t>({1}), Vec<uint8_t>({0})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(MathFuncTest, TruncateDivIntegers) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  Tensor q = RunOk(Node("TruncateDiv", DT_INT32),
                   {Vec<int32_t>({7, -7, kMin, 7}), Vec<int32_t>({2, 2, -1, -2})});
  EXPECT_EQ(q.data<int32_t>()[0], 3);
  EXPECT_EQ(q.data<int32_t>()[1], -3);
  EXPECT_EQ(q.data<int32_t>()[2], kMin);  // wraps, as TensorFlow
  EXPECT_EQ(q.data<int32_t>()[3], -3);
  Tensor m = RunOk(Node("TruncateMod", DT_INT32),
                   {Vec<int32_t>({7, -7, kMin}), Vec<int32_t>({2, 2, -1})});
  EXPECT_EQ(m.data<int32_t>()[0], 1);
  EXPECT_EQ(m.data<int32_t>()[1], -1);
  EXPECT_EQ(m.data<int32_t>()[2], 0);
  // Unsigned: 255 / 255 is 1 (no signed -1 shortcut).
  Tensor u = RunOk(Node("TruncateDiv", DT_UINT8),
                   {Vec<uint8_t>({255, 254}), Vec<uint8_t>({255, 255})});
  EXPECT_EQ(u.data<uint8_t>()[0], 1);
  EXPECT_EQ(u.data<uint8_t>()[1], 0);
}

TEST(MathFuncTest, ShiftsClampTheAmount) {
  Tensor l = RunOk(Node("LeftShift", DT_INT8),
                   {Vec<int8_t>({1, 1, 1, -1}), Vec<int8_t>({-3, 7, 100, 1})});
  EXPECT_EQ(l.data<int8_t>()[0], 1);     // amount 0
  EXPECT_EQ(l.data<int8_t>()[1], -128);  // 1 << 7
  EXPECT_EQ(l.data<int8_t>()[2], -128);  // clamped to 7
  EXPECT_EQ(l.data<int8_t>()[3], -2);
  Tensor r = RunOk(Node("RightShift", DT_INT16),
                   {Vec<int16_t>({-32768, -5, 1024}), Vec<int16_t>({40, 1, -1})});
  EXPECT_EQ(r.data<int16_t>()[0], -1);  // arithmetic, clamped to 15
  EXPECT_EQ(r.data<int16_t>()[1], -3);
  EXPECT_EQ(r.data<int16_t>()[2], 1024);
  Tensor ru = RunOk(Node("RightShift", DT_UINT32),
                    {Vec<uint32_t>({0x80000000u}), Vec<uint32_t>({99})});
  EXPECT_EQ(ru.data<uint32_t>()[0], 1u);
}

TEST(MathFuncTest, PopulationCountAndInvert) {
  Tensor p = RunOk(Node("PopulationCount", DT_INT64),
                   {Vec<int64_t>({0, -1, 255, std::numeric_limits<int64_t>::min()})});
  ASSERT_EQ(p.dtype(), DT_UINT8);
  EXPECT_EQ(p.data<uint8_t>()[0], 0);
  EXPECT_EQ(p.data<uint8_t>()[1], 64);
  EXPECT_EQ(p.data<uint8_t>()[2], 8);
  EXPECT_EQ(p.data<uint8_t>()[3], 1);
  Tensor i = RunOk(Node("Invert", DT_UINT16), {Vec<uint16_t>({0, 0xff00})});
  EXPECT_EQ(i.data<uint16_t>()[0], 0xffff);
  EXPECT_EQ(i.data<uint16_t>()[1], 0x00ff);
}

TEST(MathFuncTest, IncompatibleShapes) {
  Tensor a(DT_FLOAT, TensorShape({2, 3})), b(DT_FLOAT, TensorShape({4}));
  for (const char* op : {"Atan2", "Xlogy", "Igamma"}) {
    absl::Status s = RunStatus(Node(op, DT_FLOAT), {a, b});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op;
    EXPECT_NE(s.message().find("Incompatible shapes"), std::string::npos) << s;
  }
  Tensor ha(DT_HALF, TensorShape({2, 3})), hb(DT_HALF, TensorShape({4}));
  EXPECT_EQ(RunStatus(Node("Xdivy", DT_HALF), {ha, hb}).code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status s = RunStatus(Node("TanhGrad", DT_HALF), {ha, hb});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("same number of elements"), std::string::npos);
}

TEST(MathFuncTest, EmptyTensors) {
  Tensor e(DT_FLOAT, TensorShape({0, 3})), row(DT_FLOAT, TensorShape({3}));
  EXPECT_EQ(RunOk(Node("Sin", DT_FLOAT), {e}).shape(), TensorShape({0, 3}));
  EXPECT_EQ(RunOk(Node("Xlogy", DT_FLOAT), {e, row}).shape(),
            TensorShape({0, 3}));
  Tensor he(DT_HALF, TensorShape({0}));
  EXPECT_EQ(RunOk(Node("Atan2", DT_HALF), {he, he}).shape(), TensorShape({0}));
  EXPECT_EQ(RunOk(Node("IsNan", DT_HALF), {he}).dtype(), DT_BOOL);
}

TEST(MathFuncTest, EdgeValues) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = Vec<double>({0.0, 0.0, 2.0});
  Tensor y = Vec<double>({0.0, std::nan(""), 0.0});
  Tensor d = RunOk(Node("Xdivy", DT_DOUBLE), {x, y});
  EXPECT_EQ(d.data<double>()[0], 0.0);  // 0 / 0 is 0
  EXPECT_EQ(d.data<double>()[1], 0.0);  // 0 / NaN too
  EXPECT_EQ(d.data<double>()[2], inf);
  Tensor l = RunOk(Node("Log1p", DT_DOUBLE), {Vec<double>({-1.0, -2.0})});
  EXPECT_EQ(l.data<double>()[0], -inf);
  EXPECT_TRUE(std::isnan(l.data<double>()[1]));
  Tensor g = RunOk(Node("Lgamma", DT_DOUBLE), {Vec<double>({0.0, -3.0, 1.0})});
  EXPECT_EQ(g.data<double>()[0], inf);
  EXPECT_EQ(g.data<double>()[1], inf);
  EXPECT_EQ(g.data<double>()[2], 0.0);
  Tensor f = RunOk(Node("IsFinite", DT_HALF), {HalfVec({1.f, INFINITY, NAN})});
  EXPECT_TRUE(f.data<bool>()[0]);
  EXPECT_FALSE(f.data<bool>()[1]);
  EXPECT_FALSE(f.data<bool>()[2]);
  Tensor s = RunOk(Node("Sin", DT_HALF), {HalfVec({0.5f, -0.f})});
  EXPECT_EQ(s.data<Half>()[0].bits, FloatToHalf(std::sin(0.5f)).bits);
  EXPECT_EQ(s.data<Half>()[1].bits, 0x8000);  // -0 stays -0
}

}  // namespace
}  // namespace weft
