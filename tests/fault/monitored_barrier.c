/* MPIX_Comm_monitored_barrier: with every rank on time it succeeds with an empty group; with the
 * last rank 2 s late and a 500 ms timeout, every rank (the late one included, once it arrives)
 * gets MPIX_ERR_TIMEOUT and a group holding exactly the late rank; a barrier after that succeeds
 * again. Each rank prints "PASS rank R".   monitored_barrier [LATE_SECONDS [TIMEOUT_MS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me;

static void fail(const char* what, int rc) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
  printf("FAIL rank %d: %s (%s)\n", me, what, text);
  fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static int group_is(MPI_Group g, int rank) {
  int n = 0, zero = 0, in_world = MPI_UNDEFINED;
  MPI_Group world;
  MPI_Group_size(g, &n);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  if (n == 1) MPI_Group_translate_ranks(g, 1, &zero, world, &in_world);
  MPI_Group_free(&world);
  return n == 1 && in_world == rank;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int late_s = argc > 1 ? atoi(argv[1]) : 2;
  const int timeout_ms = argc > 2 ? atoi(argv[2]) : 500;
  const int late = size - 1;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Group g;
  int rc = MPIX_Comm_monitored_barrier(MPI_COMM_WORLD, 10000, &g);
  if (rc != MPI_SUCCESS || g != MPI_GROUP_EMPTY) fail("a monitored barrier with every rank on time", rc);

  if (me == late) sleep((unsigned)late_s);
  rc = MPIX_Comm_monitored_barrier(MPI_COMM_WORLD, timeout_ms, &g);
  int cls = 0;
  MPI_Error_class(rc, &cls);
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, text, &len);
  printf("rank %d: %s\n", me, text);
  char named[64];
  snprintf(named, sizeof named, "rank %d did not arrive within %d ms", late, timeout_ms);
  if (cls != MPIX_ERR_TIMEOUT || !group_is(g, late) || !strstr(text, named))
    fail("the late rank is not named", rc);
  if (g != MPI_GROUP_EMPTY) MPI_Group_free(&g);

  rc = MPIX_Comm_monitored_barrier(MPI_COMM_WORLD, 10000, &g);
  if (rc != MPI_SUCCESS || g != MPI_GROUP_EMPTY) fail("a monitored barrier after the late one", rc);
  rc = MPI_Barrier(MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) fail("MPI_Barrier after the monitored ones", rc);
  printf("PASS rank %d: the monitored barrier named late rank %d\n", me, late);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
