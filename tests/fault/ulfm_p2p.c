/* WEFT_FAULT_SCOPE=process (set here before MPI_Init): ULFM's point-to-point rules. The last
 * rank is killed; the survivors (ranks 0..n-2, a ring among themselves) check, each on
 * MPI_COMM_WORLD, which still holds the dead rank:
 *  - a receive from the dead rank fails (MPIX_ERR_PROC_FAILED naming it), and so does a send;
 *  - a wildcard receive fails while the failure is not acknowledged;
 *  - a receive from a live rank posted before the death, and a send and receive with live
 *    ranks after it, complete with the right data;
 *  - after MPIX_Comm_failure_ack, MPIX_Comm_failure_get_acked gives the dead rank, and a
 *    wildcard receive completes (source and data checked);
 *  - a collective still fails (MPIX_ERR_PROC_FAILED).
 * Each survivor prints "PASS survivor R". */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, victim, ok = 1;

static void expect(const char *what, int rc, int cls_expected) {
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING] = "";
  MPI_Error_class(rc, &cls);
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
  char name[32];
  snprintf(name, sizeof name, "rank %d", victim);
  printf("rank %d: %s: class %d %s\n", rank, what, cls, msg);
  if (cls != cls_expected || (cls == MPIX_ERR_PROC_FAILED && !strstr(msg, name))) {
    printf("FAIL rank %d: %s: class %d, expected %d%s\n", rank, what, cls, cls_expected,
           cls_expected == MPIX_ERR_PROC_FAILED ? " naming the dead rank" : "");
    ok = 0;
  }
}

int main(int argc, char **argv) {
  setenv("WEFT_FAULT_SCOPE", "process", 1);
  int size;
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
  const int live = size - 1, next = (rank + 1) % live, prev = (rank + live - 1) % live;
  int early = -1;
  MPI_Request early_req;
  if (rank != victim) MPI_Irecv(&early, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, &early_req);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == victim) {
    usleep(200000); /* the others are waiting by now */
    raise(SIGKILL);
  }
  int x = -1;
  expect("MPI_Recv from the dead rank", MPI_Recv(&x, 1, MPI_INT, victim, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
         MPIX_ERR_PROC_FAILED);
  expect("a wildcard MPI_Recv before the acknowledgement",
         MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
  /* Live peers go on: the receive posted before the death, a send and a receive after it. */
  int out = 100 * rank;
  expect("MPI_Send to a live rank", MPI_Send(&out, 1, MPI_INT, next, 1, MPI_COMM_WORLD), MPI_SUCCESS);
  expect("MPI_Wait on a receive from a live rank posted before the death", MPI_Wait(&early_req, MPI_STATUS_IGNORE),
         MPI_SUCCESS);
  if (early != 100 * prev) {
    printf("FAIL rank %d: received %d from rank %d, expected %d\n", rank, early, prev, 100 * prev);
    ok = 0;
  }
  expect("MPIX_Comm_failure_ack", MPIX_Comm_failure_ack(MPI_COMM_WORLD), MPI_SUCCESS);
  MPI_Group acked, world;
  expect("MPIX_Comm_failure_get_acked", MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked), MPI_SUCCESS);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = -1, zero = 0, dead = -1;
  MPI_Group_size(acked, &n);
  if (n == 1) MPI_Group_translate_ranks(acked, 1, &zero, world, &dead);
  if (n != 1 || dead != victim) {
    printf("FAIL rank %d: the acknowledged group has %d ranks (first: %d), expected rank %d alone\n", rank, n, dead,
           victim);
    ok = 0;
  }
  MPI_Group_free(&acked);
  MPI_Group_free(&world);
  /* A wildcard receive after the acknowledgement. */
  out = 1000 + rank;
  expect("MPI_Send to a live rank after the acknowledgement", MPI_Send(&out, 1, MPI_INT, next, 4, MPI_COMM_WORLD),
         MPI_SUCCESS);
  MPI_Status st;
  x = -1;
  expect("a wildcard MPI_Recv after the acknowledgement",
         MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st), MPI_SUCCESS);
  if (x != 1000 + prev || st.MPI_SOURCE != prev) {
    printf("FAIL rank %d: wildcard receive got %d from %d, expected %d from %d\n", rank, x, st.MPI_SOURCE,
           1000 + prev, prev);
    ok = 0;
  }
  expect("MPI_Send to the dead rank", MPI_Send(&out, 1, MPI_INT, victim, 5, MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
  expect("MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
  if (ok) printf("PASS survivor %d\n", rank);
  fflush(stdout);
  MPI_Finalize();
  return ok ? 0 : 1;
}
