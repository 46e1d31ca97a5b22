#include "runtime/external32.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/staging.h"
#include "runtime/typemap.h"

namespace weft {

namespace {

// One part of a basic element: where it is in the native packed form and how it converts.
struct Part {
  enum How : uint8_t { swap, resize, quad };  // byte order; size (integers); x87 to binary128
  uint8_t offset, native, ext;
  How how;
};

struct Form {
  Part parts[2];
  int n = 0;
  size_t ext = 0;  // external32 bytes of one element
};

// The external32 form of a predefined type; n == 0 when it has none here.
Form form_of(const Datatype* t) {
  Form f;
  auto part = [&f](size_t offset, size_t native, size_t ext, Part::How how) {
    f.parts[f.n++] = Part{uint8_t(offset), uint8_t(native), uint8_t(ext), how};
    f.ext += ext;
  };
  const size_t n = t->size;
  switch (t->basic) {
    case BasicType::i64: case BasicType::u64:  // long is 4 bytes in external32, long long 8
      part(0, n, t->name == "MPI_LONG" || t->name == "MPI_UNSIGNED_LONG" ? 4 : 8, Part::resize);
      break;
    case BasicType::i32: case BasicType::u32:
      part(0, n, t->name == "MPI_WCHAR" ? 2 : 4, Part::resize);
      break;
    case BasicType::f80: part(0, n, 16, Part::quad); break;
    case BasicType::cf80: part(0, n / 2, 16, Part::quad), part(n / 2, n / 2, 16, Part::quad); break;
    case BasicType::cf32: case BasicType::cf64: case BasicType::int_int: case BasicType::float_int:
      part(0, n / 2, n / 2, Part::swap), part(n / 2, n / 2, n / 2, Part::swap);
      break;
    case BasicType::double_int: case BasicType::long_int: case BasicType::short_int:
    case BasicType::long_double_int:
      break;  // padded pairs: no form here
    case BasicType::none:  // MPI_PACKED (bytes), MPI_REAL16, and MPI_2REAL-like pairs of equal parts
      if (n == 0) break;
      if (t->n_basic == 2 && n % 2 == 0) part(0, n / 2, n / 2, Part::swap), part(n / 2, n / 2, n / 2, Part::swap);
      else if (t->n_basic <= 1) part(0, n, n, Part::swap);
      break;
    default: part(0, n, n, Part::swap); break;
  }
  return f;
}

// Calls fn(predefined type, number of them) along t's signature, `count` elements.
template <class Fn>
void for_each_run(const Datatype* t, size_t count, Fn&& fn) {
  if (t->signature.empty()) {
    if (count) fn(t, count);
    return;
  }
  for (size_t i = 0; i < count; ++i)
    for (const auto& [child, k] : t->signature) for_each_run(child, k, fn);
}

void store_be(uint64_t v, size_t n, unsigned char* out) {
  for (size_t i = 0; i < n; ++i) out[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}
uint64_t load_be(const unsigned char* in, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | in[i];
  return v;
}

void to_external(const Part& p, const unsigned char* native, unsigned char* ext) {
  if (p.how == Part::quad) {  // x87: 64-bit mantissa (explicit integer bit), then sign and exponent
    uint64_t mantissa, hi;
    uint16_t sign_exp;
    memcpy(&mantissa, native, 8);
    memcpy(&sign_exp, native + 8, 2);
    const uint64_t fraction = mantissa & ~(uint64_t(1) << 63);
    hi = (uint64_t(sign_exp) << 48) | (fraction >> 15);
    store_be(hi, 8, ext);
    store_be(fraction << 49, 8, ext + 8);
    return;
  }
  if (p.native > 8) {  // byte order only, any size
    for (size_t i = 0; i < p.native; ++i) ext[i] = native[p.native - 1 - i];
    return;
  }
  uint64_t v = 0;
  memcpy(&v, native, p.native);  // little-endian host
  store_be(v, p.ext, ext);
}

void from_external(const Part& p, const unsigned char* ext, unsigned char* native) {
  if (p.how == Part::quad) {
    const uint64_t hi = load_be(ext, 8), lo = load_be(ext + 8, 8);
    const uint16_t sign_exp = uint16_t(hi >> 48);
    uint64_t mantissa = ((hi & ((uint64_t(1) << 48) - 1)) << 15) | (lo >> 49);
    if (sign_exp & 0x7fff) mantissa |= uint64_t(1) << 63;
    memset(native, 0, p.native);
    memcpy(native, &mantissa, 8);
    memcpy(native + 8, &sign_exp, 2);
    return;
  }
  if (p.native > 8) {
    for (size_t i = 0; i < p.native; ++i) native[i] = ext[p.native - 1 - i];
    return;
  }
  uint64_t v = load_be(ext, p.ext);
  if (p.how == Part::resize && p.ext < p.native && p.ext < 8 && (v >> (8 * p.ext - 1)) & 1)
    v |= ~uint64_t(0) << (8 * p.ext);  // sign-extends; an unsigned value that fits has its top bit clear
  memcpy(native, &v, p.native);
}

// Converts `count` elements between the native packed form and external32.
template <bool Pack>
void convert(const Datatype* t, size_t count, const unsigned char* in, unsigned char* out) {
  for_each_run(t, count, [&](const Datatype* basic, size_t k) {
    const Form f = form_of(basic);
    for (size_t e = 0; e < k; ++e) {
      size_t ext_at = 0;
      for (int i = 0; i < f.n; ++i) {
        const Part& p = f.parts[i];
        if constexpr (Pack) to_external(p, in + p.offset, out + ext_at);
        else from_external(p, in + ext_at, out + p.offset);
        ext_at += p.ext;
      }
      in += Pack ? basic->packed : f.ext;
      out += Pack ? f.ext : basic->packed;
    }
  });
}

}  // namespace

bool external32_size(const Datatype* t, size_t count, size_t* bytes) {
  size_t n = 0;
  bool ok = true;
  for_each_run(t, 1, [&](const Datatype* basic, size_t k) {
    const Form f = form_of(basic);
    ok = ok && (f.n > 0 || basic->size == 0);
    n += k * f.ext;
  });
  *bytes = n * count;
  return ok;
}

void external32_pack(const Datatype* t, const void* src, size_t count, void* dst) {
  StagingBuffer native = staging_buffer(type_packed_size(t, count));
  type_pack(t, src, count, native.get(), 0, SIZE_MAX);
  convert<true>(t, count, reinterpret_cast<const unsigned char*>(native.get()), static_cast<unsigned char*>(dst));
}

void external32_unpack(const Datatype* t, const void* src, size_t count, void* dst) {
  const size_t bytes = type_packed_size(t, count);
  StagingBuffer native = staging_buffer(bytes);
  convert<false>(t, count, static_cast<const unsigned char*>(src), reinterpret_cast<unsigned char*>(native.get()));
  type_unpack(t, native.get(), bytes, dst, count, 0);
}

}  // namespace weft
