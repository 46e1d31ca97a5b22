/* Non-blocking collectives posted back to back, blocking ones between the posts and the waits,
 * and completions in another order than the posts: every rank must match the calls in the
 * order they were made, whichever thread runs their first steps (with WEFT_ASYNC_PROGRESS=1 and
 * a progress-thread CPU, the thread runs them). Sizes cover the one-slot and the pieced
 * shared-memory allreduce and the message-based algorithms; every element is checked. */
#include "common.h"

enum { NCALLS = 6, ROUNDS = 12 };

static int value(int rank, int call, int round, size_t i) { return (rank + 1) * (call + 3) + round - (int)(i % 97); }

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_nb_order");
    const size_t counts[NCALLS] = {3, 1000, 16384, 70000, 300000, 5};
    int *in[NCALLS], *out[NCALLS];
    for (int c = 0; c < NCALLS; ++c) {
        in[c] = malloc(sizeof(int) * counts[c]);
        out[c] = malloc(sizeof(int) * counts[c]);
        CHECK(in[c] && out[c], "out of memory");
    }
    int bcast[64], sum_ranks = 0;
    for (int r = 0; r < t_size; ++r) sum_ranks += r + 1;
    for (int round = 0; round < ROUNDS; ++round) {
        MPI_Request req[NCALLS];
        for (int c = 0; c < NCALLS; ++c) {
            for (size_t i = 0; i < counts[c]; ++i) in[c][i] = value(t_rank, c, round, i);
            memset(out[c], 0xff, sizeof(int) * counts[c]);
            if (c == 2) { /* a blocking collective between the posts */
                for (int i = 0; i < 64; ++i) bcast[i] = t_rank == round % t_size ? round * 64 + i : -1;
                MPI_OK(MPI_Bcast(bcast, 64, MPI_INT, round % t_size, MPI_COMM_WORLD));
            }
            MPI_OK(MPI_Iallreduce(in[c], out[c], (int)counts[c], MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[c]));
        }
        int total = -1;
        MPI_OK(MPI_Allreduce(&(int){t_rank + 1}, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(total == sum_ranks, "round %d: blocking allreduce between posts and waits gave %d, expected %d", round,
              total, sum_ranks);
        for (int i = 0; i < 64; ++i)
            CHECK(bcast[i] == round * 64 + i, "round %d: bcast element %d is %d", round, i, bcast[i]);
        for (int done = 0; done < NCALLS; ++done) { /* the last posted first, then any */
            int c;
            if (done == 0) {
                c = NCALLS - 1;
                MPI_OK(MPI_Wait(&req[c], MPI_STATUS_IGNORE));
            } else {
                MPI_OK(MPI_Waitany(NCALLS, req, &c, MPI_STATUS_IGNORE));
            }
            for (size_t i = 0; i < counts[c]; ++i) {
                const int want = sum_ranks * (c + 3) + t_size * (round - (int)(i % 97));
                if (out[c][i] != want)
                    FAIL("round %d call %d (%zu ints): element %zu is %d, expected %d", round, c, counts[c], i, out[c][i],
                         want);
            }
        }
    }
    for (int c = 0; c < NCALLS; ++c) {
        free(in[c]);
        free(out[c]);
    }
    t_done();
    return 0;
}
