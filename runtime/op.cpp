#include "op.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "log.h"

namespace weft {

namespace {

template <class V> struct Pair { V value; int index; };

// The arithmetic types beyond datatype.h's integer and real lists that the host reduces, as
// X(tag, type): MPI_BYTE as bytes (bitwise ops only), long double and the complex types.
#define WEFT_HOST_ONLY_ARITH_TYPES(X)                                                              \
  X(byte, uint8_t) X(f80, long double)                                                             \
  X(cf32, std::complex<float>) X(cf64, std::complex<double>) X(cf80, std::complex<long double>)

enum class Family { integer, floating, complex, boolean, byte, pair, none };

Family family_of(BasicType t) {
  switch (t) {
    case BasicType::i8: case BasicType::u8: case BasicType::i16: case BasicType::u16:
    case BasicType::i32: case BasicType::u32: case BasicType::i64: case BasicType::u64:
      return Family::integer;
    case BasicType::f16: case BasicType::bf16: case BasicType::f32: case BasicType::f64: case BasicType::f80:
      return Family::floating;
    case BasicType::cf32: case BasicType::cf64: case BasicType::cf80: return Family::complex;
    case BasicType::c_bool: return Family::boolean;
    case BasicType::byte: return Family::byte;
    case BasicType::float_int: case BasicType::double_int: case BasicType::long_int:
    case BasicType::short_int: case BasicType::int_int: case BasicType::long_double_int:
      return Family::pair;
    default: return Family::none;
  }
}

// Elementwise ops, each out = in op inout. Integer sum and prod run in unsigned arithmetic:
// the same bits as the signed result, without signed overflow (or u16 * u16 promoted to int).
template <class T, bool = std::is_integral_v<T>> struct WrapOf { using type = T; };
template <class T> struct WrapOf<T, true> {
  using type = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
};
template <class T> using Wrap = typename WrapOf<T>::type;

struct Sum { template <class T> static T f(T a, T b) { return T(Wrap<T>(a) + Wrap<T>(b)); } };
struct Prod { template <class T> static T f(T a, T b) { return T(Wrap<T>(a) * Wrap<T>(b)); } };
// max/min keep inout unless in compares greater/less: a NaN in inout stays, a NaN in in is
// dropped, and of +0 and -0 inout's stays. x86 max/min instructions have the same rule.
struct Max { template <class T> static T f(T a, T b) { return a > b ? a : b; } };
struct Min { template <class T> static T f(T a, T b) { return a < b ? a : b; } };
// Logical ops without && / || so there is no branch to if-convert.
struct Land { template <class T> static T f(T a, T b) { return T((a != 0) & (b != 0)); } };
struct Lor { template <class T> static T f(T a, T b) { return T((a != 0) | (b != 0)); } };
struct Lxor { template <class T> static T f(T a, T b) { return T((a != 0) ^ (b != 0)); } };
struct Band { template <class T> static T f(T a, T b) { return T(a & b); } };
struct Bor { template <class T> static T f(T a, T b) { return T(a | b); } };
struct Bxor { template <class T> static T f(T a, T b) { return T(a ^ b); } };

// The vector loop runs over whole blocks with a fixed trip count, a multiple of every SIMD
// width: GCC's -O2 cost model ("very cheap") vectorises only loops that need no scalar
// epilogue and no runtime alias or alignment checks. The remainder runs scalar.
constexpr size_t kBlockBytes = 64;

template <class T, class Op>
inline void blocks(const T* __restrict a, T* __restrict b, size_t n) {
  constexpr size_t k = sizeof(T) >= kBlockBytes ? 1 : kBlockBytes / sizeof(T);
  size_t i = 0;
  for (; i + k <= n; i += k)
    for (size_t j = 0; j < k; ++j) b[i + j] = Op::f(a[i + j], b[i + j]);
  for (; i < n; ++i) b[i] = Op::f(a[i], b[i]);
}

// An AVX2 clone picked at load time where the CPU has it; the default clone is baseline x86-64.
// Not under ThreadSanitizer: its instrumented resolvers would run before its runtime starts.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_THREAD__)
#define WEFT_SIMD_CLONES [[gnu::target_clones("avx2", "default")]]
#else
#define WEFT_SIMD_CLONES
#endif

template <class T, class Op>
WEFT_SIMD_CLONES void simd_kernel(const T* __restrict a, T* __restrict b, size_t n) {
  blocks<T, Op>(a, b, n);
}

template <class T, class Op>
void plain_kernel(const T* __restrict a, T* __restrict b, size_t n) {
  blocks<T, Op>(a, b, n);
}

// Overlapping buffers (in == inout included) take this loop: no restrict, in element order.
template <class T, class Op>
void overlap_kernel(const T* a, T* b, size_t n) {
  for (size_t i = 0; i < n; ++i) b[i] = Op::f(a[i], b[i]);
}

template <class T, class Op>
Status run(const void* in, void* inout, size_t n) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  const auto ia = reinterpret_cast<uintptr_t>(a), ib = reinterpret_cast<uintptr_t>(b);
  if (ia < ib + n * sizeof(T) && ib < ia + n * sizeof(T)) {
    overlap_kernel<T, Op>(a, b, n);
  } else if constexpr (std::is_arithmetic_v<T> && sizeof(T) <= 8) {
    simd_kernel<T, Op>(a, b, n);
  } else {
    plain_kernel<T, Op>(a, b, n);  // long double and complex: no SIMD to gain
  }
  return Status::ok;
}

template <class T>
Status reduce_arith(ReduceOp op, const void* in, void* inout, size_t n) {
  switch (op) {
    case ReduceOp::sum: return run<T, Sum>(in, inout, n);
    case ReduceOp::prod: return run<T, Prod>(in, inout, n);
    default: break;
  }
  if constexpr (!std::is_same_v<T, std::complex<float>> && !std::is_same_v<T, std::complex<double>> &&
                !std::is_same_v<T, std::complex<long double>>) {
    switch (op) {
      case ReduceOp::max: return run<T, Max>(in, inout, n);
      case ReduceOp::min: return run<T, Min>(in, inout, n);
      default: break;
    }
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case ReduceOp::land: return run<T, Land>(in, inout, n);
      case ReduceOp::lor: return run<T, Lor>(in, inout, n);
      case ReduceOp::lxor: return run<T, Lxor>(in, inout, n);
      case ReduceOp::band: return run<T, Band>(in, inout, n);
      case ReduceOp::bor: return run<T, Bor>(in, inout, n);
      case ReduceOp::bxor: return run<T, Bxor>(in, inout, n);
      default: break;
    }
  }
  return Status::invalid_op;
}

// half and bfloat16 on the host: each pair of elements widened to float, combined, and rounded
// back to nearest even (NaN stays NaN), as the GPU's pairwise kernel does.
float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13);  // inf, NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else {  // zero, subnormal: mant * 2^-24
    float f = float(mant) * 0x1p-24f;
    memcpy(&bits, &f, 4);
    bits |= sign;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const uint32_t abs = x & 0x7fffffff;
  if (abs >= 0x7f800000) return uint16_t(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));  // inf, NaN
  if (abs >= 0x477ff000) return uint16_t(sign | 0x7c00);  // rounds past the largest half
  if (abs < 0x38800000) {  // below the smallest normal half: a subnormal (or zero)
    const float scaled = std::fabs(f) * 0x1p24f;  // exact multiple of the subnormal step
    return uint16_t(sign | uint16_t(std::nearbyint(scaled)));
  }
  const uint32_t mant = abs & 0x7fffff, rest = mant & 0x1fff;
  uint32_t h = ((((abs >> 23) - 112) << 10) | (mant >> 13));
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: still right
  return uint16_t(sign | h);
}

float bf16_to_float(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // NaN stays quiet NaN
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
Status reduce_short_float(ReduceOp op, const void* in, void* inout, size_t n) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  auto each = [&](auto f) {
    for (size_t i = 0; i < n; ++i) b[i] = Narrow(f(Widen(a[i]), Widen(b[i])));
    return Status::ok;
  };
  switch (op) {
    case ReduceOp::sum: return each([](float x, float y) { return x + y; });
    case ReduceOp::prod: return each([](float x, float y) { return x * y; });
    case ReduceOp::max: return each([](float x, float y) { return Max::f(x, y); });
    case ReduceOp::min: return each([](float x, float y) { return Min::f(x, y); });
    default: return Status::invalid_op;
  }
}

// C bool: only the logical ops are defined on it, and they give 0 or 1 on the byte values.
Status reduce_bool(ReduceOp op, const void* in, void* inout, size_t n) {
  switch (op) {
    case ReduceOp::land: return run<uint8_t, Land>(in, inout, n);
    case ReduceOp::lor: return run<uint8_t, Lor>(in, inout, n);
    case ReduceOp::lxor: return run<uint8_t, Lxor>(in, inout, n);
    default: return Status::invalid_op;
  }
}

template <class T, class F>
void apply(const void* in, void* inout, size_t n, F f) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
}

template <class V>
Status reduce_pair(ReduceOp op, const void* in, void* inout, size_t n) {
  using P = Pair<V>;
  if (op == ReduceOp::maxloc) {
    apply<P>(in, inout, n, [](P a, P b) {
      if (a.value > b.value) return a;
      if (a.value == b.value) return P{a.value, a.index < b.index ? a.index : b.index};
      return b;
    });
    return Status::ok;
  }
  if (op == ReduceOp::minloc) {
    apply<P>(in, inout, n, [](P a, P b) {
      if (a.value < b.value) return a;
      if (a.value == b.value) return P{a.value, a.index < b.index ? a.index : b.index};
      return b;
    });
    return Status::ok;
  }
  return Status::invalid_op;
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  constexpr const char* names[] = {"max", "min", "sum", "prod", "land", "band", "lor",
                                   "bor", "lxor", "bxor", "minloc", "maxloc", "replace", "no_op"};
  return names[size_t(op)];
}

bool reduce_op_supports(ReduceOp op, BasicType type) {
  Family f = family_of(type);
  switch (op) {
    case ReduceOp::replace: case ReduceOp::no_op: return type != BasicType::none;
    case ReduceOp::max: case ReduceOp::min: return f == Family::integer || f == Family::floating;
    case ReduceOp::sum: case ReduceOp::prod:
      return f == Family::integer || f == Family::floating || f == Family::complex;
    case ReduceOp::land: case ReduceOp::lor: case ReduceOp::lxor:
      return f == Family::integer || f == Family::boolean;
    case ReduceOp::band: case ReduceOp::bor: case ReduceOp::bxor:
      return f == Family::integer || f == Family::byte;
    case ReduceOp::minloc: case ReduceOp::maxloc: return f == Family::pair;
  }
  return false;
}

Status reduce_local(ReduceOp op, BasicType type, const void* in, void* inout, size_t count) {
  if (!reduce_op_supports(op, type)) {
    WEFT_INFO(Subsys::core, "reduction %s is not defined on %s", reduce_op_name(op),
              basic_type_name(type));
    set_error_detail(std::string("reduction ") + reduce_op_name(op) + " is not defined on " +
                     basic_type_name(type));
    return Status::invalid_op;
  }
  if (count == 0 || op == ReduceOp::no_op) return Status::ok;
  if (op == ReduceOp::replace) {
    memmove(inout, in, count * basic_type_size(type));
    return Status::ok;
  }
  switch (type) {
#define WEFT_ARITH_CASE(tag, T) case BasicType::tag: return reduce_arith<T>(op, in, inout, count);
#define WEFT_PAIR_CASE(tag, V) case BasicType::tag: return reduce_pair<V>(op, in, inout, count);
    WEFT_INTEGER_TYPES(WEFT_ARITH_CASE)
    WEFT_REAL_TYPES(WEFT_ARITH_CASE)
    WEFT_HOST_ONLY_ARITH_TYPES(WEFT_ARITH_CASE)
    WEFT_PAIR_TYPES(WEFT_PAIR_CASE)
#undef WEFT_ARITH_CASE
#undef WEFT_PAIR_CASE
    case BasicType::c_bool: return reduce_bool(op, in, inout, count);
    case BasicType::f16: return reduce_short_float<half_to_float, float_to_half>(op, in, inout, count);
    case BasicType::bf16: return reduce_short_float<bf16_to_float, float_to_bf16>(op, in, inout, count);
    default: break;
  }
  return Status::invalid_op;
}

}  // namespace weft
