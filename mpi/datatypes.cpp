// Datatypes: MPICH handle values map to weft's Datatype objects. Builtin handles are
// 0x4c00SSII (SS size, II index); the pair types are direct handles 0x8c00000N (N < 5);
// derived types are direct handles 0x8c000000 | (8 + slot) into a table of reference-counted
// objects (runtime/typemap.h builds them and packs them).
#include <algorithm>
#include <climits>
#include <complex>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "runtime/type_constructors.h"
#include "runtime/typemap.h"
#include "state.h"

namespace weft::mpi {

constinit BuiltinTypeSlot g_builtin_types[256];

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
    {MPI_INTEGER16, "MPI_INTEGER16", BasicType::none, 16},  // no 16-byte integer reductions
    {MPI_INT8_T, "MPI_INT8_T", BasicType::i8, 1},
    {MPI_INT16_T, "MPI_INT16_T", BasicType::i16, 2},
    {MPI_INT32_T, "MPI_INT32_T", BasicType::i32, 4},
    {MPI_INT64_T, "MPI_INT64_T", BasicType::i64, 8},
    {MPI_UINT8_T, "MPI_UINT8_T", BasicType::u8, 1},
    {MPI_UINT16_T, "MPI_UINT16_T", BasicType::u16, 2},
    {MPI_UINT32_T, "MPI_UINT32_T", BasicType::u32, 4},
    {MPI_UINT64_T, "MPI_UINT64_T", BasicType::u64, 8},
    {MPI_C_BOOL, "MPI_C_BOOL", BasicType::c_bool, 1},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", BasicType::cf32, sizeof(std::complex<float>)},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", BasicType::cf64, sizeof(std::complex<double>)},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", BasicType::cf80,
     sizeof(std::complex<long double>)},
    {MPIX_C_FLOAT16, "MPIX_C_FLOAT16", BasicType::f16, 2},
    {MPIX_BFLOAT16, "MPIX_BFLOAT16", BasicType::bf16, 2},
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
    auto fill = [](Datatype& d, const Builtin& b) {  // the Fortran pairs are two basic elements
      const bool pair = b.handle == MPI_2REAL || b.handle == MPI_2DOUBLE_PRECISION;
      init_predefined(d, b.name, b.basic, b.size, pair ? b.size / 2 : b.size);
    };
    for (const auto& b : kBuiltins) {
      uint32_t idx = uint32_t(b.handle) & 0xff;
      fill(by_index[idx], b);
      present[idx] = true;
      handle_of[idx] = b.handle;
      g_builtin_types[idx] = BuiltinTypeSlot{b.handle, &by_index[idx]};
    }
    for (size_t i = 0; i < 5; ++i) fill(pairs[i], kPairs[i]);
  }
};

Tables& tables() {
  static Tables t;  // not const: MPI_Type_set_name may rename predefined types
  return t;
}

// Derived types: slot i is handle 0x8c000000 | (kFirstDerived + i).
constexpr uint32_t kFirstDerived = 8;
TypeSlots& derived() {
  static TypeSlots d;
  return d;
}

Datatype* lookup_mutable(MPI_Datatype h) {
  Tables& t = tables();
  if ((uint32_t(h) & 0xfc000000u) == 0x4c000000u) {
    uint32_t idx = uint32_t(h) & 0xff;
    if (t.present[idx] && t.handle_of[idx] == h) return &t.by_index[idx];
    return nullptr;
  }
  if (handle::kind_of(h) == handle::direct && handle::obj_of(h) == handle::datatype) {
    uint32_t idx = handle::index_of(h);
    if (idx < 5) return &t.pairs[idx];
    return idx < kFirstDerived ? nullptr : derived().get(idx - kFirstDerived);
  }
  return nullptr;
}

}  // namespace

MPI_Datatype new_datatype_handle(Datatype* d) {
  return handle::make(handle::direct, handle::datatype, kFirstDerived + derived().add(d));
}

namespace {

// The parameterised Fortran types made so far, by (combiner, p, r).
struct ParameterizedTypes {
  std::mutex lock;
  std::map<std::tuple<Combiner, int, int>, MPI_Datatype> by_key;
};
ParameterizedTypes& parameterized() {
  static ParameterizedTypes p;
  return p;
}

}  // namespace

MPI_Datatype parameterized_type(Combiner combiner, MPI_Datatype base, int p, int r) {
  ParameterizedTypes& all = parameterized();
  std::lock_guard<std::mutex> held(all.lock);
  const auto key = std::make_tuple(combiner, p, r);
  if (auto it = all.by_key.find(key); it != all.by_key.end()) return it->second;
  // A copy of the predefined type (it travels, reduces and refuses MPI_Type_free the same way)
  // whose envelope names the constructor and its arguments.
  auto* d = new Datatype(*lookup_datatype(base));
  d->combiner = combiner;
  d->ints = combiner == Combiner::f90_integer ? std::vector<int64_t>{r} : std::vector<int64_t>{p, r};
  const MPI_Datatype h = new_datatype_handle(d);
  all.by_key.emplace(key, h);
  return h;
}

namespace {

// The handle of a datatype argument MPI_Type_get_contents returns: a predefined type's own
// handle, else a new handle owning the reference the caller got (the caller frees it).
MPI_Datatype handle_of(const Datatype* d) {
  Tables& t = tables();
  if (!d->predefined) return new_datatype_handle(const_cast<Datatype*>(d));
  if (d >= &t.pairs[0] && d < &t.pairs[5]) return handle::make(handle::direct, handle::datatype, uint32_t(d - &t.pairs[0]));
  if (d >= &t.by_index[0] && d < &t.by_index[256]) return t.handle_of[d - &t.by_index[0]];
  ParameterizedTypes& all = parameterized();  // a parameterised Fortran type (a few at most)
  std::lock_guard<std::mutex> held(all.lock);
  for (const auto& [key, h] : all.by_key)
    if (lookup_datatype(h) == d) return h;
  return MPI_DATATYPE_NULL;
}

}  // namespace

const Datatype* lookup_datatype(MPI_Datatype h) { return lookup_mutable(h); }

int check_datatype(MPI_Comm comm, const char* fn, MPI_Datatype h, const Datatype** out, const char* arg) {
  const Datatype* d = lookup_datatype(h);
  if (!d) [[unlikely]]
    return raise(comm, MPI_ERR_TYPE, fn, "invalid datatype 0x%x (argument '%s')", unsigned(h), arg);
  if (!d->committed) [[unlikely]]
    return raise(comm, MPI_ERR_TYPE, fn, "datatype 0x%x is not committed (argument '%s'; call MPI_Type_commit)",
                 unsigned(h), arg);
  *out = d;
  return MPI_SUCCESS;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

namespace {

int bad_type(const char* fn, MPI_Datatype h, const char* arg) {
  if (h == MPI_LB || h == MPI_UB)
    return raise(MPI_COMM_NULL, MPI_ERR_TYPE, fn,
                 "MPI_LB and MPI_UB were removed in MPI-3.0 (argument '%s'); use MPI_Type_create_resized", arg);
  if (h == MPI_DATATYPE_NULL)
    return raise(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "datatype is MPI_DATATYPE_NULL (argument '%s')", arg);
  return raise(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype 0x%x (argument '%s')", unsigned(h), arg);
}

// Validates oldtype and newtype of a constructor.
int check_old(const char* fn, MPI_Datatype old, MPI_Datatype* newtype, const Datatype** d) {
  *d = lookup_datatype(old);
  if (!*d) return bad_type(fn, old, "oldtype");
  if (!newtype) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "newtype is NULL");
  return MPI_SUCCESS;
}

int check_count(const char* fn, MPI_Count count, const char* arg = "count") {
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %ld (argument '%s')", long(count), arg);
  return MPI_SUCCESS;
}

int check_blocklen(const char* fn, MPI_Count b, const char* arg, long i = -1) {
  if (b >= 0) return MPI_SUCCESS;
  if (i >= 0)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "negative block length %ld (argument '%s[%ld]')", long(b), arg, i);
  return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "negative block length %ld (argument '%s')", long(b), arg);
}

int check_array(const char* fn, MPI_Count count, const void* a, const char* arg) {
  if (count > 0 && !a) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "%s is NULL", arg);
  return MPI_SUCCESS;
}

// count and one block length (and the displacements of the block-indexed forms), then oldtype
// and newtype: the vector constructors.
int check_vector(const char* fn, int count, int blocklength, MPI_Datatype oldtype, MPI_Datatype* newtype,
                 const Datatype** old, bool indexed = false, const void* displacements = nullptr) {
  if (int rc = check_count(fn, count)) return rc;
  if (int rc = check_blocklen(fn, blocklength, "blocklength")) return rc;
  if (indexed)
    if (int rc = check_array(fn, count, displacements, "array_of_displacements")) return rc;
  return check_old(fn, oldtype, newtype, old);
}

// count, the arrays of block lengths and displacements and each block length: the indexed and
// struct constructors.
template <class Count>
int check_blocks(const char* fn, Count count, const Count* bl, const void* displacements) {
  if (int rc = check_count(fn, count)) return rc;
  if (int rc = check_array(fn, count, bl, "array_of_blocklengths")) return rc;
  if (int rc = check_array(fn, count, displacements, "array_of_displacements")) return rc;
  for (Count i = 0; i < count; ++i)
    if (int rc = check_blocklen(fn, bl[i], "array_of_blocklengths", i)) return rc;
  return MPI_SUCCESS;
}

// A constructor's result: a new handle owning d's reference.
int publish(Datatype* d, MPI_Datatype* newtype) {
  *newtype = new_datatype_handle(d);
  return MPI_SUCCESS;
}

int combiner_value(Combiner c) {
  static constexpr int kValue[] = {  // in Combiner's order
      MPI_COMBINER_NAMED,          MPI_COMBINER_DUP,           MPI_COMBINER_CONTIGUOUS,     MPI_COMBINER_VECTOR,
      MPI_COMBINER_HVECTOR,        MPI_COMBINER_INDEXED,       MPI_COMBINER_HINDEXED,       MPI_COMBINER_INDEXED_BLOCK,
      MPI_COMBINER_HINDEXED_BLOCK, MPI_COMBINER_STRUCT,        MPI_COMBINER_SUBARRAY,       MPI_COMBINER_RESIZED,
      MPI_COMBINER_HVECTOR_INTEGER, MPI_COMBINER_HINDEXED_INTEGER, MPI_COMBINER_STRUCT_INTEGER,
      MPI_COMBINER_DARRAY,         MPI_COMBINER_F90_REAL,      MPI_COMBINER_F90_COMPLEX,    MPI_COMBINER_F90_INTEGER};
  static_assert(std::size(kValue) == size_t(Combiner::f90_integer) + 1);
  return kValue[size_t(c)];
}

void write_status_bytes(MPI_Status* st, size_t bytes) {
  st->count_lo = int(uint32_t(bytes));
  st->count_hi_and_cancelled =
      int((uint32_t(bytes >> 32) << 1) | (uint32_t(st->count_hi_and_cancelled) & 1u));
}

int query_type(const char* fn, MPI_Datatype h, const Datatype** d) {
  *d = lookup_datatype(h);
  if (!*d) return bad_type(fn, h, "datatype");
  return MPI_SUCCESS;
}

// The vector constructors: count blocks of blocklength oldtypes at `where` (a stride, or the
// displacements of the block-indexed forms); `make` lays them out.
template <class Where>
int vector_type(const char* fn, int count, int blocklength, Where where, MPI_Datatype oldtype, MPI_Datatype* newtype,
                Datatype* (*make)(int, int, Where, const Datatype*)) {
  WEFT_REQUIRE_INIT(fn);
  const Datatype* old;
  constexpr bool indexed = std::is_pointer_v<Where>;
  const void* displacements = nullptr;
  if constexpr (indexed) displacements = where;
  if (int rc = check_vector(fn, count, blocklength, oldtype, newtype, &old, indexed, displacements)) return rc;
  return publish(make(count, blocklength, where, old), newtype);
}

template <class Count>  // int, or MPI_Count (the _c form; its MPI_Count displacements are MPI_Aints)
int do_hindexed(const char* fn, Count count, const Count* bl, const MPI_Aint* disps, MPI_Datatype oldtype,
                MPI_Datatype* newtype) {
  WEFT_REQUIRE_INIT(fn);
  const Datatype* old;
  if (int rc = check_blocks(fn, count, bl, disps)) return rc;
  if (int rc = check_old(fn, oldtype, newtype, &old)) return rc;
  return publish(make_hindexed(count, bl, disps, old), newtype);
}

int do_struct(const char* fn, int count, const int* bl, const MPI_Aint* disps, const MPI_Datatype* types,
              MPI_Datatype* newtype) {
  WEFT_REQUIRE_INIT(fn);
  if (int rc = check_blocks(fn, count, bl, disps)) return rc;
  if (int rc = check_array(fn, count, types, "array_of_types")) return rc;
  std::vector<const Datatype*> ts;
  // MPI-1's bound markers (MPI_LB, MPI_UB) set the new type's bounds; the other entries make it.
  std::vector<int> marked_bl;
  std::vector<MPI_Aint> marked_disps;
  std::optional<MPI_Aint> lb, ub;
  for (int i = 0; i < count; ++i) {
    if (types[i] == MPI_LB || types[i] == MPI_UB) {
      std::optional<MPI_Aint>& bound = types[i] == MPI_LB ? lb : ub;
      bound = !bound ? disps[i] : types[i] == MPI_LB ? std::min(*bound, disps[i]) : std::max(*bound, disps[i]);
      continue;
    }
    const Datatype* t = lookup_datatype(types[i]);
    if (!t) {
      char arg[48];
      snprintf(arg, sizeof arg, "array_of_types[%d]", i);
      return bad_type(fn, types[i], arg);
    }
    ts.push_back(t);
    marked_bl.push_back(bl[i]);
    marked_disps.push_back(disps[i]);
  }
  if (!newtype) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "newtype is NULL");
  if (!lb && !ub) return publish(make_struct(count, bl, disps, ts.data()), newtype);
  return publish(make_struct_marked(int(ts.size()), marked_bl.data(), marked_disps.data(), ts.data(),
                                    lb ? &*lb : nullptr, ub ? &*ub : nullptr),
                 newtype);
}

// The extent queries: (lb, extent) or (true_lb, true_extent), as MPI_Aint or MPI_Count.
template <class T>
int extent_query(const char* fn, MPI_Datatype datatype, T* lb, T* extent, bool true_extent,
                 const char* null_message = nullptr) {
  const Datatype* d;
  if (int rc = query_type(fn, datatype, &d)) return rc;
  if (!lb || !extent)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "%s",
                 null_message ? null_message : true_extent ? "true_lb or true_extent is NULL" : "lb or extent is NULL");
  *lb = true_extent ? d->true_lb : d->lb;
  *extent = true_extent ? d->true_extent : d->extent;
  return MPI_SUCCESS;
}

// MPI_Type_size(_x): *count gets the size.
template <class T>
int type_size(const char* fn, MPI_Datatype datatype, T* size, MPI_Count* count) {
  const Datatype* d;
  if (int rc = query_type(fn, datatype, &d)) return rc;
  if (!size) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "size is NULL");
  *count = MPI_Count(d->size);
  return MPI_SUCCESS;
}

int set_elements(const char* fn, MPI_Status* status, MPI_Datatype datatype, long long count) {
  if (!status || status == MPI_STATUS_IGNORE) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "status is NULL");
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %lld (argument 'count')", count);
  const Datatype* d;
  if (int rc = query_type(fn, datatype, &d)) return rc;
  write_status_bytes(status, bytes_of_basic_elements(d, size_t(count)));
  return MPI_SUCCESS;
}

// MPI_Pack (packing) and MPI_Unpack: `count` elements of the user's buffer to or from *position
// of a packed buffer of `size` bytes, and *position past them.
int pack_call(const char* fn, bool packing, MPI_Count count, MPI_Datatype datatype, const void* inbuf, void* outbuf,
              MPI_Count size, MPI_Count* position, MPI_Comm comm) {
  WEFT_REQUIRE_INIT(fn);
  const Datatype* d;
  const char* count_arg = packing ? "incount" : "outcount";
  const char* size_arg = packing ? "outsize" : "insize";
  if (!lookup_comm(comm)) return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator (argument 'comm')");
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %ld (argument '%s')", long(count), count_arg);
  if (int rc = check_datatype(comm, fn, datatype, &d)) return rc;
  if (!position) return raise(comm, MPI_ERR_ARG, fn, "position is NULL");
  if (size < 0) return raise(comm, MPI_ERR_ARG, fn, "negative %s %ld", size_arg, long(size));
  const size_t bytes = type_packed_size(d, size_t(count));
  if (*position < 0 || size_t(*position) + bytes > size_t(size))
    return packing ? raise(comm, MPI_ERR_TRUNCATE, fn,
                           "%zu packed bytes at position %ld do not fit in outsize %ld (argument 'outsize')",
                           bytes, long(*position), long(size))
                   : raise(comm, MPI_ERR_TRUNCATE, fn,
                           "unpacking %zu bytes at position %ld runs past insize %ld (argument 'insize')",
                           bytes, long(*position), long(size));
  // The typed side may be MPI_BOTTOM (NULL) under a derived type of absolute addresses; the
  // packed side may not.
  const void* typed = packing ? inbuf : outbuf;
  if (bytes && !(packing ? outbuf : inbuf))
    return raise(comm, MPI_ERR_BUFFER, fn, "%s is NULL", packing ? "outbuf" : "inbuf");
  if (bytes && !typed && d->predefined)
    return raise(comm, MPI_ERR_BUFFER, fn, "%s is NULL", packing ? "inbuf" : "outbuf");
  if (packing) type_pack(d, inbuf, size_t(count), static_cast<char*>(outbuf) + *position, 0, SIZE_MAX);
  else type_unpack(d, static_cast<const char*>(inbuf) + *position, bytes, outbuf, size_t(count), 0);
  *position += MPI_Count(bytes);
  return MPI_SUCCESS;
}

// pack_call with an int position (the MPI-3 forms): it stays below size, an int.
int pack_call_int(const char* fn, bool packing, int count, MPI_Datatype datatype, const void* inbuf, void* outbuf,
                  int size, int* position, MPI_Comm comm) {
  MPI_Count at = position ? *position : 0;
  int rc = pack_call(fn, packing, count, datatype, inbuf, outbuf, size, position ? &at : nullptr, comm);
  if (rc == MPI_SUCCESS) *position = int(at);
  return rc;
}

// MPI_Pack_size: *size gets the packed size of incount elements, at most max.
int pack_size(const char* fn, MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size, MPI_Count max) {
  WEFT_REQUIRE_INIT(fn);
  if (!lookup_comm(comm)) return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator (argument 'comm')");
  if (incount < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %ld (argument 'incount')", long(incount));
  const Datatype* d = lookup_datatype(datatype);
  if (!d) return raise(comm, MPI_ERR_TYPE, fn, "invalid datatype 0x%x (argument 'datatype')", unsigned(datatype));
  if (!size) return raise(comm, MPI_ERR_ARG, fn, "size is NULL");
  size_t bytes = type_packed_size(d, size_t(incount));
  if (bytes > size_t(max)) return raise(comm, MPI_ERR_COUNT, fn, "packed size %zu does not fit in an int", bytes);
  *size = MPI_Count(bytes);
  return MPI_SUCCESS;
}

int contiguous(const char* fn, MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_REQUIRE_INIT(fn);
  const Datatype* old;
  if (int rc = check_count(fn, count)) return rc;
  if (int rc = check_old(fn, oldtype, newtype, &old)) return rc;
  return publish(make_contiguous(count, old), newtype);
}

}  // namespace

extern "C" {

// ---- Constructors ----

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return contiguous("MPI_Type_contiguous", count, oldtype, newtype);
}

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return vector_type("MPI_Type_vector", count, blocklength, stride, oldtype, newtype, make_vector);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return vector_type<ptrdiff_t>("MPI_Type_create_hvector", count, blocklength, stride, oldtype, newtype, make_hvector);
}

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return vector_type<ptrdiff_t>("MPI_Type_hvector", count, blocklength, stride, oldtype, newtype, make_hvector);
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_indexed";
  WEFT_REQUIRE_INIT(fn);
  const Datatype* old;
  if (int rc = check_blocks(fn, count, array_of_blocklengths, array_of_displacements)) return rc;
  if (int rc = check_old(fn, oldtype, newtype, &old)) return rc;
  return publish(make_indexed(count, array_of_blocklengths, array_of_displacements, old), newtype);
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return do_hindexed("MPI_Type_create_hindexed", count, array_of_blocklengths, array_of_displacements, oldtype,
                     newtype);
}

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return do_hindexed("MPI_Type_hindexed", count, array_of_blocklengths, array_of_displacements, oldtype, newtype);
}

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  static_assert(std::is_same_v<MPI_Count, MPI_Aint> && std::is_same_v<MPI_Count, int64_t>);
  return do_hindexed("MPI_Type_create_hindexed_c", count, array_of_blocklengths, array_of_displacements, oldtype,
                     newtype);
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return vector_type("MPI_Type_create_indexed_block", count, blocklength, array_of_displacements, oldtype, newtype,
                     make_indexed_block);
}

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return vector_type<const ptrdiff_t*>("MPI_Type_create_hindexed_block", count, blocklength, array_of_displacements,
                                       oldtype, newtype, make_hindexed_block);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return do_struct("MPI_Type_create_struct", count, array_of_blocklengths, array_of_displacements, array_of_types,
                   newtype);
}

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return do_struct("MPI_Type_struct", count, array_of_blocklengths, array_of_displacements, array_of_types,
                   newtype);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_create_resized";
  WEFT_REQUIRE_INIT(fn);
  const Datatype* old;
  if (int rc = check_old(fn, oldtype, newtype, &old)) return rc;
  return publish(make_resized(old, lb, extent), newtype);
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_create_subarray";
  WEFT_REQUIRE_INIT(fn);
  if (ndims <= 0) return raise(MPI_COMM_NULL, MPI_ERR_DIMS, fn, "ndims %d is not positive (argument 'ndims')", ndims);
  if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "array_of_sizes, array_of_subsizes or array_of_starts is NULL");
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "invalid order %d (argument 'order': MPI_ORDER_C or MPI_ORDER_FORTRAN)",
                 order);
  for (int i = 0; i < ndims; ++i) {
    int sz = array_of_sizes[i], sub = array_of_subsizes[i], st = array_of_starts[i];
    if (sz <= 0)
      return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "array_of_sizes[%d] = %d is not positive", i, sz);
    if (sub < 0 || sub > sz)
      return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "array_of_subsizes[%d] = %d is outside [0, %d]", i, sub, sz);
    if (st < 0 || st > sz - sub)
      return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn,
                   "array_of_starts[%d] = %d is outside [0, %d] (array_of_sizes[%d] - array_of_subsizes[%d])", i,
                   st, sz - sub, i, i);
  }
  const Datatype* old;
  if (int rc = check_old(fn, oldtype, newtype, &old)) return rc;
  return publish(make_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                               order == MPI_ORDER_FORTRAN, old),
                 newtype);
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_dup";
  WEFT_REQUIRE_INIT(fn);
  const Datatype* old;
  if (int rc = check_old(fn, oldtype, newtype, &old)) return rc;
  MPI_Datatype dup;
  if (int rc = publish(make_dup(old), &dup)) return rc;
  if (int rc = copy_type_attributes(oldtype, dup); rc != MPI_SUCCESS) {
    (void)delete_type_attributes(dup);  // the values copied before the failing one
    derived().release(handle::index_of(dup) - kFirstDerived);
    *newtype = MPI_DATATYPE_NULL;
    return rc;
  }
  *newtype = dup;
  return MPI_SUCCESS;
}

int PMPI_Type_commit(MPI_Datatype* datatype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_commit";
  WEFT_REQUIRE_INIT(fn);
  if (!datatype) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "datatype is NULL");
  Datatype* d = lookup_mutable(*datatype);
  if (!d) return bad_type(fn, *datatype, "datatype");
  d->committed = true;  // the layout is built by the constructor; nothing more to do
  return MPI_SUCCESS;
}

int PMPI_Type_free(MPI_Datatype* datatype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_free";
  WEFT_REQUIRE_INIT(fn);
  if (!datatype) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "datatype is NULL");
  const Datatype* d = lookup_datatype(*datatype);
  if (!d) return bad_type(fn, *datatype, "datatype");
  if (d->predefined)
    return raise(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "cannot free predefined datatype %s (argument 'datatype')",
                 d->name.c_str());
  if (int rc = delete_type_attributes(*datatype); rc != MPI_SUCCESS) return rc;
  derived().release(handle::index_of(*datatype) - kFirstDerived);  // operations in flight hold their own
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

// ---- Queries ----

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  WEFT_ENTRY;
  MPI_Count n = 0;
  if (int rc = type_size("MPI_Type_size", datatype, size, &n)) return rc;
  *size = n > INT_MAX ? MPI_UNDEFINED : int(n);
  return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  WEFT_ENTRY;
  return type_size("MPI_Type_size_x", datatype, size, size);
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  WEFT_ENTRY;
  return extent_query("MPI_Type_get_extent", datatype, lb, extent, false);
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  WEFT_ENTRY;
  return extent_query("MPI_Type_get_extent_x", datatype, lb, extent, false);
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  WEFT_ENTRY;
  return extent_query("MPI_Type_get_true_extent", datatype, true_lb, true_extent, true);
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  WEFT_ENTRY;
  return extent_query("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent, true);
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  WEFT_ENTRY;
  MPI_Aint lb = 0;
  return extent_query("MPI_Type_extent", datatype, extent ? &lb : nullptr, extent, false, "extent is NULL");
}

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  WEFT_ENTRY;
  MPI_Aint extent = 0;
  return extent_query("MPI_Type_lb", datatype, displacement, displacement ? &extent : nullptr, false,
                      "displacement is NULL");
}

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  WEFT_ENTRY;
  MPI_Aint extent = 0;
  int rc = extent_query("MPI_Type_ub", datatype, displacement, displacement ? &extent : nullptr, false,
                        "displacement is NULL");
  if (rc == MPI_SUCCESS) *displacement += extent;
  return rc;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes,
                           int* combiner) {
  WEFT_ENTRY;
  const Datatype* d;
  if (int rc = query_type("MPI_Type_get_envelope", datatype, &d)) return rc;
  if (!num_integers || !num_addresses || !num_datatypes || !combiner)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_get_envelope",
                 "num_integers, num_addresses, num_datatypes or combiner is NULL");
  *num_integers = int(d->ints.size());
  *num_addresses = int(d->aints.size());
  *num_datatypes = int(d->types.size());
  *combiner = combiner_value(d->combiner);
  return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int array_of_integers[], MPI_Aint array_of_addresses[],
                           MPI_Datatype array_of_datatypes[]) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_get_contents";
  const Datatype* d;
  if (int rc = query_type(fn, datatype, &d)) return rc;
  if (d->combiner == Combiner::named)
    return raise(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "%s is a predefined datatype (combiner MPI_COMBINER_NAMED)",
                 d->name.c_str());
  if (max_integers < int(d->ints.size()) || max_addresses < int(d->aints.size()) ||
      max_datatypes < int(d->types.size()))
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn,
                 "arrays too small: need max_integers >= %zu, max_addresses >= %zu, max_datatypes >= %zu",
                 d->ints.size(), d->aints.size(), d->types.size());
  if ((!d->ints.empty() && !array_of_integers) || (!d->aints.empty() && !array_of_addresses) ||
      (!d->types.empty() && !array_of_datatypes))
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "array_of_integers, array_of_addresses or array_of_datatypes is NULL");
  std::vector<const Datatype*> children(d->types.size());
  type_contents(*d, array_of_integers, array_of_addresses, children.data());
  for (size_t i = 0; i < children.size(); ++i) array_of_datatypes[i] = handle_of(children[i]);
  return MPI_SUCCESS;
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  WEFT_ENTRY;
  Datatype* d = lookup_mutable(datatype);
  if (!d) return bad_type("MPI_Type_set_name", datatype, "datatype");
  if (!type_name) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_set_name", "type_name is NULL");
  d->name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  WEFT_ENTRY;
  const Datatype* d = lookup_datatype(datatype);
  const bool marker = datatype == MPI_LB || datatype == MPI_UB;  // named, though no datatype
  if (!d && !marker) return bad_type("MPI_Type_get_name", datatype, "datatype");
  if (!type_name || !resultlen) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_get_name", "type_name or resultlen is NULL");
  copy_string(d ? d->name : datatype == MPI_LB ? "MPI_LB" : "MPI_UB", MPI_MAX_OBJECT_NAME, type_name, resultlen);
  return MPI_SUCCESS;
}

// The predefined type of a class and size (the first of its class that has the size).
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_match_size";
  WEFT_REQUIRE_INIT(fn);
  if (!datatype) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "datatype is NULL");
  static const std::vector<MPI_Datatype> kReal{MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
  static const std::vector<MPI_Datatype> kInteger{MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG};
  static const std::vector<MPI_Datatype> kComplex{MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                                  MPI_C_LONG_DOUBLE_COMPLEX};
  const std::vector<MPI_Datatype>* types = typeclass == MPI_TYPECLASS_REAL      ? &kReal
                                           : typeclass == MPI_TYPECLASS_INTEGER ? &kInteger
                                           : typeclass == MPI_TYPECLASS_COMPLEX ? &kComplex
                                                                                : nullptr;
  if (!types) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "invalid type class %d (argument 'typeclass')", typeclass);
  for (MPI_Datatype t : *types) {
    if (lookup_datatype(t)->size == size_t(size)) {
      *datatype = t;
      return MPI_SUCCESS;
    }
  }
  return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "no predefined type of class %d has size %d", typeclass, size);
}

// ---- Addresses ----

int PMPI_Get_address(const void* location, MPI_Aint* address) {
  WEFT_ENTRY;
  if (!address) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_address", "address is NULL");
  *address = MPI_Aint(reinterpret_cast<uintptr_t>(location));
  return MPI_SUCCESS;
}

int PMPI_Address(void* location, MPI_Aint* address) {
  WEFT_ENTRY;
  if (!address) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Address", "address is NULL");
  return PMPI_Get_address(location, address);
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  WEFT_ENTRY;
  return MPI_Aint(uintptr_t(base) + uintptr_t(disp));
}

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  WEFT_ENTRY;
  return MPI_Aint(uintptr_t(addr1) - uintptr_t(addr2));
}

// ---- Packing ----

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
              MPI_Comm comm) {
  WEFT_ENTRY;
  return pack_call_int("MPI_Pack", true, incount, datatype, inbuf, outbuf, outsize, position, comm);
}

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm) {
  WEFT_ENTRY;
  return pack_call_int("MPI_Unpack", false, outcount, datatype, inbuf, outbuf, insize, position, comm);
}

int PMPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                MPI_Count* position, MPI_Comm comm) {
  WEFT_ENTRY;
  return pack_call("MPI_Pack_c", true, incount, datatype, inbuf, outbuf, outsize, position, comm);
}

int PMPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm) {
  WEFT_ENTRY;
  return pack_call("MPI_Unpack_c", false, outcount, datatype, inbuf, outbuf, insize, position, comm);
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  WEFT_ENTRY;
  MPI_Count n = 0;
  int rc = pack_size("MPI_Pack_size", incount, datatype, comm, size ? &n : nullptr, INT_MAX);
  if (rc == MPI_SUCCESS) *size = int(n);
  return rc;
}

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size) {
  WEFT_ENTRY;
  return pack_size("MPI_Pack_size_c", incount, datatype, comm, size, INT64_MAX);
}

// ---- Elements in a status ----

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  WEFT_ENTRY;
  const char* fn = "MPI_Get_elements_x";
  if (!status || status == MPI_STATUS_IGNORE || !count)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "status or count is NULL");
  const Datatype* d;
  if (int rc = query_type(fn, datatype, &d)) return rc;
  bool exact = true;
  const size_t n = count_basic_elements(d, status_bytes(status), &exact);
  *count = exact ? MPI_Count(n) : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  WEFT_ENTRY;
  return set_elements("MPI_Status_set_elements_x", status, datatype, (long long)count);
}

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  WEFT_ENTRY;
  return set_elements("MPI_Status_set_elements", status, datatype, count);
}

}  // extern "C"

WEFT_PMPI_ALIASES(Type_contiguous, Type_vector, Type_hvector, Type_create_hvector, Type_indexed,
                  Type_hindexed, Type_create_hindexed, Type_create_indexed_block,
                  Type_create_hindexed_block, Type_create_struct, Type_struct, Type_create_resized,
                  Type_create_subarray, Type_dup, Type_commit, Type_free, Type_size, Type_size_x,
                  Type_get_extent, Type_get_extent_x, Type_get_true_extent, Type_get_true_extent_x,
                  Type_extent, Type_lb, Type_ub, Type_get_envelope, Type_get_contents,
                  Type_set_name, Type_get_name, Type_match_size, Get_address, Address, Aint_add, Aint_diff, Pack,
                  Unpack, Pack_size, Get_elements_x, Status_set_elements, Status_set_elements_x, Pack_c,
                  Unpack_c, Pack_size_c, Type_contiguous_c, Type_create_hindexed_c)
