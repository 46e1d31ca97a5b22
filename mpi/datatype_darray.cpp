// MPI_Type_create_darray: argument checks and the MPI constants' translation; the
// distribution itself is runtime/type_darray.h's.
#include <vector>

#include "runtime/type_darray.h"
#include "state.h"

using namespace weft;
using namespace weft::mpi;

namespace {

// Checks dimension i and translates it, or raises the error.
int darray_dim(const char* fn, int i, int gsize, int distrib, int darg, int psize, DarrayDim* out) {
  auto bad = [&](const char* what, int value) {
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "%s[%d] = %d is invalid", what, i, value);
  };
  if (gsize <= 0) return bad("array_of_gsizes", gsize);
  if (psize <= 0) return bad("array_of_psizes", psize);
  if (distrib != MPI_DISTRIBUTE_BLOCK && distrib != MPI_DISTRIBUTE_CYCLIC && distrib != MPI_DISTRIBUTE_NONE)
    return bad("array_of_distribs", distrib);
  if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0) return bad("array_of_dargs", darg);
  if (distrib == MPI_DISTRIBUTE_NONE && psize != 1)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn,
                 "array_of_psizes[%d] = %d for MPI_DISTRIBUTE_NONE (a dimension not distributed has 1 process)", i,
                 psize);
  if (distrib == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG && int64_t(darg) * psize < gsize)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn,
                 "array_of_dargs[%d] = %d blocks of %d processes do not cover array_of_gsizes[%d] = %d", i, darg,
                 psize, i, gsize);
  out->gsize = size_t(gsize);
  out->psize = size_t(psize);
  out->distribution = distrib == MPI_DISTRIBUTE_BLOCK    ? Distribution::block
                      : distrib == MPI_DISTRIBUTE_CYCLIC ? Distribution::cyclic
                                                         : Distribution::none;
  out->darg = darg == MPI_DISTRIBUTE_DFLT_DARG || distrib == MPI_DISTRIBUTE_NONE ? 0 : size_t(darg);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                            const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_create_darray";
  WEFT_REQUIRE_INIT(fn);
  if (size <= 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "size %d is not positive (argument 'size')", size);
  if (rank < 0 || rank >= size)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "rank %d is outside [0, %d] (argument 'rank')", rank, size - 1);
  if (ndims <= 0) return raise(MPI_COMM_NULL, MPI_ERR_DIMS, fn, "ndims %d is not positive (argument 'ndims')", ndims);
  if (!array_of_gsizes || !array_of_distribs || !array_of_dargs || !array_of_psizes)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn,
                 "array_of_gsizes, array_of_distribs, array_of_dargs or array_of_psizes is NULL");
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "invalid order %d (argument 'order': MPI_ORDER_C or MPI_ORDER_FORTRAN)",
                 order);
  std::vector<DarrayDim> dims(static_cast<size_t>(ndims));
  int64_t procs = 1;
  for (int i = 0; i < ndims; ++i) {
    if (int rc = darray_dim(fn, i, array_of_gsizes[i], array_of_distribs[i], array_of_dargs[i], array_of_psizes[i],
                            &dims[size_t(i)]))
      return rc;
    procs *= array_of_psizes[i];
    if (procs > size) break;
  }
  if (procs != size)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "the product of array_of_psizes is not size %d", size);
  const Datatype* old = lookup_datatype(oldtype);
  if (!old)
    return raise(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype 0x%x (argument 'oldtype')", unsigned(oldtype));
  if (!newtype) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "newtype is NULL");
  std::vector<int64_t> ints{size, rank, ndims};
  for (const int* a : {array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes})
    ints.insert(ints.end(), a, a + ndims);
  ints.push_back(order);
  *newtype = new_datatype_handle(make_darray(size_t(rank), dims, order == MPI_ORDER_FORTRAN, old, std::move(ints)));
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Type_create_darray)
