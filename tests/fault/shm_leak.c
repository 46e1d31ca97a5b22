/* The last rank is killed before it attaches to the shared-memory collective segment of
 * MPI_COMM_WORLD (run with WEFT_COLL_TUNE forcing the shm algorithms); the survivors' collective
 * fails and they finalize. The test script (shm_leak.sh) then checks that no /dev/shm file of
 * the job remains: it reads the job's namespace and the ranks' pids from the "job" lines. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char *ns = getenv("PMIX_NAMESPACE");
  printf("job %s pid %d rank %d\n", ns ? ns : "(none)", (int)getpid(), rank);
  fflush(stdout);
  const int victim = size - 1;
  if (size > 1 && rank == victim) {
    usleep(300000); /* the others are waiting in the allreduce by now */
    raise(SIGKILL);
  }
  long in = rank, out = 0;
  int rc = MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  if (size > 1 && cls != MPIX_ERR_PROC_FAILED) {
    printf("FAIL rank %d: the allreduce returned class %d\n", rank, cls);
    return 1;
  }
  MPI_Finalize();
  printf("PASS finalized %d\n", rank);
  return 0;
}
