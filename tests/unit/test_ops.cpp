#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/datatype.h"
#include "runtime/op.h"

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

// float16 and bfloat16 on the host: widened to float, combined, rounded to nearest even.
TEST(Reduce, HalfAndBfloat16RoundToNearestEvenAfterEachStep) {
  // float16: 1.0 + (2^-11 + 2^-13) = 1.00061 rounds up to 1 + 2^-10; max, min; the largest
  // finite value overflows to infinity when doubled; 2^-24 (the smallest subnormal) doubles.
  uint16_t in[5] = {0x1100, 0x4000, 0x4000, 0x7bff, 0x0001}, io[5] = {0x3c00, 0x3c00, 0x3c00, 0x7bff, 0x0001};
  ASSERT_EQ(reduce_local(ReduceOp::sum, BasicType::f16, in, io, 5), Status::ok);
  EXPECT_EQ(io[0], 0x3c01);
  EXPECT_EQ(io[1], 0x4200);  // 1 + 2 = 3
  EXPECT_EQ(io[3], 0x7c00);
  EXPECT_EQ(io[4], 0x0002);
  uint16_t mx[2] = {0x4000, 0xbc00}, my[2] = {0x3c00, 0x3c00};
  ASSERT_EQ(reduce_local(ReduceOp::max, BasicType::f16, mx, my, 2), Status::ok);
  EXPECT_EQ(my[0], 0x4000);
  EXPECT_EQ(my[1], 0x3c00);
  // bfloat16: 1.0 + 2^-8 is a tie between 1.0 and 1 + 2^-7: to even, 1.0; 1 + 3 * 2^-9 rounds up.
  uint16_t bin[3] = {0x3b80, 0x3bc0, 0x7fc0}, bio[3] = {0x3f80, 0x3f80, 0x3f80};
  ASSERT_EQ(reduce_local(ReduceOp::sum, BasicType::bf16, bin, bio, 3), Status::ok);
  EXPECT_EQ(bio[0], 0x3f80);
  EXPECT_EQ(bio[1], 0x3f81);
  EXPECT_EQ(bio[2] & 0x7fc0, 0x7fc0);  // NaN stays NaN
  ASSERT_EQ(reduce_local(ReduceOp::prod, BasicType::bf16, bin, bio, 1), Status::ok);
  EXPECT_EQ(bio[0], 0x3b80);  // 2^-8 * 1
  EXPECT_EQ(reduce_local(ReduceOp::band, BasicType::bf16, bin, bio, 1), Status::invalid_op);
}

TEST(Reduce, ReplaceCopiesAndNoOpLeavesTheTarget) {
  int a[3] = {1, 2, 3}, b[3] = {9, 9, 9};
  ASSERT_EQ(reduce_local(ReduceOp::no_op, BasicType::i32, a, b, 3), Status::ok);
  EXPECT_EQ(b[0], 9);
  ASSERT_EQ(reduce_local(ReduceOp::replace, BasicType::i32, a, b, 3), Status::ok);
  EXPECT_EQ(b[2], 3);
}

// reduce_local against a per-element reference, on every length class the vector loops split
// into (empty, tail only, whole blocks plus tail), at misaligned addresses and in place.
namespace {

template <class T, bool = std::is_integral_v<T>> struct WrapOf { using type = T; };
template <class T> struct WrapOf<T, true> {
  using type = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
};
template <class T> using Wrap = typename WrapOf<T>::type;

template <class T>
T reference(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::sum: return T(Wrap<T>(a) + Wrap<T>(b));
    case ReduceOp::prod: return T(Wrap<T>(a) * Wrap<T>(b));
    case ReduceOp::max: return a > b ? a : b;
    case ReduceOp::min: return a < b ? a : b;
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case ReduceOp::band: return T(a & b);
      case ReduceOp::bor: return T(a | b);
      case ReduceOp::bxor: return T(a ^ b);
      case ReduceOp::land: return T(a && b);
      case ReduceOp::lor: return T(a || b);
      case ReduceOp::lxor: return T(!a != !b);
      default: break;
    }
  }
  ADD_FAILURE() << "no reference for " << reduce_op_name(op);
  return b;
}

// Integers over their whole range (so sums and products wrap), a fair share of zeros for the
// logical ops; floats mixed with the values min/max must order exactly: NaN, +-0, +-inf.
template <class T>
std::vector<T> random_values(size_t n, std::mt19937_64& rng, bool specials) {
  std::vector<T> v(n);
  for (auto& x : v) {
    const uint64_t r = rng();
    if constexpr (std::is_integral_v<T>) {
      x = (r & 7) == 0 ? T(0) : T(r >> 8);
    } else {
      x = T(int64_t(r % 2001) - 1000) / T(8);
      if (specials) {
        switch ((r >> 32) % 16) {
          case 0: x = std::numeric_limits<T>::quiet_NaN(); break;
          case 1: x = -std::numeric_limits<T>::quiet_NaN(); break;
          case 2: x = T(0); break;
          case 3: x = -T(0); break;
          case 4: x = std::numeric_limits<T>::infinity(); break;
          case 5: x = -std::numeric_limits<T>::infinity(); break;
          default: break;
        }
      }
    }
  }
  return v;
}

std::string bytes_of(const void* p, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    snprintf(buf, sizeof buf, "%02x", static_cast<const unsigned char*>(p)[i]);
    s += buf;
  }
  return s;
}

// Bitwise comparison: NaN payloads and the sign of zero count.
template <class T>
void expect_same_bits(const T* got, const T* want, size_t n, const std::string& what) {
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " of " << n << " is " << bytes_of(&got[i], sizeof(T))
                    << ", want " << bytes_of(&want[i], sizeof(T));
      return;
    }
  }
}

constexpr size_t kLengths[] = {0, 1, 3, 17, 1023, 4097};

template <class T>
void check_against_reference(BasicType bt, std::initializer_list<ReduceOp> ops, bool specials = false) {
  std::mt19937_64 rng(7);
  for (ReduceOp op : ops) {
    for (size_t n : kLengths) {
      // Element offsets 0..3 into padded buffers: the two operands start at every mix of
      // 16/32-byte alignments the vector loops can meet.
      for (size_t off_in = 0; off_in < 4; ++off_in) {
        for (size_t off_out = 0; off_out < 4; ++off_out) {
          if (n > 17 && off_in != off_out && off_in + off_out != 3) continue;  // keep it quick
          std::vector<T> in = random_values<T>(n + 4, rng, specials);
          std::vector<T> inout = random_values<T>(n + 4, rng, specials);
          std::vector<T> want = inout;
          for (size_t i = 0; i < n; ++i)
            want[off_out + i] = reference(op, in[off_in + i], inout[off_out + i]);
          ASSERT_EQ(reduce_local(op, bt, in.data() + off_in, inout.data() + off_out, n), Status::ok);
          const std::string what = std::string(reduce_op_name(op)) + " on " + basic_type_name(bt) +
                                   ", n " + std::to_string(n) + ", offsets " + std::to_string(off_in) +
                                   "/" + std::to_string(off_out);
          expect_same_bits(inout.data(), want.data(), n + 4, what);  // padding untouched too
        }
      }
      // in == inout, as MPI_IN_PLACE-style callers may pass.
      std::vector<T> both = random_values<T>(n + 1, rng, specials);
      std::vector<T> want = both;
      for (size_t i = 0; i < n; ++i) want[1 + i] = reference(op, both[1 + i], both[1 + i]);
      ASSERT_EQ(reduce_local(op, bt, both.data() + 1, both.data() + 1, n), Status::ok);
      expect_same_bits(both.data(), want.data(), n + 1,
                       std::string(reduce_op_name(op)) + " in place on " + basic_type_name(bt) +
                           ", n " + std::to_string(n));
    }
  }
}

constexpr std::initializer_list<ReduceOp> kIntegerOps = {
    ReduceOp::sum, ReduceOp::prod, ReduceOp::max, ReduceOp::min, ReduceOp::band,
    ReduceOp::bor, ReduceOp::bxor, ReduceOp::land, ReduceOp::lor, ReduceOp::lxor};

}  // namespace

TEST(ReduceVector, IntegersMatchTheScalarReference) {
  check_against_reference<int8_t>(BasicType::i8, kIntegerOps);
  check_against_reference<uint8_t>(BasicType::u8, kIntegerOps);
  check_against_reference<int16_t>(BasicType::i16, kIntegerOps);
  check_against_reference<uint16_t>(BasicType::u16, kIntegerOps);
  check_against_reference<int32_t>(BasicType::i32, kIntegerOps);
  check_against_reference<uint32_t>(BasicType::u32, kIntegerOps);
  check_against_reference<int64_t>(BasicType::i64, kIntegerOps);
  check_against_reference<uint64_t>(BasicType::u64, kIntegerOps);
  check_against_reference<uint8_t>(BasicType::byte, {ReduceOp::band, ReduceOp::bor, ReduceOp::bxor});
}

TEST(ReduceVector, FloatsMatchTheScalarReference) {
  check_against_reference<float>(BasicType::f32, {ReduceOp::sum, ReduceOp::prod, ReduceOp::max, ReduceOp::min});
  check_against_reference<double>(BasicType::f64, {ReduceOp::sum, ReduceOp::prod, ReduceOp::max, ReduceOp::min});
  check_against_reference<long double>(BasicType::f80, {ReduceOp::sum, ReduceOp::max});
}

// max/min return inout unless in compares greater/less: a NaN in inout stays, a NaN in in is
// dropped, and of +0 and -0 the one in inout stays.
TEST(ReduceVector, FloatMinMaxKeepTheNaNAndSignedZeroRules) {
  check_against_reference<float>(BasicType::f32, {ReduceOp::max, ReduceOp::min}, true);
  check_against_reference<double>(BasicType::f64, {ReduceOp::max, ReduceOp::min}, true);

  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> in(37, 1.0f), inout(37, 2.0f);
  in[3] = nan;        // dropped: 2 stays
  inout[20] = nan;    // kept
  in[36] = -0.0f;     // 0 vs -0 compare equal: inout's +0 stays
  inout[36] = 0.0f;
  std::vector<float> mx = inout, mn = inout;
  ASSERT_EQ(reduce_local(ReduceOp::max, BasicType::f32, in.data(), mx.data(), in.size()), Status::ok);
  ASSERT_EQ(reduce_local(ReduceOp::min, BasicType::f32, in.data(), mn.data(), in.size()), Status::ok);
  EXPECT_EQ(mx[3], 2.0f);
  EXPECT_EQ(mn[3], 2.0f);
  EXPECT_TRUE(std::isnan(mx[20]));
  EXPECT_TRUE(std::isnan(mn[20]));
  EXPECT_FALSE(std::signbit(mx[36]));
  EXPECT_FALSE(std::signbit(mn[36]));
  EXPECT_EQ(mx[0], 2.0f);
  EXPECT_EQ(mn[0], 1.0f);
}

TEST(ReduceVector, BoolLogicalOpsGiveZeroOrOne) {
  std::mt19937_64 rng(3);
  for (size_t n : kLengths) {
    std::vector<uint8_t> a(n), b(n);  // C bool bytes, 0 or 1
    for (size_t i = 0; i < n; ++i) {
      a[i] = uint8_t(rng() & 1);
      b[i] = uint8_t(rng() & 1);
    }
    for (ReduceOp op : {ReduceOp::land, ReduceOp::lor, ReduceOp::lxor}) {
      std::vector<uint8_t> out = b;
      ASSERT_EQ(reduce_local(op, BasicType::c_bool, a.data(), out.data(), n), Status::ok);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], reference<uint8_t>(op, a[i], b[i])) << i;
    }
  }
  uint8_t x = 1, y = 1;
  EXPECT_EQ(reduce_local(ReduceOp::sum, BasicType::c_bool, &x, &y, 1), Status::invalid_op);
}

// Overlap other than in == inout is outside MPI's rules, but must still behave as the plain
// element-order loop does rather than as a vector loop that assumed no aliasing.
TEST(ReduceVector, PartlyOverlappingBuffersRunInElementOrder) {
  for (size_t shift : {1, 3, 8}) {
    std::vector<int32_t> buf(1100), want;
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = int32_t(i * 3 + 1);
    want = buf;
    const size_t n = 1000;
    for (size_t i = 0; i < n; ++i) want[shift + i] = want[i] + want[shift + i];
    ASSERT_EQ(reduce_local(ReduceOp::sum, BasicType::i32, buf.data(), buf.data() + shift, n), Status::ok);
    EXPECT_EQ(buf, want) << "inout = in + " << shift;
  }
}
