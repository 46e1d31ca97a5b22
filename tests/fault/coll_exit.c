/* Rank 1 dies (exits without MPI_Finalize) while the others run a collective. Run with the
 * shared-memory algorithms forced (WEFT_COLL_TUNE), whose waits spin on flags rather than on
 * messages: every survivor's collective must fail with MPIX_ERR_PROC_FAILED naming rank 1. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) { MPI_Finalize(); return 0; }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* One collective that completes, so the segment is in use before the failure. */
  long in = rank + 1, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (out != (long)size * (size + 1) / 2) {
    printf("FAIL rank %d: allreduce gave %ld\n", rank, out);
    return 1;
  }
  if (rank == 1) {
    usleep(200000);
    _exit(3);
  }
  int rc = MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING] = "";
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, msg, &len);
  printf("rank %d: allreduce with a dead rank returned class %d: %s\n", rank, cls, msg);
  if (cls != MPIX_ERR_PROC_FAILED || strstr(msg, "rank 1") == NULL) {
    printf("FAIL rank %d: expected MPIX_ERR_PROC_FAILED naming rank 1\n", rank);
    return 1;
  }
  fflush(stdout);
  MPI_Finalize();
  if (rank == 0) printf("PASS collective peer failure reported\n");
  fflush(stdout);
  return 0;
}
