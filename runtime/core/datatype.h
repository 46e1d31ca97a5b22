// Datatypes as the layers below the MPI bindings see them. runtime/mpi maps MPI handles to
// these objects; nothing here knows handle values.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

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

const char* basic_type_name(BasicType t);
size_t basic_type_size(BasicType t);

struct Datatype {
  std::string name;
  size_t size = 0;          // bytes of data in one element
  ptrdiff_t lb = 0;         // lower bound
  ptrdiff_t extent = 0;     // stride between consecutive elements
  bool contiguous = true;   // size == extent and no holes: sent without packing
  bool predefined = false;
  BasicType basic = BasicType::none;  // element type for reductions, when homogeneous
};

}  // namespace weft
