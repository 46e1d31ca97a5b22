/* WEFT_TIMEOUT on a one-sided lock: rank 1 holds an exclusive lock on rank 0's window for 5 s;
 * every other rank's MPI_Win_lock on it fails with MPIX_ERR_TIMEOUT after the bound (2 s in the
 * test), and they wait outside MPI until the holder has let go (so that no later call of theirs
 * waits past the bound). Then each of them takes the lock again (their given-up tickets are
 * skipped) and adds one to a counter at rank 0, which checks the total. Each rank prints
 * "PASS rank R". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int me;

static void fail(const char* what, int rc) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
  printf("FAIL rank %d: %s (%s)\n", me, what, text);
  fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const int holder = 1;
  if (me == holder) {
    int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    if (rc != MPI_SUCCESS) fail("the holder's lock", rc);
    MPI_Barrier(MPI_COMM_WORLD);  // the others try now
    sleep(5);
    MPI_Win_unlock(0, win);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    const int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    int cls = 0, len = 0;
    char text[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
    printf("rank %d: %s\n", me, text);
    if (cls != MPIX_ERR_TIMEOUT) fail("MPI_Win_lock did not time out", rc);
    sleep(3);  // the holder lets go 5 s after the first barrier
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the holder has let go
  if (me != holder) {
    int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    if (rc != MPI_SUCCESS) fail("MPI_Win_lock after the holder let go", rc);
    long value = 0;
    MPI_Get(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    MPI_Win_flush(0, win);
    value += 1;
    MPI_Put(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    rc = MPI_Win_unlock(0, win);
    if (rc != MPI_SUCCESS) fail("MPI_Win_unlock", rc);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    const long total = *base;
    MPI_Win_unlock(0, win);
    if (total != size - 1) {
      printf("FAIL rank 0: counter %ld, not %d\n", total, size - 1);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("PASS rank %d\n", me);
  fflush(stdout);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
