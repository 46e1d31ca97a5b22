/* Rank 1 dies (exits without MPI_Finalize) while one window of every flavor is open. Every
 * survivor sees the failure on the allocated window (lock / unlock rounds on rank 1 until one
 * fails), then frees every window: MPI_Win_free cannot agree with a dead rank and reports
 * MPIX_ERR_PROC_FAILED naming it, leaving the window to MPI_Finalize. MPI_Finalize must then
 * release them all and return: each survivor prints one line after it (counted by the test),
 * where UCX used to assert in ucp_cleanup on registrations still mapped. */
#include <signal.h>
#include <unistd.h>

#include "rma_common.h"

#define DEAD 1
enum { N = 16, FLAVORS = 4 };

static void on_abort(int sig) {
  static const char msg[] = "FAIL a survivor aborted\n";
  (void)sig;
  (void)!write(1, msg, sizeof msg - 1);
  _exit(134);
}

int main(int argc, char **argv) {
  int rank, size, ok = 1, i, f;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  survivors_split(rank, DEAD);
  if (size < 2) {
    printf("FAIL rma_free_exit needs 2 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  signal(SIGABRT, on_abort);
  const char *names[FLAVORS] = {"created", "allocated", "dynamic", "shared"};
  MPI_Win win[FLAVORS];
  int64_t *mem[FLAVORS];
  MPI_Aint where[FLAVORS];  /* the displacement of the right neighbour's first slot */
  mem[0] = calloc(N, 8);
  mem[2] = calloc(N, 8);
  MPI_Win_create(mem[0], N * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win[0]);
  MPI_Win_allocate(N * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem[1], &win[1]);
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win[2]);
  MPI_Win_attach(win[2], mem[2], N * 8);
  MPI_Win_allocate_shared(N * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem[3], &win[3]);
  {
    MPI_Aint mine, *all = calloc((size_t)size, sizeof(MPI_Aint));
    MPI_Get_address(mem[2], &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    where[0] = where[1] = where[3] = 0;
    where[2] = all[(rank + 1) % size];
    free(all);
  }
  /* One fence epoch on each: every rank fills its right neighbour's slots. */
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (f = 0; f < FLAVORS; ++f) {
    int64_t out[N];
    for (i = 0; i < N; ++i) out[i] = (int64_t)rank * 1000 + f * 100 + i;
    if (MPI_Win_fence(0, win[f]) != MPI_SUCCESS ||
        MPI_Put(out, N, MPI_INT64_T, right, where[f], N, MPI_INT64_T, win[f]) != MPI_SUCCESS ||
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win[f]) != MPI_SUCCESS) {
      printf("FAIL rank %d: the %s window's fence epoch failed\n", rank, names[f]);
      return 1;
    }
    for (i = 0; i < N; ++i)
      if (mem[f][i] != (int64_t)left * 1000 + f * 100 + i) {
        printf("FAIL rank %d: %s window element %d is %lld\n", rank, names[f], i, (long long)mem[f][i]);
        return 1;
      }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == DEAD) {
    usleep(200000);
    _exit(3);
  }
  /* Lock / unlock rounds on the dead rank until they fail. */
  int rc = MPI_SUCCESS;
  while (rc == MPI_SUCCESS) {
    rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, DEAD, 0, win[1]);
    if (rc == MPI_SUCCESS) rc = MPI_Win_unlock(DEAD, win[1]);
  }
  ok &= is_proc_failed(rank, "lock / unlock on the dead rank", rc, DEAD);
  for (f = 0; f < FLAVORS; ++f) {
    char what[64];
    snprintf(what, sizeof what, "MPI_Win_free of the %s window", names[f]);
    ok &= is_proc_failed(rank, what, MPI_Win_free(&win[f]), DEAD);
  }
  ok = survivors_meet(rank, size, DEAD, ok);
  fflush(stdout);
  rc = MPI_Finalize();
  if (rc != MPI_SUCCESS) {
    printf("FAIL rank %d: MPI_Finalize returned %d\n", rank, rc);
    ok = 0;
  }
  if (ok) printf("rank %d: MPI_Finalize returned after the failed frees\n", rank);
  fflush(stdout);
  free(mem[0]);
  free(mem[2]);
  return ok ? 0 : 1;
}
