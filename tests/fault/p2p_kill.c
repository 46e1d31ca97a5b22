/* The last rank is killed while the others wait on point-to-point operations with live peers
 * that never answer. Failure is contagious within a communicator: each of these must complete
 * with MPIX_ERR_PROC_FAILED naming the killed rank, none may hang (the ctest timeout bounds the
 * run). Every survivor checks: a blocking MPI_Recv from a live rank, waiting when the rank
 * dies; requests pending then: MPI_Wait on a receive from a live rank, MPI_Waitall on another
 * and on a 1 MiB send to a live rank that never receives it (MPI_ERR_IN_STATUS, each status
 * saying why), MPI_Test polled on a receive; a later MPI_Send, which fails at once. It prints
 * "PASS survivor R", then finalizes. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int victim;

/* 1 when code is MPIX_ERR_PROC_FAILED and its string names the victim. */
static int names_victim(int rank, const char *what, int code) {
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING] = "", name[32];
  MPI_Error_class(code, &cls);
  MPI_Error_string(code, msg, &len);
  snprintf(name, sizeof name, "rank %d", victim);
  printf("rank %d: %s: class %d: %s\n", rank, what, cls, msg);
  if (cls == MPIX_ERR_PROC_FAILED && strstr(msg, name)) return 1;
  printf("FAIL rank %d: %s: expected MPIX_ERR_PROC_FAILED naming %s\n", rank, what, name);
  return 0;
}

int main(int argc, char **argv) {
  int rank, size, x = 0, y = 0, z = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3) {
    if (rank == 0) printf("FAIL needs 3 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  victim = size - 1;
  const int next = (rank + 1) % victim, prev = (rank + victim - 1) % victim;  /* live peers */
  const int bytes = 1 << 20;
  char *big = calloc(1, bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == victim) {
    usleep(200000);  /* the others are waiting by now */
    raise(SIGKILL);
  }
  /* Posted before the death; tag 7 is never sent, and nobody receives tag 8. */
  MPI_Request wait_req, all_req[2], test_req;
  MPI_Irecv(&x, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &wait_req);
  MPI_Irecv(&y, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &all_req[0]);
  MPI_Isend(big, bytes, MPI_CHAR, next, 8, MPI_COMM_WORLD, &all_req[1]);
  MPI_Irecv(&z, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &test_req);
  int ok = 1;
  /* Waiting when the rank dies. */
  ok &= names_victim(rank, "MPI_Recv from a live rank", MPI_Recv(&x, 1, MPI_INT, next, 7, MPI_COMM_WORLD,
                                                                    MPI_STATUS_IGNORE));
  /* Pending at the death. */
  ok &= names_victim(rank, "MPI_Wait on a receive from a live rank", MPI_Wait(&wait_req, MPI_STATUS_IGNORE));
  MPI_Status st[2];
  int rc = MPI_Waitall(2, all_req, st), cls = -1;
  MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_IN_STATUS) {
    printf("FAIL rank %d: MPI_Waitall returned class %d, not MPI_ERR_IN_STATUS\n", rank, cls);
    ok = 0;
  } else {
    ok &= names_victim(rank, "MPI_Waitall, the receive", st[0].MPI_ERROR);
    ok &= names_victim(rank, "MPI_Waitall, the 1 MiB send", st[1].MPI_ERROR);
  }
  int flag = 0;
  rc = MPI_SUCCESS;
  while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(&test_req, &flag, MPI_STATUS_IGNORE);
  ok &= names_victim(rank, "MPI_Test polled on a receive", rc);
  /* Later. */
  ok &= names_victim(rank, "a later MPI_Send", MPI_Send(&x, 1, MPI_INT, next, 9, MPI_COMM_WORLD));
  if (ok) printf("PASS survivor %d\n", rank);
  fflush(stdout);
  free(big);
  MPI_Finalize();
  return ok ? 0 : 1;
}
