/* The last rank is killed; the survivors then call MPI_Finalize, which must return although
 * the dead rank never reaches it. Before dying, the rank forks a child that keeps its
 * descriptors, the connection to the launcher's PMIx server among them, open (as any forked
 * helper process does): the launcher then cannot tell that the rank is gone, and its fence
 * waits for it as long as the child lives. The child leaves once every survivor has left
 * MPI_Finalize (each drops a file in /tmp saying so), or after two minutes. Rank 0 knows of
 * the failure first (its receive from the dead rank fails); the others go straight to
 * MPI_Finalize and learn of it there. Each survivor prints "PASS finalized R" afterwards. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void mark_path(char *out, size_t n, int stem, int rank) {
  snprintf(out, n, "/tmp/weft-test-finalized-%d-%d", stem, rank);
}

int main(int argc, char **argv) {
  int rank, size, buf = 0, stem;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int victim = size - 1;
  stem = (int)getpid();
  MPI_Bcast(&stem, 1, MPI_INT, 0, MPI_COMM_WORLD);  /* names the survivors' marks */
  char path[128];
  if (size > 1 && rank == victim) {
    fflush(stdout);
    if (fork() == 0) {
      for (int i = 0, done = 0; i < 1200 && done < victim; ++i) {
        usleep(100000);
        done = 0;
        for (int r = 0; r < victim; ++r) {
          mark_path(path, sizeof path, stem, r);
          done += access(path, F_OK) == 0;
        }
      }
      for (int r = 0; r < victim; ++r) {
        mark_path(path, sizeof path, stem, r);
        unlink(path);
      }
      _exit(0);
    }
    raise(SIGKILL);
  }
  if (size > 1 && rank == 0) {
    int rc = MPI_Recv(&buf, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPIX_ERR_PROC_FAILED) {
      printf("FAIL rank 0: the receive from the dead rank returned class %d\n", cls);
      return 1;
    }
  }
  int rc = MPI_Finalize();
  printf("PASS finalized %d (MPI_Finalize returned %d)\n", rank, rc);
  fflush(stdout);
  mark_path(path, sizeof path, stem, rank);
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
  return 0;
}
