/* A job with a known number of each call, for the profiler plugin test (check_count.sh):
 *   rank 0 -> rank 1: 10 MPI_Send of 8 bytes (MPI_Recv on rank 1);
 *   rank 1 -> rank 0: 3 MPI_Isend of 64 bytes (MPI_Irecv on rank 0), one MPI_Waitall each side;
 *   every rank: 4 MPI_Allreduce of 4 ints, 2 MPI_Barrier.
 * With the argument "rma", also one-sided epochs on a window of every rank: a fence epoch in
 * which each rank puts to its right neighbour, and (rank 1) a lock epoch on rank 0 with a put,
 * a flush and a get of the same value.
 * With "kv", KV-cache transfers (include/weft/kv.h) between ranks 0 and 1: rank 0 WRITEs one
 * block of 4096 bytes twice with one request, then READs two blocks of 1000 bytes back.
 * Every value received is checked; "PASS rank R" at the end. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/kv.h"

static int failures;

static void expect(int ok, const char* what, int rank) {
  if (!ok) {
    printf("FAIL rank %d: %s\n", rank, what);
    failures++;
  }
}

#define KV(call) expect((call) == WEFT_KV_SUCCESS, #call, rank)

/* Rank 0 writes into rank 1's region and reads part of it back; agents meet through MPI. */
static void kv_transfers(int rank) {
  enum { kBytes = 8192 };
  unsigned char* mem = calloc(1, kBytes);
  weft_kv_agent_t agent;
  weft_kv_region_t region;
  KV(weft_kv_agent_create(rank == 0 ? "profiled_prefill" : "profiled_decode", &agent));
  KV(weft_kv_register(agent, mem, kBytes, &region));
  char blob[4096];
  size_t length = 0;
  KV(weft_kv_export(agent, blob, sizeof blob, &length));
  if (rank == 1) {
    MPI_Send(blob, (int)length, MPI_BYTE, 0, 90, MPI_COMM_WORLD);
    int done = 0;
    MPI_Recv(&done, 1, MPI_INT, 0, 91, MPI_COMM_WORLD, MPI_STATUS_IGNORE);  /* rank 0's transfers are done */
    for (int k = 0; k < 4096; ++k) expect(mem[k] == (unsigned char)(k * 7), "kv written byte", rank);
  } else {
    MPI_Status st;
    int n = 0;
    MPI_Recv(blob, (int)sizeof blob, MPI_BYTE, 1, 90, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &n);
    weft_kv_peer_t peer;
    KV(weft_kv_import(agent, blob, (size_t)n, &peer));
    for (int k = 0; k < 4096; ++k) mem[k] = (unsigned char)(k * 7);
    weft_kv_block_t write = {region, 0, 1, 0, 4096};
    weft_kv_request_t req;
    KV(weft_kv_prepare(agent, WEFT_KV_WRITE, peer, &write, 1, NULL, 0, &req));
    for (int again = 0; again < 2; ++again) {
      KV(weft_kv_post(req));
      KV(weft_kv_wait(req, 60000));
    }
    KV(weft_kv_release(req));
    weft_kv_block_t reads[2] = {{region, 4096, 1, 0, 1000}, {region, 6000, 1, 2000, 1000}};
    KV(weft_kv_prepare(agent, WEFT_KV_READ, peer, reads, 2, NULL, 0, &req));
    KV(weft_kv_post(req));
    while (weft_kv_test(req) == WEFT_KV_IN_PROGRESS) {
    }
    KV(weft_kv_release(req));
    for (int k = 0; k < 1000; ++k) {
      expect(mem[4096 + k] == (unsigned char)(k * 7), "kv read byte", rank);
      expect(mem[6000 + k] == (unsigned char)((2000 + k) * 7), "kv read byte", rank);
    }
    const int done = 1;
    MPI_Send(&done, 1, MPI_INT, 1, 91, MPI_COMM_WORLD);
  }
  KV(weft_kv_agent_destroy(agent));
  free(mem);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 10; ++i) {
    long long v = 1000 + i;
    if (rank == 0) MPI_Send(&v, 1, MPI_LONG_LONG, 1, 5, MPI_COMM_WORLD);
    if (rank == 1) {
      v = -1;
      MPI_Recv(&v, 1, MPI_LONG_LONG, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      expect(v == 1000 + i, "blocking receive value", rank);
    }
  }
  char bufs[3][64];
  MPI_Request reqs[3];
  if (rank <= 1) {
    for (int k = 0; k < 3; ++k) {
      if (rank == 1) {
        memset(bufs[k], 'a' + k, sizeof bufs[k]);
        MPI_Isend(bufs[k], 64, MPI_CHAR, 0, 7 + k, MPI_COMM_WORLD, &reqs[k]);
      } else {
        memset(bufs[k], 0, sizeof bufs[k]);
        MPI_Irecv(bufs[k], 64, MPI_CHAR, 1, 7 + k, MPI_COMM_WORLD, &reqs[k]);
      }
    }
    MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
    if (rank == 0)
      for (int k = 0; k < 3; ++k) expect(bufs[k][0] == 'a' + k && bufs[k][63] == 'a' + k, "non-blocking data", rank);
  }
  for (int it = 0; it < 4; ++it) {
    int in[4], out[4];
    for (int i = 0; i < 4; ++i) in[i] = rank * 10 + i + it;
    MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 4; ++i) expect(out[i] == 10 * size * (size - 1) / 2 + size * (i + it), "allreduce sum", rank);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (argc > 1 && strcmp(argv[1], "rma") == 0) {
    int* base = NULL;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)sizeof(int) * (size + 1), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i <= size; ++i) base[i] = -1;
    MPI_Win_fence(0, win);
    const int value = rank + 100;
    MPI_Put(&value, 1, MPI_INT, (rank + 1) % size, rank, 1, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    const int left = (rank + size - 1) % size;
    expect(base[left] == left + 100, "fence put", rank);
    if (rank == 1) {
      const int seven = 7;
      int back = 0;
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
      MPI_Put(&seven, 1, MPI_INT, 0, size, 1, MPI_INT, win);
      MPI_Win_flush(0, win);
      MPI_Get(&back, 1, MPI_INT, 0, size, 1, MPI_INT, win);
      MPI_Win_unlock(0, win);
      expect(back == 7, "lock epoch put and get", rank);
    }
    MPI_Win_free(&win);
  }
  if (argc > 1 && strcmp(argv[1], "kv") == 0) {
    if (rank <= 1) kv_transfers(rank);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (!failures) printf("PASS rank %d\n", rank);
  fflush(stdout);
  MPI_Finalize();
  return failures ? 1 : 0;
}
