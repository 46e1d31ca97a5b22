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

/* The survivors' own communicator, made while every rank lives (survivors_split, right after
 * MPI_Init): a failure is contagious within a communicator that holds the dead rank, so the
 * survivors meet on one that does not. */
static MPI_Comm survivors_comm = MPI_COMM_NULL;
static inline void survivors_split(int rank, int dead) {
  MPI_Comm_split(MPI_COMM_WORLD, rank == dead ? MPI_UNDEFINED : 0, rank, &survivors_comm);
  if (survivors_comm != MPI_COMM_NULL) MPI_Comm_set_errhandler(survivors_comm, MPI_ERRORS_RETURN);
}

/* The survivors meet before exiting, so none leaves while another may still need its progress.
 * The first to finish the meeting still lingers, driving progress, before it returns: the
 * programs exit without MPI_Finalize (a peer is gone), an exit takes the messages it has not
 * flushed with it, and a survivor still in the meeting counts that exit as a failure.
 * Returns whether every survivor was ok. */
static inline int survivors_meet(int rank, int size, int dead, int ok) {
  int all = 0;
  (void)size;
  (void)dead;
  if (survivors_comm == MPI_COMM_NULL) return ok;
  if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, survivors_comm) != MPI_SUCCESS) {
    printf("FAIL rank %d: the survivors could not meet on their own communicator\n", rank);
    return 0;
  }
  if (ok && !all) printf("rank %d: another survivor reported a failure\n", rank);
  const double until = MPI_Wtime() + 0.5;
  int flag = 0;
  while (MPI_Wtime() < until) (void)MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, survivors_comm, &flag, MPI_STATUS_IGNORE);
  return all;
}

#endif
