/* MPI_Abort from one rank ends the whole job, with the error code, while the other ranks are
 * blocked in a receive that will never be matched. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size, buf = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == size - 1) {
    usleep(100000);
    MPI_Abort(MPI_COMM_WORLD, 7);
  }
  MPI_Recv(&buf, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  printf("FAIL: rank %d returned from a receive that nobody sends\n", rank);
  return 0;
}
