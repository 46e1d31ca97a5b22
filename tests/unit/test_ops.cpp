#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "runtime/core/datatype.h"
#include "runtime/core/op.h"

using namespace weft;

TEST(BasicTypes, SizesMatchTheCTypes) {
  EXPECT_EQ(basic_type_size(BasicType::i8), 1u);
  EXPECT_EQ(basic_type_size(BasicType::u16), 2u);
  EXPECT_EQ(basic_type_size(BasicType::i32), 4u);
  EXPECT_EQ(basic_type_size(BasicType::f64), 8u);
  EXPECT_EQ(basic_type_size(BasicType::f80), sizeof(long double));
  struct DI { double d; int i; };
  struct SI { short s; int i; };
  EXPECT_EQ(basic_type_size(BasicType::double_int), sizeof(DI));
  EXPECT_EQ(basic_type_size(BasicType::short_int), sizeof(SI));
  EXPECT_EQ(basic_type_size(BasicType::int_int), 8u);
}

template <class T>
void check_arith(BasicType bt) {
  std::mt19937 rng(42);
  const size_t n = 1031;  // odd length: exercises the vector loop's tail
  std::vector<T> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = T(rng() % 100);
    b[i] = T(rng() % 100);
  }
  struct Case { ReduceOp op; T (*f)(T, T); };
  const Case cases[] = {
      {ReduceOp::sum, [](T x, T y) { return T(x + y); }},
      {ReduceOp::prod, [](T x, T y) { return T(x * y); }},
      {ReduceOp::max, [](T x, T y) { return x > y ? x : y; }},
      {ReduceOp::min, [](T x, T y) { return x < y ? x : y; }},
  };
  for (const auto& c : cases) {
    std::vector<T> out = b;
    ASSERT_EQ(reduce_local(c.op, bt, a.data(), out.data(), n), Status::ok);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], c.f(a[i], b[i])) << reduce_op_name(c.op) << " at " << i;
  }
}

TEST(Reduce, ArithmeticOnEveryNumericType) {
  check_arith<int8_t>(BasicType::i8);
  check_arith<uint8_t>(BasicType::u8);
  check_arith<int16_t>(BasicType::i16);
  check_arith<uint16_t>(BasicType::u16);
  check_arith<int32_t>(BasicType::i32);
  check_arith<uint32_t>(BasicType::u32);
  check_arith<int64_t>(BasicType::i64);
  check_arith<uint64_t>(BasicType::u64);
  check_arith<float>(BasicType::f32);
  check_arith<double>(BasicType::f64);
  check_arith<long double>(BasicType::f80);
}

TEST(Reduce, BitwiseAndLogical) {
  std::vector<uint32_t> a = {0xf0f0, 0, 5, 0}, b = {0x0ff0, 7, 0, 0};
  auto run = [&](ReduceOp op) {
    std::vector<uint32_t> out = b;
    EXPECT_EQ(reduce_local(op, BasicType::u32, a.data(), out.data(), a.size()), Status::ok);
    return out;
  };
  EXPECT_EQ(run(ReduceOp::band), (std::vector<uint32_t>{0x00f0, 0, 0, 0}));
  EXPECT_EQ(run(ReduceOp::bor), (std::vector<uint32_t>{0xfff0, 7, 5, 0}));
  EXPECT_EQ(run(ReduceOp::bxor), (std::vector<uint32_t>{0xff00, 7, 5, 0}));
  EXPECT_EQ(run(ReduceOp::land), (std::vector<uint32_t>{1, 0, 0, 0}));
  EXPECT_EQ(run(ReduceOp::lor), (std::vector<uint32_t>{1, 1, 1, 0}));
  EXPECT_EQ(run(ReduceOp::lxor), (std::vector<uint32_t>{0, 1, 1, 0}));
}

TEST(Reduce, MaxlocAndMinlocPreferTheLowerIndexOnTies) {
  struct DI { double v; int i; };
  std::vector<DI> a = {{1.0, 3}, {5.0, 9}, {2.0, 1}}, b = {{1.0, 2}, {4.0, 0}, {7.0, 4}};
  std::vector<DI> out = b;
  ASSERT_EQ(reduce_local(ReduceOp::maxloc, BasicType::double_int, a.data(), out.data(), 3), Status::ok);
  EXPECT_EQ(out[0].i, 2);
  EXPECT_EQ(out[1].v, 5.0);
  EXPECT_EQ(out[1].i, 9);
  EXPECT_EQ(out[2].i, 4);
  out = b;
  ASSERT_EQ(reduce_local(ReduceOp::minloc, BasicType::double_int, a.data(), out.data(), 3), Status::ok);
  EXPECT_EQ(out[0].i, 2);
  EXPECT_EQ(out[1].i, 0);
  EXPECT_EQ(out[2].v, 2.0);
  EXPECT_EQ(out[2].i, 1);
}

TEST(Reduce, RejectsOpsThatTheTypeDoesNotSupport) {
  float a = 1, b = 2;
  EXPECT_EQ(reduce_local(ReduceOp::band, BasicType::f32, &a, &b, 1), Status::invalid_op);
  EXPECT_EQ(reduce_local(ReduceOp::maxloc, BasicType::i32, &a, &b, 1), Status::invalid_op);
  EXPECT_EQ(reduce_local(ReduceOp::sum, BasicType::none, &a, &b, 1), Status::invalid_op);
  EXPECT_FALSE(reduce_op_supports(ReduceOp::max, BasicType::cf64));
  EXPECT_TRUE(reduce_op_supports(ReduceOp::bxor, BasicType::byte));
}

TEST(Reduce, ReplaceCopiesAndNoOpLeavesTheTarget) {
  int a[3] = {1, 2, 3}, b[3] = {9, 9, 9};
  ASSERT_EQ(reduce_local(ReduceOp::no_op, BasicType::i32, a, b, 3), Status::ok);
  EXPECT_EQ(b[0], 9);
  ASSERT_EQ(reduce_local(ReduceOp::replace, BasicType::i32, a, b, 3), Status::ok);
  EXPECT_EQ(b[2], 3);
}
