/* Persistent collectives match in the order they were initialized, whatever order the ranks
 * start them in: a bcast, an allreduce and a barrier initialized alike on every rank, started
 * in rank-dependent orders (even ranks forwards, odd ranks backwards, rank 2 rotated), several
 * times, with the results checked after each round. */
#include "common.h"

#define N 1000

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_persistent_order");
    int *b = malloc(N * sizeof(int));
    long long in = 0, out = 0;
    MPI_Request req[3];
    MPI_OK(MPI_Bcast_init(b, N, MPI_INT, t_size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
    MPI_OK(MPI_Allreduce_init(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    MPI_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req[2]));
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < N; i++)
            b[i] = t_rank == t_size - 1 ? round * N + i : -1;
        in = (long long)(t_rank + 1) * (round + 1);
        out = -1;
        const int order[3][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}};
        const int *o = order[t_rank == 2 ? 2 : (t_rank + round) % 2];
        for (int k = 0; k < 3; k++)
            MPI_OK(MPI_Start(&req[o[k]]));
        MPI_OK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < N; i++)
            CHECK(b[i] == round * N + i, "round %d: bcast element %d is %d", round, i, b[i]);
        const long long want = (long long)t_size * (t_size + 1) / 2 * (round + 1);
        CHECK(out == want, "round %d: allreduce gave %lld, expected %lld", round, out, want);
    }
    for (int k = 0; k < 3; k++)
        MPI_OK(MPI_Request_free(&req[k]));
    free(b);
    t_done();
    return 0;
}
