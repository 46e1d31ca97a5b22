/* usage: rma_target_exit FLAVOR     (allocate | create | shared; see rma_common.h)
 *
 * Rank 1, a target, dies (exits without MPI_Finalize) while every other rank runs
 * lock / put / flush / unlock rounds on it. Each survivor must get MPIX_ERR_PROC_FAILED naming
 * rank 1 from one of those calls after a bounded number of rounds: the loop has no other end,
 * so silent success runs into the ctest timeout. Then MPI_Win_unlock (where the epoch was
 * still open), MPI_Win_lock, MPI_Win_lock_all, MPI_Win_fence and MPI_Win_start towards rank 1
 * must fail the same way, and so must MPI_Win_flush_all and MPI_Win_unlock_all of a lock_all
 * epoch opened on a second window before the failure (the unlock closing it), while a lock
 * epoch on the survivor's own window still works.
 * Before the failure, every origin's puts must have landed in rank 1's window. */
#include <unistd.h>

#include "rma_common.h"

#define DEAD 1

int main(int argc, char **argv) {
  int rank, size, ok = 1, i;
  int64_t *mem = NULL, *mem2 = NULL;
  MPI_Win win, win2;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  survivors_split(rank, DEAD);
  if (size < 2 || argc < 2) {
    if (rank == 0) printf("FAIL usage: rma_target_exit FLAVOR, at 2 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (make_window(argv[1], size, &mem, &win) != 0 || make_window(argv[1], size, &mem2, &win2) != 0) return 1;

  /* While rank 1 lives: 100 exclusive epochs from every other rank into its own slot there. */
  if (rank != DEAD)
    for (i = 0; i < 100; ++i) {
      int64_t v = (int64_t)rank * 1000 + i;
      if (MPI_Win_lock(MPI_LOCK_EXCLUSIVE, DEAD, 0, win) != MPI_SUCCESS ||
          MPI_Put(&v, 1, MPI_INT64_T, DEAD, rank, 1, MPI_INT64_T, win) != MPI_SUCCESS ||
          MPI_Win_flush(DEAD, win) != MPI_SUCCESS || MPI_Win_unlock(DEAD, win) != MPI_SUCCESS) {
        printf("FAIL rank %d: an epoch failed while every rank lived\n", rank);
        return 1;
      }
    }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == DEAD) {
    int r;
    MPI_Win_lock(MPI_LOCK_SHARED, DEAD, 0, win);
    for (r = 0; r < size; ++r)
      if (r != DEAD && mem[r] != (int64_t)r * 1000 + 99) {
        printf("FAIL rank %d: slot %d holds %lld, expected %lld\n", rank, r, (long long)mem[r], (long long)r * 1000 + 99);
        ok = 0;
      }
    MPI_Win_unlock(DEAD, win);
    if (ok) printf("rank %d: every origin's puts landed\n", rank);
  }
  if (MPI_Win_lock_all(0, win2) != MPI_SUCCESS) {
    printf("FAIL rank %d: MPI_Win_lock_all failed while every rank lived\n", rank);
    return 1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = mono_ms();
  if (rank == DEAD) {
    usleep(200000);
    printf("rank %d: exits now (%.1f ms after the barrier)\n", rank, mono_ms() - t0);
    fflush(stdout);
    _exit(ok ? 3 : 1);
  }

  /* Rounds until one call reports the failure. */
  const char *failed_call = NULL;
  int rc = MPI_SUCCESS;
  long long rounds;
  for (rounds = 0; failed_call == NULL; ++rounds) {
    int64_t v = rounds;
    if ((rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, DEAD, 0, win)) != MPI_SUCCESS) {
      failed_call = "MPI_Win_lock";
      break;
    }
    if ((rc = MPI_Put(&v, 1, MPI_INT64_T, DEAD, rank, 1, MPI_INT64_T, win)) != MPI_SUCCESS)
      failed_call = "MPI_Put";
    else if ((rc = MPI_Win_flush(DEAD, win)) != MPI_SUCCESS)
      failed_call = "MPI_Win_flush";
    if (failed_call) break;
    if ((rc = MPI_Win_unlock(DEAD, win)) != MPI_SUCCESS) failed_call = "MPI_Win_unlock";
  }
  const double detected = mono_ms() - t0;
  ok &= is_proc_failed(rank, failed_call, rc, DEAD);
  printf("rank %d: %s reported the failure after %lld rounds, %.1f ms after the barrier (rank %d exits 200 ms after "
         "it)\n",
         rank, failed_call, rounds, detected, DEAD);
  /* The epoch is still open where the put or the flush failed: the unlock fails too, and
   * closes it. */
  if (strcmp(failed_call, "MPI_Put") == 0 || strcmp(failed_call, "MPI_Win_flush") == 0)
    ok &= is_proc_failed(rank, "MPI_Win_unlock after the failure", MPI_Win_unlock(DEAD, win), DEAD);
  ok &= is_proc_failed(rank, "MPI_Win_lock after the failure", MPI_Win_lock(MPI_LOCK_SHARED, DEAD, 0, win), DEAD);
  ok &= is_proc_failed(rank, "MPI_Win_lock_all after the failure", MPI_Win_lock_all(0, win), DEAD);
  ok &= is_proc_failed(rank, "MPI_Win_fence after the failure", MPI_Win_fence(0, win), DEAD);
  {
    MPI_Group world, target;
    int dead = DEAD;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &dead, &target);
    ok &= is_proc_failed(rank, "MPI_Win_start after the failure", MPI_Win_start(target, 0, win), DEAD);
    MPI_Group_free(&target);
    MPI_Group_free(&world);
  }
  ok &= is_proc_failed(rank, "MPI_Win_flush_all after the failure", MPI_Win_flush_all(win2), DEAD);
  ok &= is_proc_failed(rank, "MPI_Win_unlock_all after the failure", MPI_Win_unlock_all(win2), DEAD);
  {
    int cls = -1;
    MPI_Error_class(MPI_Win_unlock_all(win2), &cls);
    if (cls != MPI_ERR_RMA_SYNC) {
      printf("FAIL rank %d: the failed MPI_Win_unlock_all left the lock_all epoch open (class %d)\n", rank, cls);
      ok = 0;
    }
  }
  /* Nothing this rank does on its own window depends on rank 1. */
  {
    int64_t v = 4242, back = 0;
    if (MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win) != MPI_SUCCESS ||
        MPI_Put(&v, 1, MPI_INT64_T, rank, 0, 1, MPI_INT64_T, win) != MPI_SUCCESS ||
        MPI_Get(&back, 1, MPI_INT64_T, rank, 0, 1, MPI_INT64_T, win) != MPI_SUCCESS ||
        MPI_Win_unlock(rank, win) != MPI_SUCCESS || back != 4242 || mem[0] != 4242) {
      printf("FAIL rank %d: an epoch on its own window failed after rank %d died\n", rank, DEAD);
      ok = 0;
    }
  }
  if (survivors_meet(rank, size, DEAD, ok) && rank == 0) printf("PASS every survivor saw the one-sided failure\n");
  fflush(stdout);
  return ok ? 0 : 1; /* no finalize: a peer is gone */
}
