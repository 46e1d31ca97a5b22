/* usage: rma_lock_holder_exit MODE FLAVOR
 *   MODE: exclusive | shared | lock_all     FLAVOR: allocate | create (rma_common.h)
 *
 * Rank 1 locks rank 0's window (exclusive or shared, or every rank's with MPI_Win_lock_all),
 * puts a value there, flushes, and dies holding the lock. Every survivor then asks for an
 * exclusive lock on rank 0 (and, under lock_all, on every other survivor too): each must fail
 * with MPIX_ERR_PROC_FAILED naming rank 1 instead of waiting forever (the ctest timeout
 * catches a hang). Where rank 1 held the lock exclusively, a shared lock must fail as well;
 * where it held a shared one, a shared lock is still granted. Rank 0 checks that the flushed
 * value landed. */
#include <unistd.h>

#include "rma_common.h"

#define HOLDER 1

static int try_exclusive(int rank, int target, MPI_Win win) {
  char what[64];
  snprintf(what, sizeof what, "MPI_Win_lock(exclusive) on rank %d", target);
  return is_proc_failed(rank, what, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win), HOLDER);
}

int main(int argc, char **argv) {
  int rank, size, ok = 1, r;
  int64_t *mem = NULL;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  survivors_split(rank, HOLDER);
  if (size < 2 || argc < 3) {
    if (rank == 0) printf("FAIL usage: rma_lock_holder_exit MODE FLAVOR, at 2 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  const char *mode = argv[1];
  const int exclusive = strcmp(mode, "exclusive") == 0, lock_all = strcmp(mode, "lock_all") == 0;
  if (!exclusive && !lock_all && strcmp(mode, "shared") != 0) {
    if (rank == 0) printf("FAIL unknown mode '%s'\n", mode);
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (make_window(argv[2], size, &mem, &win) != 0) return 1;

  const int64_t mark = 4242;
  if (rank == HOLDER) {
    int rc = lock_all ? MPI_Win_lock_all(0, win)
                      : MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, win);
    if (rc == MPI_SUCCESS) rc = MPI_Put(&mark, 1, MPI_INT64_T, 0, HOLDER, 1, MPI_INT64_T, win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(0, win);
    if (rc != MPI_SUCCESS) {
      printf("FAIL rank %d: lock, put or flush failed while every rank lived\n", rank);
      fflush(stdout);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = mono_ms();
  if (rank == HOLDER) {
    usleep(200000);
    printf("rank %d: exits holding the %s lock (%.1f ms after the barrier)\n", rank, mode, mono_ms() - t0);
    fflush(stdout);
    _exit(3);
  }

  /* Survivors: rank 0's window is held by rank 1 (under lock_all, every window is). */
  ok &= try_exclusive(rank, 0, win);
  printf("rank %d: the exclusive lock on rank 0 failed %.1f ms after the barrier (rank %d exits 200 ms after it)\n",
         rank, mono_ms() - t0, HOLDER);
  if (exclusive) {
    ok &= is_proc_failed(rank, "MPI_Win_lock(shared) on rank 0", MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), HOLDER);
  } else {
    /* A shared holder does not keep out other shared holders, dead or alive. */
    int64_t seen = 0;
    if (MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win) != MPI_SUCCESS ||
        MPI_Get(&seen, 1, MPI_INT64_T, 0, HOLDER, 1, MPI_INT64_T, win) != MPI_SUCCESS ||
        MPI_Win_unlock(0, win) != MPI_SUCCESS || seen != mark) {
      printf("FAIL rank %d: a shared lock on rank 0 beside the dead shared holder failed or read %lld\n", rank,
             (long long)seen);
      ok = 0;
    }
  }
  if (lock_all)
    for (r = 2; r < size; ++r) ok &= try_exclusive(rank, r, win);
  if (rank == 0 && mem[HOLDER] != mark) {
    printf("FAIL rank 0: the holder's flushed put is missing (slot holds %lld)\n", (long long)mem[HOLDER]);
    ok = 0;
  }
  if (survivors_meet(rank, size, HOLDER, ok) && rank == 0) printf("PASS every survivor saw the dead lock holder\n");
  fflush(stdout);
  return ok ? 0 : 1; /* no finalize: a peer is gone */
}
