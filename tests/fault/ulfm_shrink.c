/* ULFM recovery: one rank of the job kills itself (SIGKILL) in the middle of a loop of
 * allreduces. Every survivor's allreduce fails (MPIX_ERR_PROC_FAILED); the survivors revoke the
 * communicator, shrink it, acknowledge the failure, agree on the earliest iteration any of them
 * lost (failures are not uniform: one rank may see iteration K fail while another finished it
 * and fails in K+1) and redo from there on the shrunken communicator, finishing the loop with
 * correct sums. Then MPIX_Comm_agree on the survivors,
 * and a revocation without a failure: rank 0 revokes a communicator on which the others block in
 * MPI_Recv, which must fail with MPIX_ERR_REVOKED.
 *
 *   ulfm_shrink [ITERATIONS [KILL_AT]]
 *
 * Built with ULFM_DEVICE, the allreduce buffers are CUDA device memory (exit 77 without a
 * device). Each survivor prints "PASS survivor R". */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef ULFM_DEVICE
#include <cuda_runtime_api.h>
#endif

#define N 8

static int rank_of_world;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void fail(const char* what, int rc) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
  printf("FAIL rank %d: %s (%s)\n", rank_of_world, what, text);
  fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char** argv) {
#ifdef ULFM_DEVICE
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("SKIP no CUDA device\n");
    return 77;
  }
#endif
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_of_world);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 20;
  const int kill_at = argc > 2 ? atoi(argv[2]) : 8;
  const int victim = size - 1;
  MPI_Comm work;
  MPI_Comm_dup(MPI_COMM_WORLD, &work);
  MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  long in[N], out[N];
  void *send = in, *recv = out;
#ifdef ULFM_DEVICE
  cudaError_t err = cudaMalloc(&send, sizeof in);
  if (err == cudaSuccess) err = cudaMalloc(&recv, sizeof out);
  if (err != cudaSuccess) {
    char what[160];
    snprintf(what, sizeof what, "cudaMalloc: %s", cudaGetErrorString(err));
    fail(what, MPI_SUCCESS);
  }
#endif
  int recovered_at = -1;
  for (int it = 0; it < iterations; ++it) {
    if (rank_of_world == victim && it == kill_at) raise(SIGKILL);
    for (int i = 0; i < N; ++i) in[i] = rank_of_world * 1000L + it * 10L + i;
#ifdef ULFM_DEVICE
    cudaMemcpy(send, in, sizeof in, cudaMemcpyHostToDevice);
#endif
    const double t0 = now_ms();
    const int rc = MPI_Allreduce(send, recv, N, MPI_LONG, MPI_SUM, work);
    if (rc != MPI_SUCCESS) {
      const double t_error = now_ms();
      int cls = 0;
      MPI_Error_class(rc, &cls);
      if (cls != MPIX_ERR_PROC_FAILED && cls != MPIX_ERR_REVOKED) fail("allreduce failed with another class", rc);
      if (recovered_at >= 0) fail("a second failure", rc);
      int r = MPIX_Comm_revoke(work);
      if (r != MPI_SUCCESS) fail("MPIX_Comm_revoke", r);
      MPI_Comm shrunk;
      const double t_revoked = now_ms();
      r = MPIX_Comm_shrink(work, &shrunk);
      if (r != MPI_SUCCESS) fail("MPIX_Comm_shrink", r);
      printf("rank %d: allreduce error after %.1f ms, revoke %.2f ms, shrink %.2f ms\n", rank_of_world,
             t_error - t0, t_revoked - t_error, now_ms() - t_revoked);
      r = MPIX_Comm_failure_ack(work);
      if (r != MPI_SUCCESS) fail("MPIX_Comm_failure_ack", r);
      MPI_Group acked, world_group;
      MPIX_Comm_failure_get_acked(work, &acked);
      MPI_Comm_group(MPI_COMM_WORLD, &world_group);
      int acked_size = 0, in_world = MPI_UNDEFINED, zero = 0;
      MPI_Group_size(acked, &acked_size);
      if (acked_size == 1) MPI_Group_translate_ranks(acked, 1, &zero, world_group, &in_world);
      if (acked_size != 1 || in_world != victim) fail("the acknowledged group is not the killed rank", MPI_SUCCESS);
      MPI_Group_free(&acked);
      MPI_Group_free(&world_group);
      int revoked = 0;
      MPIX_Comm_is_revoked(work, &revoked);
      if (!revoked) fail("the revoked communicator does not say so", MPI_SUCCESS);
      MPI_Comm_free(&work);
      work = shrunk;
      MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
      int new_size = 0;
      MPI_Comm_size(work, &new_size);
      if (new_size != size - 1) fail("the shrunken communicator has the wrong size", MPI_SUCCESS);
      /* A collective need not fail everywhere at once: a rank whose part of iteration K was
       * done may have returned success while another's failed, then failed in K+1. The
       * survivors redo the earliest iteration any of them lost. */
      int redo = it;
      r = MPI_Allreduce(&it, &redo, 1, MPI_INT, MPI_MIN, work);
      if (r != MPI_SUCCESS) fail("agreeing on the iteration to redo", r);
      if (redo < it - 1) fail("the survivors lost iterations more than one apart", MPI_SUCCESS);
      recovered_at = redo;
      it = redo - 1;  // the loop's ++it redoes it on the survivors
      continue;
    }
#ifdef ULFM_DEVICE
    cudaMemcpy(out, recv, sizeof out, cudaMemcpyDeviceToHost);
#endif
    const int members = recovered_at >= 0 ? size - 1 : size;
    for (int i = 0; i < N; ++i) {
      const long want = 1000L * members * (members - 1) / 2 + (long)members * (it * 10L + i);
      if (out[i] != want) {
        char what[128];
        snprintf(what, sizeof what, "iteration %d element %d is %ld, not %ld", it, i, out[i], want);
        fail(what, MPI_SUCCESS);
      }
    }
  }
  if (recovered_at < 0) fail("no failure was seen", MPI_SUCCESS);
  int flag = 1;
  int rc = MPIX_Comm_agree(work, &flag);
  if (rc != MPI_SUCCESS || flag != 1) fail("MPIX_Comm_agree on the survivors", rc);
  /* A bitwise and: rank 0 contributes 2, the others 3. */
  int wrank;
  MPI_Comm_rank(work, &wrank);
  flag = wrank == 0 ? 2 : 3;
  rc = MPIX_Comm_agree(work, &flag);
  if (rc != MPI_SUCCESS || flag != 2) fail("MPIX_Comm_agree's and", rc);

  /* Revocation without a failure: the others block in a receive nobody sends. */
  MPI_Comm side;
  MPI_Comm_dup(work, &side);
  MPI_Comm_set_errhandler(side, MPI_ERRORS_RETURN);
  if (wrank == 0) {
    sleep(1);
    rc = MPIX_Comm_revoke(side);
    if (rc != MPI_SUCCESS) fail("MPIX_Comm_revoke without a failure", rc);
  } else {
    int value = 0, cls = 0;
    rc = MPI_Recv(&value, 1, MPI_INT, 0, 99, side, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    if (cls != MPIX_ERR_REVOKED) fail("a receive on the revoked communicator did not fail with MPIX_ERR_REVOKED", rc);
  }
  rc = MPI_Barrier(side);
  int cls = 0;
  MPI_Error_class(rc, &cls);
  if (cls != MPIX_ERR_REVOKED) fail("a barrier on the revoked communicator did not fail with MPIX_ERR_REVOKED", rc);
  MPI_Comm_free(&side);
  rc = MPI_Barrier(work);
  if (rc != MPI_SUCCESS) fail("barrier on the survivors", rc);
  printf("PASS survivor %d (recovered at iteration %d, %d iterations)\n", rank_of_world, recovered_at, iterations);
  fflush(stdout);
#ifdef ULFM_DEVICE
  cudaFree(send);
  cudaFree(recv);
#endif
  MPI_Comm_free(&work);
  MPI_Finalize();
  return 0;
}
