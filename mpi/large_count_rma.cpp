// The large-count (MPI-4 _c) forms of the one-sided routines: each checks that its MPI_Count
// counts and MPI_Aint displacement units fit the int the window engine takes (one that does not
// is MPI_ERR_COUNT, or MPI_ERR_DISP), and calls the int form.
#include <climits>

#include "state.h"

namespace weft::mpi {

namespace {

// Each count of a one-sided call as an int; false when one does not fit (the error raised
// into *rc).
bool fit_counts(const char* fn, MPI_Win win, std::initializer_list<MPI_Count> counts, int* out, int* rc) {
  for (MPI_Count c : counts) {
    if (c < INT_MIN || c > INT_MAX) {
      *rc = raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn,
                  "count %ld is beyond the largest a one-sided call takes (%d) (window 0x%x)", long(c), INT_MAX,
                  unsigned(win));
      return false;
    }
    *out++ = int(c);
  }
  return true;
}

int fit_disp_unit(const char* fn, MPI_Aint disp_unit, int* out) {
  if (disp_unit < INT_MIN || disp_unit > INT_MAX)
    return raise(MPI_COMM_NULL, MPI_ERR_DISP, fn, "displacement unit %ld is beyond the largest supported (%d)",
                 long(disp_unit), INT_MAX);
  *out = int(disp_unit);
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

// Put_c/Rput_c and Get_c/Rget_c: origin and target counts.
#define WEFT_TRANSFER_C(Name, RName, Origin)                                                                              \
  int PMPI_##Name##_c(Origin origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,  \
                      MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win) {  \
    WEFT_ENTRY;                                                                                                    \
    int n[2], rc;                                                                                                  \
    if (!fit_counts("MPI_" #Name "_c", win, {origin_count, target_count}, n, &rc)) return rc;                      \
    return PMPI_##Name(origin_addr, n[0], origin_datatype, target_rank, target_disp, n[1], target_datatype, win);  \
  }                                                                                                                \
  int PMPI_##RName##_c(Origin origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, \
                       MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,  \
                       MPI_Request* request) {                                                                     \
    WEFT_ENTRY;                                                                                                    \
    int n[2], rc;                                                                                                  \
    if (!fit_counts("MPI_" #RName "_c", win, {origin_count, target_count}, n, &rc)) return rc;                     \
    return PMPI_##RName(origin_addr, n[0], origin_datatype, target_rank, target_disp, n[1], target_datatype, win,  \
                        request);                                                                                  \
  }

WEFT_TRANSFER_C(Put, Rput, const void*)
WEFT_TRANSFER_C(Get, Rget, void*)
#undef WEFT_TRANSFER_C

int PMPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                      MPI_Win win) {
  WEFT_ENTRY;
  int n[2], rc;
  if (!fit_counts("MPI_Accumulate_c", win, {origin_count, target_count}, n, &rc)) return rc;
  return PMPI_Accumulate(origin_addr, n[0], origin_datatype, target_rank, target_disp, n[1], target_datatype, op, win);
}

int PMPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                       MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                       MPI_Win win, MPI_Request* request) {
  WEFT_ENTRY;
  int n[2], rc;
  if (!fit_counts("MPI_Raccumulate_c", win, {origin_count, target_count}, n, &rc)) return rc;
  return PMPI_Raccumulate(origin_addr, n[0], origin_datatype, target_rank, target_disp, n[1], target_datatype, op, win,
                          request);
}

int PMPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          void* result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win) {
  WEFT_ENTRY;
  int n[3], rc;
  if (!fit_counts("MPI_Get_accumulate_c", win, {origin_count, result_count, target_count}, n, &rc)) return rc;
  return PMPI_Get_accumulate(origin_addr, n[0], origin_datatype, result_addr, n[1], result_datatype, target_rank,
                             target_disp, n[2], target_datatype, op, win);
}

int PMPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           void* result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                           MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request* request) {
  WEFT_ENTRY;
  int n[3], rc;
  if (!fit_counts("MPI_Rget_accumulate_c", win, {origin_count, result_count, target_count}, n, &rc)) return rc;
  return PMPI_Rget_accumulate(origin_addr, n[0], origin_datatype, result_addr, n[1], result_datatype, target_rank,
                              target_disp, n[2], target_datatype, op, win, request);
}

int PMPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  WEFT_ENTRY;
  int unit = 0;
  if (int rc = fit_disp_unit("MPI_Win_create_c", disp_unit, &unit)) return rc;
  return PMPI_Win_create(base, size, unit, info, comm, win);
}

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  WEFT_ENTRY;
  int unit = 0;
  if (int rc = fit_disp_unit("MPI_Win_allocate_c", disp_unit, &unit)) return rc;
  return PMPI_Win_allocate(size, unit, info, comm, baseptr, win);
}

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                               MPI_Win* win) {
  WEFT_ENTRY;
  int unit = 0;
  if (int rc = fit_disp_unit("MPI_Win_allocate_shared_c", disp_unit, &unit)) return rc;
  return PMPI_Win_allocate_shared(size, unit, info, comm, baseptr, win);
}

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit, void* baseptr) {
  WEFT_ENTRY;
  int unit = 0;
  int rc = PMPI_Win_shared_query(win, rank, size, disp_unit ? &unit : nullptr, baseptr);
  if (rc == MPI_SUCCESS) *disp_unit = unit;
  return rc;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Put_c, Rput_c, Get_c, Rget_c, Accumulate_c, Raccumulate_c, Get_accumulate_c, Rget_accumulate_c,
                  Win_create_c, Win_allocate_c, Win_allocate_shared_c, Win_shared_query_c)
