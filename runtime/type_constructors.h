// The MPI type constructors over the derived-datatype engine (runtime/typemap.h): each takes
// the arguments in MPI's shape (element units, int arrays), builds the type map and records
// the envelope (combiner, integer and address arguments) that MPI_Type_get_contents returns.
// Arguments are valid (the MPI layer checks them); each returns a new type with one reference.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/datatype.h"

namespace weft {

Datatype* make_contiguous(int64_t count, const Datatype* old);  // MPI_Type_contiguous(_c)
Datatype* make_vector(int count, int blocklength, int stride, const Datatype* old);
Datatype* make_hvector(int count, int blocklength, ptrdiff_t stride, const Datatype* old);
Datatype* make_indexed(int count, const int* blocklengths, const int* displacements, const Datatype* old);
Datatype* make_hindexed(int count, const int* blocklengths, const ptrdiff_t* displacements,
                        const Datatype* old);
// MPI_Type_create_hindexed_c: large counts and block lengths.
Datatype* make_hindexed(int64_t count, const int64_t* blocklengths, const ptrdiff_t* displacements,
                        const Datatype* old);
Datatype* make_indexed_block(int count, int blocklength, const int* displacements, const Datatype* old);
Datatype* make_hindexed_block(int count, int blocklength, const ptrdiff_t* displacements,
                              const Datatype* old);
Datatype* make_struct(int count, const int* blocklengths, const ptrdiff_t* displacements,
                      const Datatype* const* types);
Datatype* make_resized(const Datatype* old, ptrdiff_t lb, ptrdiff_t extent);
// MPI-1's struct with MPI_LB and MPI_UB markers, the markers given apart (lb: the lowest LB
// displacement, ub: the highest UB one; nullptr where there is none): the struct of the other
// entries, resized to the markers' bounds (its own bound where a marker is missing). Its
// envelope is the resize's.
Datatype* make_struct_marked(int count, const int* blocklengths, const ptrdiff_t* displacements,
                             const Datatype* const* types, const ptrdiff_t* lb, const ptrdiff_t* ub);
// order_value: the MPI order constant, recorded as given; fortran_order: dimension 0 varies
// fastest.
Datatype* make_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts,
                        int order_value, bool fortran_order, const Datatype* old);
// A copy with the same layout, committed if old is.
Datatype* make_dup(const Datatype* old);

// A predefined type of `size` data bytes of `basic` that travels as its extent (padding of
// the (value, index) pairs included). Its basic elements (2 for pairs) and alignment follow
// from `basic`; for BasicType::none, from `part`, the size of one basic element (MPI_2REAL: 4),
// aligned to it up to 16 bytes.
void init_predefined(Datatype& d, const char* name, BasicType basic, size_t size, size_t part);

// Derived types by slot (the index part of their handles). Each slot owns one reference;
// freed slots are reused, so create/free loops do not grow the table.
class TypeSlots {
 public:
  uint32_t add(Datatype* d);  // takes over the caller's reference
  Datatype* get(uint32_t slot) const { return slot < slots_.size() ? slots_[slot] : nullptr; }
  void release(uint32_t slot);  // drops the slot's reference (operations in flight hold their own)

 private:
  std::vector<Datatype*> slots_;
  std::vector<uint32_t> free_;
};

// The constructor's arguments (MPI_Type_get_contents): d.ints.size() integers, d.aints.size()
// addresses and d.types.size() datatypes, each derived one with a reference taken for the caller
// (the same immutable layout: no copy is made).
void type_contents(const Datatype& d, int* ints, ptrdiff_t* aints, const Datatype** types);

}  // namespace weft
