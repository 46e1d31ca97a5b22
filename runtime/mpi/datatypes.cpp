// Predefined datatypes: MPICH handle values map to weft's Datatype objects. Builtin handles
// are 0x4c00SSII (SS size, II index); the pair types are direct handles 0x8c00000N.
#include <algorithm>
#include <complex>
#include <cstring>

#include "state.h"

namespace weft::mpi {

namespace {

struct Builtin {
  MPI_Datatype handle;
  const char* name;
  BasicType basic;
  size_t size;
};

const Builtin kBuiltins[] = {
    {MPI_CHAR, "MPI_CHAR", BasicType::i8, 1},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", BasicType::i8, 1},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", BasicType::u8, 1},
    {MPI_BYTE, "MPI_BYTE", BasicType::byte, 1},
    {MPI_WCHAR, "MPI_WCHAR", BasicType::i32, sizeof(wchar_t)},
    {MPI_SHORT, "MPI_SHORT", BasicType::i16, sizeof(short)},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", BasicType::u16, sizeof(short)},
    {MPI_INT, "MPI_INT", BasicType::i32, sizeof(int)},
    {MPI_UNSIGNED, "MPI_UNSIGNED", BasicType::u32, sizeof(unsigned)},
    {MPI_LONG, "MPI_LONG", BasicType::i64, sizeof(long)},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", BasicType::u64, sizeof(long)},
    {MPI_FLOAT, "MPI_FLOAT", BasicType::f32, sizeof(float)},
    {MPI_DOUBLE, "MPI_DOUBLE", BasicType::f64, sizeof(double)},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", BasicType::f80, sizeof(long double)},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", BasicType::i64, sizeof(long long)},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", BasicType::u64, sizeof(long long)},
    {MPI_PACKED, "MPI_PACKED", BasicType::none, 1},
    {MPI_2INT, "MPI_2INT", BasicType::int_int, 2 * sizeof(int)},
    {MPI_COMPLEX, "MPI_COMPLEX", BasicType::cf32, 8},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", BasicType::cf64, 16},
    {MPI_LOGICAL, "MPI_LOGICAL", BasicType::i32, 4},
    {MPI_REAL, "MPI_REAL", BasicType::f32, 4},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", BasicType::f64, 8},
    {MPI_INTEGER, "MPI_INTEGER", BasicType::i32, 4},
    {MPI_2INTEGER, "MPI_2INTEGER", BasicType::int_int, 8},
    {MPI_2REAL, "MPI_2REAL", BasicType::none, 8},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", BasicType::none, 16},
    {MPI_CHARACTER, "MPI_CHARACTER", BasicType::byte, 1},
    {MPI_REAL4, "MPI_REAL4", BasicType::f32, 4},
    {MPI_REAL8, "MPI_REAL8", BasicType::f64, 8},
    {MPI_REAL16, "MPI_REAL16", BasicType::none, 16},
    {MPI_COMPLEX8, "MPI_COMPLEX8", BasicType::cf32, 8},
    {MPI_COMPLEX16, "MPI_COMPLEX16", BasicType::cf64, 16},
    {MPI_COMPLEX32, "MPI_COMPLEX32", BasicType::none, 32},
    {MPI_INTEGER1, "MPI_INTEGER1", BasicType::i8, 1},
    {MPI_INTEGER2, "MPI_INTEGER2", BasicType::i16, 2},
    {MPI_INTEGER4, "MPI_INTEGER4", BasicType::i32, 4},
    {MPI_INTEGER8, "MPI_INTEGER8", BasicType::i64, 8},
    {MPI_INT8_T, "MPI_INT8_T", BasicType::i8, 1},
    {MPI_INT16_T, "MPI_INT16_T", BasicType::i16, 2},
    {MPI_INT32_T, "MPI_INT32_T", BasicType::i32, 4},
    {MPI_INT64_T, "MPI_INT64_T", BasicType::i64, 8},
    {MPI_UINT8_T, "MPI_UINT8_T", BasicType::u8, 1},
    {MPI_UINT16_T, "MPI_UINT16_T", BasicType::u16, 2},
    {MPI_UINT32_T, "MPI_UINT32_T", BasicType::u32, 4},
    {MPI_UINT64_T, "MPI_UINT64_T", BasicType::u64, 8},
    {MPI_C_BOOL, "MPI_C_BOOL", BasicType::c_bool, 1},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", BasicType::cf32, sizeof(std::complex<float>)},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", BasicType::cf64, sizeof(std::complex<double>)},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", BasicType::cf80,
     sizeof(std::complex<long double>)},
    {MPIX_C_FLOAT16, "MPIX_C_FLOAT16", BasicType::f16, 2},
    {MPI_AINT, "MPI_AINT", BasicType::i64, sizeof(MPI_Aint)},
    {MPI_OFFSET, "MPI_OFFSET", BasicType::i64, sizeof(MPI_Offset)},
    {MPI_COUNT, "MPI_COUNT", BasicType::i64, sizeof(MPI_Count)},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", BasicType::c_bool, 1},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", BasicType::cf32, 8},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", BasicType::cf64, 16},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", BasicType::cf80,
     sizeof(std::complex<long double>)},
};

const Builtin kPairs[] = {
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", BasicType::float_int, sizeof(float) + sizeof(int)},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", BasicType::double_int, sizeof(double) + sizeof(int)},
    {MPI_LONG_INT, "MPI_LONG_INT", BasicType::long_int, sizeof(long) + sizeof(int)},
    {MPI_SHORT_INT, "MPI_SHORT_INT", BasicType::short_int, sizeof(short) + sizeof(int)},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", BasicType::long_double_int,
     sizeof(long double) + sizeof(int)},
};

struct Tables {
  Datatype by_index[256];     // builtin handles, by their low byte
  bool present[256] = {};
  MPI_Datatype handle_of[256] = {};
  Datatype pairs[5];
  Tables() {
    auto fill = [](Datatype& d, const Builtin& b) {
      // Size counts data bytes only; the extent of a (value, index) pair includes its padding.
      size_t extent = b.basic == BasicType::none ? b.size : std::max(b.size, basic_type_size(b.basic));
      d.name = b.name;
      d.size = b.size;
      d.extent = ptrdiff_t(extent);
      d.lb = 0;
      d.contiguous = extent == b.size;
      d.predefined = true;
      d.basic = b.basic;
    };
    for (const auto& b : kBuiltins) {
      uint32_t idx = uint32_t(b.handle) & 0xff;
      fill(by_index[idx], b);
      present[idx] = true;
      handle_of[idx] = b.handle;
    }
    for (size_t i = 0; i < 5; ++i) fill(pairs[i], kPairs[i]);
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const Datatype* lookup_datatype(MPI_Datatype h) {
  const Tables& t = tables();
  if ((uint32_t(h) & 0xfc000000u) == 0x4c000000u) {
    uint32_t idx = uint32_t(h) & 0xff;
    if (t.present[idx] && t.handle_of[idx] == h) return &t.by_index[idx];
    return nullptr;
  }
  if ((uint32_t(h) & 0xfffffff0u) == 0x8c000000u) {
    uint32_t idx = uint32_t(h) & 0xf;
    return idx < 5 ? &t.pairs[idx] : nullptr;
  }
  return nullptr;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  const Datatype* d = lookup_datatype(datatype);
  if (!d) return raise(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Type_size", "invalid datatype 0x%x", unsigned(datatype));
  if (!size) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_size", "size is NULL");
  *size = int(d->size);
  return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  const Datatype* d = lookup_datatype(datatype);
  if (!d) return raise(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Type_get_name", "invalid datatype 0x%x", unsigned(datatype));
  if (!type_name || !resultlen) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_get_name", "type_name or resultlen is NULL");
  size_t n = std::min(d->name.size(), size_t(MPI_MAX_OBJECT_NAME - 1));
  memcpy(type_name, d->name.data(), n);
  type_name[n] = '\0';
  *resultlen = int(n);
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIAS(Type_size)
WEFT_PMPI_ALIAS(Type_get_name)
