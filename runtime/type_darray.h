// MPI_Type_create_darray (MPI-4.0 §5.1.4): the part of a global array that one process of a
// process grid holds, by block, cyclic(k) or no distribution in each dimension.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/datatype.h"

namespace weft {

enum class Distribution : uint8_t { block, cyclic, none };

struct DarrayDim {
  size_t gsize = 1;  // elements of the global array in this dimension
  Distribution distribution = Distribution::none;
  size_t darg = 0;   // block size (0: the default, ceil(gsize / psize) for block, 1 for cyclic)
  size_t psize = 1;  // processes of the grid in this dimension
};

// The elements of oldtype that `rank` holds, in a grid of processes numbered in row-major order
// (as MPI_Cart_create numbers them, whatever the array's order). fortran_order: dimension 0 of
// the array varies fastest. Lower bound 0 and extent the whole global array's, as a subarray's
// (MPICH's too), whatever oldtype's lower bound. Arguments
// are valid (the MPI layer checks them: the grid's size is the product of the psizes, a block
// distribution's darg * psize covers gsize, a dimension not distributed has psize 1). `ints`:
// the MPI arguments, recorded for MPI_Type_get_contents (combiner darray, one datatype: old).
Datatype* make_darray(size_t rank, const std::vector<DarrayDim>& dims, bool fortran_order, const Datatype* old,
                      std::vector<int64_t> ints);

}  // namespace weft
