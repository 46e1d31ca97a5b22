/* Rank 1 dies (exits without MPI_Finalize) while the others wait for a message from it. They
 * must not hang: each receive fails with MPIX_ERR_PROC_FAILED naming the failed rank. The
 * survivors then finalize (a rank that exits after MPI_Finalize is no failure to the others). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size, buf = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) { MPI_Finalize(); return 0; }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    usleep(200000);
    _exit(3);
  }
  int rc = MPI_Recv(&buf, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING] = "";
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, msg, &len);
  printf("rank %d: receive from the dead rank returned class %d: %s\n", rank, cls, msg);
  fflush(stdout);
  if (cls != MPIX_ERR_PROC_FAILED || strstr(msg, "rank 1") == NULL) {
    printf("FAIL rank %d: expected MPIX_ERR_PROC_FAILED naming rank 1\n", rank);
    return 1;
  }
  MPI_Finalize();
  if (rank == 0) printf("PASS peer failure reported\n");
  fflush(stdout);
  return 0;
}
