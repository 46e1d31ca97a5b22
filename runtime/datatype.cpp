#include "datatype.h"

#include <complex>
#include <type_traits>

namespace weft {

namespace {
template <class V> struct Pair { V value; int index; };
static_assert(alignof(std::complex<float>) == alignof(float) && alignof(std::complex<double>) == alignof(double) &&
              alignof(std::complex<long double>) == alignof(long double));

// f(std::type_identity<C>{}) for the types whose size and alignment are their C type's (long
// double, complex, the (value, index) pairs); `other` for the rest.
template <class F>
size_t of_c_type(BasicType t, size_t other, F f) {
  switch (t) {
    case BasicType::f80: return f(std::type_identity<long double>{});
    case BasicType::cf32: return f(std::type_identity<std::complex<float>>{});
    case BasicType::cf64: return f(std::type_identity<std::complex<double>>{});
    case BasicType::cf80: return f(std::type_identity<std::complex<long double>>{});
#define WEFT_PAIR_CASE(tag, V) case BasicType::tag: return f(std::type_identity<Pair<V>>{});
    WEFT_PAIR_TYPES(WEFT_PAIR_CASE)
#undef WEFT_PAIR_CASE
    default: return other;
  }
}
}  // namespace

const char* basic_type_name(BasicType t) {
  switch (t) {
    case BasicType::none: return "none";
    case BasicType::byte: return "byte";
    case BasicType::i8: return "int8";
    case BasicType::u8: return "uint8";
    case BasicType::i16: return "int16";
    case BasicType::u16: return "uint16";
    case BasicType::i32: return "int32";
    case BasicType::u32: return "uint32";
    case BasicType::i64: return "int64";
    case BasicType::u64: return "uint64";
    case BasicType::f16: return "float16";
    case BasicType::bf16: return "bfloat16";
    case BasicType::f32: return "float";
    case BasicType::f64: return "double";
    case BasicType::f80: return "long double";
    case BasicType::c_bool: return "bool";
    case BasicType::cf32: return "complex float";
    case BasicType::cf64: return "complex double";
    case BasicType::cf80: return "complex long double";
    case BasicType::float_int: return "float-int";
    case BasicType::double_int: return "double-int";
    case BasicType::long_int: return "long-int";
    case BasicType::short_int: return "short-int";
    case BasicType::int_int: return "int-int";
    case BasicType::long_double_int: return "long double-int";
  }
  return "?";
}

size_t basic_type_size(BasicType t) {
  switch (t) {
    case BasicType::none: return 0;
    case BasicType::byte: case BasicType::i8: case BasicType::u8: case BasicType::c_bool: return 1;
    case BasicType::i16: case BasicType::u16: case BasicType::f16: case BasicType::bf16: return 2;
    case BasicType::i32: case BasicType::u32: case BasicType::f32: return 4;
    case BasicType::i64: case BasicType::u64: case BasicType::f64: return 8;
    default: return of_c_type(t, 0, [](auto c) { return sizeof(typename decltype(c)::type); });
  }
}

bool basic_type_is_pair(BasicType t) {
  switch (t) {
    case BasicType::float_int: case BasicType::double_int: case BasicType::long_int:
    case BasicType::short_int: case BasicType::int_int: case BasicType::long_double_int:
      return true;
    default:
      return false;
  }
}

size_t basic_type_align(BasicType t) {
  if (t == BasicType::none) return 1;
  return of_c_type(t, basic_type_size(t), [](auto c) { return alignof(typename decltype(c)::type); });
}

}  // namespace weft
