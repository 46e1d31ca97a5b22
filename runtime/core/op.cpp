#include "op.h"

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "log.h"

namespace weft {

namespace {

template <class V> struct Pair { V value; int index; };

enum class Family { integer, floating, complex, boolean, byte, pair, none };

Family family_of(BasicType t) {
  switch (t) {
    case BasicType::i8: case BasicType::u8: case BasicType::i16: case BasicType::u16:
    case BasicType::i32: case BasicType::u32: case BasicType::i64: case BasicType::u64:
      return Family::integer;
    case BasicType::f32: case BasicType::f64: case BasicType::f80:
      return Family::floating;
    case BasicType::cf32: case BasicType::cf64: case BasicType::cf80: return Family::complex;
    case BasicType::c_bool: return Family::boolean;
    case BasicType::byte: return Family::byte;
    case BasicType::float_int: case BasicType::double_int: case BasicType::long_int:
    case BasicType::short_int: case BasicType::int_int: case BasicType::long_double_int:
      return Family::pair;
    default: return Family::none;  // f16 / bf16 reduce on the GPU path only
  }
}

template <class T, class F>
void apply(const void* in, void* inout, size_t n, F f) {
  const T* __restrict a = static_cast<const T*>(in);
  T* __restrict b = static_cast<T*>(inout);
  for (size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
}

template <class T>
Status reduce_arith(ReduceOp op, const void* in, void* inout, size_t n) {
  switch (op) {
    case ReduceOp::sum: apply<T>(in, inout, n, [](T a, T b) { return T(a + b); }); return Status::ok;
    case ReduceOp::prod: apply<T>(in, inout, n, [](T a, T b) { return T(a * b); }); return Status::ok;
    default: break;
  }
  if constexpr (!std::is_same_v<T, std::complex<float>> && !std::is_same_v<T, std::complex<double>> &&
                !std::is_same_v<T, std::complex<long double>>) {
    switch (op) {
      case ReduceOp::max: apply<T>(in, inout, n, [](T a, T b) { return a > b ? a : b; }); return Status::ok;
      case ReduceOp::min: apply<T>(in, inout, n, [](T a, T b) { return a < b ? a : b; }); return Status::ok;
      case ReduceOp::land: apply<T>(in, inout, n, [](T a, T b) { return T(a && b); }); return Status::ok;
      case ReduceOp::lor: apply<T>(in, inout, n, [](T a, T b) { return T(a || b); }); return Status::ok;
      case ReduceOp::lxor: apply<T>(in, inout, n, [](T a, T b) { return T(!a != !b); }); return Status::ok;
      default: break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case ReduceOp::band: apply<T>(in, inout, n, [](T a, T b) { return T(a & b); }); return Status::ok;
        case ReduceOp::bor: apply<T>(in, inout, n, [](T a, T b) { return T(a | b); }); return Status::ok;
        case ReduceOp::bxor: apply<T>(in, inout, n, [](T a, T b) { return T(a ^ b); }); return Status::ok;
        default: break;
      }
    }
  }
  return Status::invalid_op;
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
    case BasicType::i8: return reduce_arith<int8_t>(op, in, inout, count);
    case BasicType::u8: case BasicType::byte: return reduce_arith<uint8_t>(op, in, inout, count);
    case BasicType::c_bool: return reduce_arith<bool>(op, in, inout, count);
    case BasicType::i16: return reduce_arith<int16_t>(op, in, inout, count);
    case BasicType::u16: return reduce_arith<uint16_t>(op, in, inout, count);
    case BasicType::i32: return reduce_arith<int32_t>(op, in, inout, count);
    case BasicType::u32: return reduce_arith<uint32_t>(op, in, inout, count);
    case BasicType::i64: return reduce_arith<int64_t>(op, in, inout, count);
    case BasicType::u64: return reduce_arith<uint64_t>(op, in, inout, count);
    case BasicType::f32: return reduce_arith<float>(op, in, inout, count);
    case BasicType::f64: return reduce_arith<double>(op, in, inout, count);
    case BasicType::f80: return reduce_arith<long double>(op, in, inout, count);
    case BasicType::cf32: return reduce_arith<std::complex<float>>(op, in, inout, count);
    case BasicType::cf64: return reduce_arith<std::complex<double>>(op, in, inout, count);
    case BasicType::cf80: return reduce_arith<std::complex<long double>>(op, in, inout, count);
    case BasicType::float_int: return reduce_pair<float>(op, in, inout, count);
    case BasicType::double_int: return reduce_pair<double>(op, in, inout, count);
    case BasicType::long_int: return reduce_pair<long>(op, in, inout, count);
    case BasicType::short_int: return reduce_pair<short>(op, in, inout, count);
    case BasicType::int_int: return reduce_pair<int>(op, in, inout, count);
    case BasicType::long_double_int: return reduce_pair<long double>(op, in, inout, count);
    default: break;
  }
  return Status::invalid_op;
}

}  // namespace weft
