/* Windows the program never frees: one of every flavor (MPI_Win_create, MPI_Win_allocate,
 * MPI_Win_create_dynamic with a region attached, MPI_Win_allocate_shared on the node's
 * communicator), each used in a fence epoch whose puts are checked, then MPI_Finalize with all
 * of them still there. Finalize must release them (their registrations before the transport)
 * and return MPI_SUCCESS; the process must then exit 0. */
#include "common.h"

enum { N = 64 };

/* Every rank puts N values into its right neighbour's window at byte offset `at`, between two
 * fences; the neighbour checks what its left neighbour wrote into `local`. */
static void exchange(MPI_Win win, const int64_t *local, MPI_Aint at, const char *flavor, int salt) {
  const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  int64_t out[N];
  int i;
  for (i = 0; i < N; ++i) out[i] = (int64_t)t_rank * 100000 + salt * 1000 + i;
  MPI_OK(MPI_Win_fence(0, win));
  MPI_OK(MPI_Put(out, N, MPI_INT64_T, right, at, N * 8, MPI_BYTE, win));
  MPI_OK(MPI_Win_fence(0, win));
  for (i = 0; i < N; ++i)
    CHECK(local[i] == (int64_t)left * 100000 + salt * 1000 + i, "%s window: element %d is %lld", flavor, i,
          (long long)local[i]);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "win_unfreed");
  MPI_Win created, allocated, dynamic, shared;
  int64_t *mem_created = calloc(N, 8), *mem_allocated = NULL, *mem_shared = NULL;
  int64_t *mem_dynamic = calloc(N, 8);
  MPI_Comm node;
  MPI_Aint *addrs = calloc((size_t)t_size, sizeof(MPI_Aint)), mine = 0;

  MPI_OK(MPI_Win_create(mem_created, N * 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &created));
  exchange(created, mem_created, 0, "created", 1);

  MPI_OK(MPI_Win_allocate(N * 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem_allocated, &allocated));
  exchange(allocated, mem_allocated, 0, "allocated", 2);

  MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dynamic));
  MPI_OK(MPI_Win_attach(dynamic, mem_dynamic, N * 8));
  MPI_OK(MPI_Get_address(mem_dynamic, &mine));
  MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
  {
    const int right = (t_rank + 1) % t_size;
    /* The dynamic window takes addresses: the right neighbour's region. */
    int64_t out[N];
    int i;
    for (i = 0; i < N; ++i) out[i] = (int64_t)t_rank * 100000 + 3000 + i;
    MPI_OK(MPI_Win_fence(0, dynamic));
    MPI_OK(MPI_Put(out, N, MPI_INT64_T, right, addrs[right], N, MPI_INT64_T, dynamic));
    MPI_OK(MPI_Win_fence(0, dynamic));
    const int left = (t_rank + t_size - 1) % t_size;
    for (i = 0; i < N; ++i)
      CHECK(mem_dynamic[i] == (int64_t)left * 100000 + 3000 + i, "dynamic window: element %d is %lld", i,
            (long long)mem_dynamic[i]);
  }

  MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_OK(MPI_Win_allocate_shared(N * 8, 8, MPI_INFO_NULL, node, &mem_shared, &shared));
  {
    int node_rank, node_size, i;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    const int right = (node_rank + 1) % node_size, left = (node_rank + node_size - 1) % node_size;
    int64_t out[N];
    for (i = 0; i < N; ++i) out[i] = (int64_t)node_rank * 100000 + 4000 + i;
    MPI_OK(MPI_Win_fence(0, shared));
    MPI_OK(MPI_Put(out, N, MPI_INT64_T, right, 0, N, MPI_INT64_T, shared));
    MPI_OK(MPI_Win_fence(0, shared));
    for (i = 0; i < N; ++i)
      CHECK(mem_shared[i] == (int64_t)left * 100000 + 4000 + i, "shared window: element %d is %lld", i,
            (long long)mem_shared[i]);
  }

  /* No MPI_Win_free, MPI_Win_detach or MPI_Comm_free: finalize releases all of it. */
  MPI_OK(MPI_Finalize());
  if (t_rank == 0) printf("win_unfreed: finalize with 4 windows left returned\n");
  free(addrs);
  free(mem_created);
  free(mem_dynamic);
  return 0;
}
