/* One rank kills itself (SIGKILL) in the middle of a loop of collectives. Every survivor's
 * collective must fail with MPIX_ERR_PROC_FAILED naming the killed rank, including a survivor
 * that waits on a live rank that has already left the collective with the error; none may
 * hang (the ctest timeout bounds the run). The survivors then finalize.
 *
 *   coll_kill COLLECTIVE COUNT [VICTIM [ITERATION]]
 *
 * COLLECTIVE: allreduce, barrier, bcast or allgather; COUNT: longs per rank (1 MiB = 131072).
 * The algorithm is forced from outside (WEFT_COLL_TUNE); the path too (WEFT_PT2PT,
 * WEFT_FAKE_NODES). Each survivor prints "PASS survivor R" when its error names the victim. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static long expected(int rank, int it, long i) { return (long)rank * 1000003L + it * 17L + i; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) printf("FAIL usage: coll_kill COLLECTIVE COUNT [VICTIM [ITERATION]]\n");
    MPI_Finalize();
    return 1;
  }
  const char *coll = argv[1];
  const long count = atol(argv[2]);
  const int victim = argc > 3 ? atoi(argv[3]) : size - 1;
  const int kill_at = argc > 4 ? atoi(argv[4]) : 5;
  if (size < 2 || victim < 0 || victim >= size || count < 1) {
    if (rank == 0) printf("FAIL bad arguments (np %d, victim %d, count %ld)\n", size, victim, count);
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* The survivors' own communicator, made while every rank lives: they meet there before
   * freeing their buffers, as a program recovering from a failure would, so that none frees a
   * buffer a slower survivor's transfer may still read (a failed collective's transfers to live
   * peers are given up, not recalled). */
  MPI_Comm survivors = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank == victim ? MPI_UNDEFINED : 0, rank, &survivors);
  if (survivors != MPI_COMM_NULL) MPI_Comm_set_errhandler(survivors, MPI_ERRORS_RETURN);
  const long all = strcmp(coll, "allgather") == 0 ? count * size : count;
  long *in = malloc(sizeof(long) * count), *out = malloc(sizeof(long) * all);
  int rc = MPI_SUCCESS, it, root = 0;
  double started = 0;
  for (it = 0; it < 1000; ++it) {
    if (rank == victim && it == kill_at) {
      fflush(stdout);
      raise(SIGKILL);
    }
    for (long i = 0; i < count; ++i) in[i] = expected(rank, it, i);
    started = now_ms();
    if (strcmp(coll, "allreduce") == 0) {
      rc = MPI_Allreduce(in, out, (int)count, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(coll, "barrier") == 0) {
      rc = MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(coll, "bcast") == 0) {
      root = it % size == victim ? (victim + 1) % size : it % size;
      if (rank == root) memcpy(out, in, sizeof(long) * count);
      rc = MPI_Bcast(out, (int)count, MPI_LONG, root, MPI_COMM_WORLD);
    } else if (strcmp(coll, "allgather") == 0) {
      rc = MPI_Allgather(in, (int)count, MPI_LONG, out, (int)count, MPI_LONG, MPI_COMM_WORLD);
    } else {
      if (rank == 0) printf("FAIL unknown collective %s\n", coll);
      MPI_Finalize();
      return 1;
    }
    if (rc != MPI_SUCCESS) break;
    /* Until the failure, every result is checked. */
    for (long i = 0; i < all; ++i) {
      long want;
      if (strcmp(coll, "allreduce") == 0) {
        want = 0;
        for (int r = 0; r < size; ++r) want += expected(r, it, i);
      } else if (strcmp(coll, "allgather") == 0) {
        want = expected((int)(i / count), it, i % count);
      } else if (strcmp(coll, "bcast") == 0) {
        want = expected(root, it, i);
      } else {
        break;
      }
      if (out[i] != want) {
        printf("FAIL rank %d: %s iteration %d element %ld is %ld, expected %ld\n", rank, coll, it, i, out[i], want);
        return 1;
      }
    }
  }
  const double waited = now_ms() - started;
  if (rc == MPI_SUCCESS) {
    printf("FAIL rank %d: %d collectives succeeded although rank %d was killed\n", rank, it, victim);
    return 1;
  }
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING] = "", name[32];
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, msg, &len);
  snprintf(name, sizeof name, "rank %d", victim);
  printf("rank %d: %s iteration %d failed after %.1f ms with class %d: %s\n", rank, coll, it, waited, cls, msg);
  if (cls != MPIX_ERR_PROC_FAILED || strstr(msg, name) == NULL) {
    printf("FAIL rank %d: expected MPIX_ERR_PROC_FAILED naming %s\n", rank, name);
    return 1;
  }
  /* Later calls on the communicator fail at once, the same way. */
  rc = MPI_Barrier(MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  if (cls != MPIX_ERR_PROC_FAILED) {
    printf("FAIL rank %d: a barrier after the failure returned class %d\n", rank, cls);
    return 1;
  }
  int ok = 1, all_ok = 0;
  if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, survivors) != MPI_SUCCESS || !all_ok) {
    printf("FAIL rank %d: the survivors could not meet on their own communicator\n", rank);
    return 1;
  }
  printf("PASS survivor %d\n", rank);
  fflush(stdout);
  MPI_Comm_free(&survivors);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
