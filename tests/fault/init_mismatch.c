/* Run with ranks that load different weft builds or disagree on a setting that must agree
 * (tests/fault/init_mismatch.sh): MPI_Init must fail on every rank, naming the difference. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("FAIL rank %d: MPI_Init returned despite the mismatch\n", rank);
  MPI_Finalize();
  return 0;
}
