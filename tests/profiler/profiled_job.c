/* A job with a known number of each call, for the profiler plugin test (check_count.sh):
 *   rank 0 -> rank 1: 10 MPI_Send of 8 bytes (MPI_Recv on rank 1);
 *   rank 1 -> rank 0: 3 MPI_Isend of 64 bytes (MPI_Irecv on rank 0), one MPI_Waitall each side;
 *   every rank: 4 MPI_Allreduce of 4 ints, 2 MPI_Barrier.
 * With the argument "rma", also one-sided epochs on a window of every rank: a fence epoch in
 * which each rank puts to its right neighbour, and (rank 1) a lock epoch on rank 0 with a put,
 * a flush and a get of the same value.
 * Every value received is checked; "PASS rank R" at the end. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void expect(int ok, const char* what, int rank) {
  if (!ok) {
    printf("FAIL rank %d: %s\n", rank, what);
    failures++;
  }
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
  if (!failures) printf("PASS rank %d\n", rank);
  fflush(stdout);
  MPI_Finalize();
  return failures ? 1 : 0;
}
