// Fuzzes the external32 decoder (runtime/external32.h, MPI_Unpack_external): the input's first
// byte picks a datatype (predefined, or derived with gaps, negative strides and resized bounds),
// its second a count, and the rest is external32 data from outside. Unpacking writes only the
// bytes the elements occupy (the guard bytes around them and the gaps between them stay as they
// were), and for types whose every basic element is converted by byte order alone (no integer
// resizing, no x87 long double), packing the result again gives back the same bytes.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/external32.h"
#include "runtime/type_constructors.h"
#include "runtime/typemap.h"

using namespace weft;

namespace {

struct Case {
  const Datatype* type;
  bool exact;  // external32 round trip is byte-exact
};

struct Types {
  Datatype i32, i64_long, f64, f80, cf32, int_int, i8;
  std::vector<Case> cases;

  Types() {
    init_predefined(i32, "MPI_INT", BasicType::i32, 4, 4);
    init_predefined(i64_long, "MPI_LONG", BasicType::i64, 8, 8);  // 4 bytes in external32
    init_predefined(f64, "MPI_DOUBLE", BasicType::f64, 8, 8);
    init_predefined(f80, "MPI_LONG_DOUBLE", BasicType::f80, sizeof(long double), sizeof(long double));
    init_predefined(cf32, "MPI_COMPLEX", BasicType::cf32, 8, 8);
    init_predefined(int_int, "MPI_2INT", BasicType::int_int, 8, 8);
    init_predefined(i8, "MPI_SIGNED_CHAR", BasicType::i8, 1, 1);
    cases = {{&i32, true}, {&f64, true}, {&cf32, true}, {&int_int, true}, {&i8, true},
             {&i64_long, false}, {&f80, false}};
    const size_t bl[3] = {2, 1, 3};
    const ptrdiff_t disps[3] = {0, 24, 40};
    const Datatype* mixed[3] = {&i32, &f64, &i8};
    add(type_struct(3, bl, disps, mixed), true);
    const Datatype* with_long[3] = {&i64_long, &f80, &i32};
    add(type_struct(3, bl, disps, with_long), false);
    add(type_hvector(3, 2, -24, &f64), true);                 // negative stride
    Datatype* gapped = type_hvector(2, 1, 12, &cf32);
    add(type_resized(gapped, -8, 40), true);  // resized around a gap
    type_release(gapped);                     // the resized type holds its own reference
    const size_t sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 2};
    add(type_subarray(2, sizes, subs, starts, false, &int_int), true);
  }
  ~Types() {
    for (const Case& c : cases) type_release(c.type);  // a no-op for the predefined ones
  }
  void add(Datatype* d, bool exact) {
    d->committed = true;
    cases.push_back({d, exact});
  }
};

const Types& types() {
  static const Types t;
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Types& all = types();
  const Case& c = all.cases[data[0] % all.cases.size()];
  const Datatype* t = c.type;
  const size_t count = data[1] % 8;
  data += 2, size -= 2;
  size_t bytes = 0;
  if (!external32_size(t, count, &bytes)) abort();  // every type here has an external32 form
  if (bytes > size) return 0;                      // MPI_Unpack_external refuses a short buffer
  // The bytes `count` elements may touch, with guards on both sides, all set to one pattern.
  constexpr size_t kGuard = 64;
  const ptrdiff_t last = count ? ptrdiff_t(count - 1) * t->extent : 0;
  const ptrdiff_t low = t->true_lb + std::min<ptrdiff_t>(0, last);
  const ptrdiff_t high = t->true_lb + t->true_extent + std::max<ptrdiff_t>(0, last);
  const size_t span = size_t(high - low) + 2 * kGuard;
  std::vector<unsigned char> out(span, 0xA5), mask(span, 0);
  char* origin = reinterpret_cast<char*>(out.data()) + kGuard - low;
  // Which bytes the elements occupy: unpack all-0xFF native data into a zeroed copy.
  {
    std::vector<unsigned char> ones(type_packed_size(t, count), 0xFF);
    char* mask_origin = reinterpret_cast<char*>(mask.data()) + kGuard - low;
    type_unpack(t, ones.data(), ones.size(), mask_origin, count, 0);
  }
  external32_unpack(t, data, count, origin);
  for (size_t i = 0; i < span; ++i)
    if (!mask[i] && out[i] != 0xA5) abort();  // a byte outside the elements was written
  if (c.exact) {
    std::vector<unsigned char> again(bytes + 1, 0);
    external32_pack(t, origin, count, again.data());
    if (memcmp(again.data(), data, bytes) != 0) abort();
  }
  return 0;
}
