/* Every rank blocks in a receive that is never matched. The test script (orphans.sh) kills the
 * launcher with SIGKILL and expects every rank to notice that its launcher is gone and exit. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size, buf = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d pid %d ready\n", rank, (int)getpid());
  fflush(stdout);
  MPI_Recv(&buf, 1, MPI_INT, (rank + 1) % size, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  printf("FAIL rank %d returned from a receive that nobody sends\n", rank);
  MPI_Finalize();
  return 1;
}
