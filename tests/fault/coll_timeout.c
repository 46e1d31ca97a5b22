/* A rank withheld from a collective: with WEFT_TIMEOUT set, every other rank's collective fails
 * with MPIX_ERR_TIMEOUT, and its error string names the rank that never arrived and each rank's
 * last collective sequence number on the communicator (read from the ranks' status boards, not
 * through the stuck path). The withheld rank sleeps past the timeout, then everyone meets on a
 * duplicate made before and finalizes.
 *
 *   coll_timeout COLLECTIVE HOLD_SECONDS
 *
 * COLLECTIVE: allreduce or barrier. The last rank skips the 6th collective of the loop. Each
 * other rank prints "PASS survivor R" when its error has the expected class and names. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int run(const char* coll, long* in, long* out, long n) {
  if (strcmp(coll, "barrier") == 0) return MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Allreduce(in, out, (int)n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* coll = argc > 1 ? argv[1] : "allreduce";
  const int hold = argc > 2 ? atoi(argv[2]) : 5;
  const int withheld = size - 1, skip_at = 5;
  MPI_Comm after;
  MPI_Comm_dup(MPI_COMM_WORLD, &after);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  long in[4], out[4];
  for (int it = 0; it <= skip_at; ++it) {
    for (int i = 0; i < 4; ++i) in[i] = rank * 100 + it + i;
    if (rank == withheld && it == skip_at) {
      printf("rank %d withheld from collective #%d for %d s\n", rank, it + 1, hold);
      fflush(stdout);
      sleep((unsigned)hold);
      break;
    }
    const double t0 = now_s();
    const int rc = run(coll, in, out, 4);
    if (it < skip_at) {
      if (rc != MPI_SUCCESS) {
        printf("FAIL rank %d: collective #%d failed before the withheld one\n", rank, it + 1);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      if (strcmp(coll, "allreduce") == 0)
        for (int i = 0; i < 4; ++i) {
          const long want = (long)size * (size - 1) / 2 * 100 + (long)size * (it + i);
          if (out[i] != want) {
            printf("FAIL rank %d: collective #%d element %d is %ld, not %ld\n", rank, it + 1, i, out[i], want);
            MPI_Abort(MPI_COMM_WORLD, 1);
          }
        }
      continue;
    }
    int cls = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    printf("rank %d: collective #%d returned after %.2f s: %s\n", rank, it + 1, now_s() - t0, text);
    char never[64], last[64];
    snprintf(never, sizeof never, "ranks that never arrived: %d", withheld);
    snprintf(last, sizeof last, "%d #%d", withheld, skip_at);
    if (cls == MPIX_ERR_TIMEOUT && strstr(text, never) && strstr(text, last) && strstr(text, "collective #6"))
      printf("PASS survivor %d\n", rank);
    else
      printf("FAIL rank %d: class %d, message lacks '%s' or '%s'\n", rank, cls, never, last);
  }
  fflush(stdout);
  MPI_Barrier(after);  /* the withheld rank is back: everyone meets on a communicator not involved */
  MPI_Comm_free(&after);
  MPI_Finalize();
  return 0;
}
