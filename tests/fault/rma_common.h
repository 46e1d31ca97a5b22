/* Helpers of the one-sided fault tests: a window of one int64 slot per rank in the flavor a
 * test names, error checks, and the survivors' meeting before they exit. */
#ifndef WEFT_FAULT_RMA_COMMON_H
#define WEFT_FAULT_RMA_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* flavor: allocate (MPI_Win_allocate), create (MPI_Win_create on malloc'd memory) or shared
 * (MPI_Win_allocate_shared; every rank of the job must be on one node). *mem: this rank's
 * slots (size int64 each), zeroed. */
static inline int make_window(const char *flavor, int size, int64_t **mem, MPI_Win *win) {
  const MPI_Aint bytes = (MPI_Aint)size * 8;
  int rc;
  if (strcmp(flavor, "allocate") == 0) {
    rc = MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, mem, win);
  } else if (strcmp(flavor, "create") == 0) {
    *mem = calloc((size_t)size, 8);
    rc = MPI_Win_create(*mem, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win);
  } else if (strcmp(flavor, "shared") == 0) {
    rc = MPI_Win_allocate_shared(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, mem, win);
  } else {
    printf("FAIL unknown window flavor '%s'\n", flavor);
    return 1;
  }
  if (rc != MPI_SUCCESS) {
    printf("FAIL window of flavor %s not created (error %d)\n", flavor, rc);
    return 1;
  }
  memset(*mem, 0, (size_t)bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  return 0;
}

/* Whether rc is MPIX_ERR_PROC_FAILED with a message naming "rank <dead>"; says so either way. */
static inline int is_proc_failed(int rank, const char *call, int rc, int dead) {
  char msg[MPI_MAX_ERROR_STRING] = "", want[32];
  int cls = -1, len = 0;
  if (rc == MPI_SUCCESS) {
    printf("FAIL rank %d: %s succeeded although rank %d is dead\n", rank, call, dead);
    return 0;
  }
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, msg, &len);
  snprintf(want, sizeof want, "rank %d ", dead);
  if (cls != MPIX_ERR_PROC_FAILED || strstr(msg, want) == NULL) {
    printf("FAIL rank %d: %s returned class %d (%s); expected the process-failure class naming rank %d\n", rank, call, cls,
           msg, dead);
    return 0;
  }
  printf("rank %d: %s: process failure reported: %s\n", rank, call, msg);
  return 1;
}

/* The survivors (every rank but `dead`) meet at the lowest of them before exiting, so none
 * leaves while another may still need its progress (point-to-point among live ranks only).
 * Returns, at the lowest survivor, whether every survivor was ok (a survivor that crashed
 * fails the receive); elsewhere, its own ok. */
static inline int survivors_meet(int rank, int size, int dead, int ok) {
  const int first = dead == 0 ? 1 : 0;
  int token = ok, r;
  if (rank == first) {
    for (r = 0; r < size; ++r) {
      if (r == first || r == dead) continue;
      if (MPI_Recv(&token, 1, MPI_INT, r, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS || !token) {
        printf("FAIL rank %d: survivor %d did not report success\n", rank, r);
        ok = 0;
      }
    }
    for (r = 0; r < size; ++r)
      if (r != first && r != dead) MPI_Send(&token, 1, MPI_INT, r, 78, MPI_COMM_WORLD);
  } else {
    MPI_Send(&token, 1, MPI_INT, first, 77, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_INT, first, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return ok;
}

#endif
