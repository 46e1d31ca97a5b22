/* usage: rma_lock_queue_exit FLAVOR      FLAVOR: allocate | create (rma_common.h); 4 ranks or more
 *
 * A rank that dies waiting in line for a lock must not keep the lock from the ranks behind it.
 * Rank 2 holds rank 0's window exclusively; rank 1 asks for the same lock (it waits, first in
 * line) and dies there, from a timer; ranks 0 and 3 ask after it and wait behind it. Rank 2
 * then puts a value and releases the lock: ranks 0 and 3 must each get it (the dead rank's
 * turn skipped), read the holder's value, and add their own under it. Rank 0 finally checks
 * every value. The ctest timeout catches a hang. */
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include "rma_common.h"

#define DEAD 1
#define HOLDER 2

static void die_in_line(int sig) {
  (void)sig;
  static const char msg[] = "rank 1: dies waiting in line for the lock on rank 0\n";
  ssize_t w = write(1, msg, sizeof msg - 1);
  (void)w;
  _exit(3);
}

int main(int argc, char **argv) {
  int rank, size, ok = 1;
  int64_t *mem = NULL;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  survivors_split(rank, DEAD);
  if (size < 4 || argc < 2) {
    if (rank == 0) printf("FAIL usage: rma_lock_queue_exit FLAVOR, at 4 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (make_window(argv[1], size, &mem, &win) != 0) return 1;

  const int64_t mark = 4242;
  if (rank == HOLDER && MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win) != MPI_SUCCESS) {
    printf("FAIL rank %d: the first exclusive lock failed while every rank lived\n", rank);
    ok = 0;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = mono_ms();
  if (rank == DEAD) {
    /* In line first; the timer fires while the lock call waits. */
    signal(SIGALRM, die_in_line);
    struct itimerval when = {{0, 0}, {0, 500000}};
    setitimer(ITIMER_REAL, &when, NULL);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    printf("FAIL rank %d: got the lock that rank %d holds\n", rank, HOLDER);
    fflush(stdout);
    _exit(4);
  }
  if (rank == HOLDER) {
    usleep(1000000); /* until rank 1 has died in line */
    int rc = MPI_Put(&mark, 1, MPI_INT64_T, 0, HOLDER, 1, MPI_INT64_T, win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_unlock(0, win);
    if (rc != MPI_SUCCESS) {
      printf("FAIL rank %d: the put or the unlock failed (error %d)\n", rank, rc);
      ok = 0;
    }
  } else {
    usleep(250000); /* behind rank 1 */
    int64_t seen = 0;
    const int64_t own = 100 + rank;
    int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    if (rc == MPI_SUCCESS) rc = MPI_Get(&seen, 1, MPI_INT64_T, 0, HOLDER, 1, MPI_INT64_T, win);
    if (rc == MPI_SUCCESS) rc = MPI_Put(&own, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_unlock(0, win);
    if (rc != MPI_SUCCESS || seen != mark) {
      char msg[MPI_MAX_ERROR_STRING] = "";
      int len = 0;
      if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
      printf("FAIL rank %d: the lock behind the dead rank: error %d (%s), read %lld where %lld was due\n", rank, rc, msg,
             (long long)seen, (long long)mark);
      ok = 0;
    } else {
      printf("rank %d: got the lock behind the dead rank %.1f ms after the barrier\n", rank, mono_ms() - t0);
    }
  }
  if (survivors_comm != MPI_COMM_NULL) MPI_Barrier(survivors_comm);
  if (rank == 0) {
    if (MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win) != MPI_SUCCESS) {
      printf("FAIL rank 0: a shared lock on its own window failed\n");
      ok = 0;
    } else {
      for (int r = 0; r < size; ++r) {
        const int64_t want = r == HOLDER ? mark : r == DEAD ? 0 : 100 + r;
        if (mem[r] != want) {
          printf("FAIL rank 0: slot %d holds %lld where %lld was due\n", r, (long long)mem[r], (long long)want);
          ok = 0;
        }
      }
      MPI_Win_unlock(0, win);
    }
  }
  if (survivors_meet(rank, size, DEAD, ok) && rank == 0) printf("PASS the ranks behind the dead one got the lock\n");
  fflush(stdout);
  return ok ? 0 : 1; /* no finalize: a peer is gone */
}
