// Datatypes as the layers below the MPI bindings see them. mpi/ maps MPI handles to
// these objects; nothing here knows handle values. The derived-type engine (constructors,
// pack/unpack, element counting) is in typemap.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weft {

// The element type a reduction works on.
enum class BasicType : uint8_t {
  none,  // not reducible (MPI_BYTE is bitwise-only, see op.cpp; MPI_PACKED, derived types)
  byte,
  i8, u8, i16, u16, i32, u32, i64, u64,
  f16, bf16, f32, f64, f80,
  c_bool,
  cf32, cf64, cf80,
  // (value, index) pairs for MINLOC / MAXLOC
  float_int, double_int, long_int, short_int, int_int, long_double_int,
};

// The C++ type behind basic types, as X-macro lists X(tag, type), for the switches that pick a
// kernel or a layout by type (op.cpp on the host, op_gpu.cu on the GPU, datatype.cpp): the
// fixed-width integers, the float and double every path reduces, and the (value, index) pairs
// by their value type.
#define WEFT_INTEGER_TYPES(X)                                                                      \
  X(i8, int8_t) X(u8, uint8_t) X(i16, int16_t) X(u16, uint16_t)                                    \
  X(i32, int32_t) X(u32, uint32_t) X(i64, int64_t) X(u64, uint64_t)
#define WEFT_REAL_TYPES(X) X(f32, float) X(f64, double)
#define WEFT_PAIR_TYPES(X)                                                                         \
  X(float_int, float) X(double_int, double) X(long_int, long) X(short_int, short)                  \
  X(int_int, int) X(long_double_int, long double)

const char* basic_type_name(BasicType t);
size_t basic_type_size(BasicType t);
bool basic_type_is_pair(BasicType t);
// Alignment of the C type behind t (x86-64 / aarch64 ABI); 1 for none.
size_t basic_type_align(BasicType t);

// How a derived type was built (MPI_Type_get_envelope). The MPI layer maps these to the
// MPI_COMBINER_* values and keeps the constructor's arguments in Datatype::ints/aints.
enum class Combiner : uint8_t {
  named, dup, contiguous, vector, hvector, indexed, hindexed, indexed_block, hindexed_block,
  struct_, subarray, resized,
  hvector_integer, hindexed_integer, struct_integer,  // deprecated MPI-1 constructors
  darray,
  f90_real, f90_complex, f90_integer,  // MPI_Type_create_f90_*: a predefined type's twin
};

struct TypeLoop;  // typemap.h

struct Datatype {
  std::string name;
  size_t size = 0;          // MPI size: bytes of data in one element
  ptrdiff_t lb = 0;         // MPI lower bound
  ptrdiff_t extent = 0;     // MPI extent: stride between consecutive elements
  // `count` elements, packed, are the raw bytes [buf + true_lb, buf + true_lb + count * packed):
  // sent without packing. Always true for predefined types (the wire convention: they travel
  // as count * extent bytes, padding of the pair types included).
  bool contiguous = true;
  bool predefined = false;
  // Element type for reductions; set for predefined types only (derived: see elem_basic).
  BasicType basic = BasicType::none;

  // Derived-type engine. For predefined types: true_lb 0, true_extent = packed = extent.
  ptrdiff_t true_lb = 0;
  ptrdiff_t true_extent = 0;
  size_t packed = 0;        // bytes one element takes when packed (wire size); == extent for predefined
  size_t n_basic = 1;       // basic (predefined) elements in one element (pair types count 2)
  size_t align = 1;         // alignment used to pad struct extents
  bool dense = true;        // one element is a single contiguous run of `packed` bytes at true_lb
  // Homogeneous element type: every basic element is this type (none if mixed or not reducible).
  BasicType elem_basic = BasicType::none;
  bool committed = true;    // predefined types are; derived ones after MPI_Type_commit

  // Constructor record (MPI_Type_get_envelope / get_contents); children are retained.
  Combiner combiner = Combiner::named;
  std::vector<int64_t> ints;          // integer arguments, in MPI_Type_get_contents order
  std::vector<int64_t> aints;         // address arguments
  std::vector<const Datatype*> types; // datatype arguments (retained references)
  // Type signature as runs of (child, count), in typemap order: used for element counting.
  std::vector<std::pair<const Datatype*, size_t>> signature;
  std::shared_ptr<const TypeLoop> loop;  // layout; null for predefined types

  mutable int refs = 1;     // reference count of derived types (handles, pending operations)
};

}  // namespace weft
