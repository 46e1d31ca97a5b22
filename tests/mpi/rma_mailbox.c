/* Accumulates into a node peer's user memory (MPI_Win_create) while the target is in MPI and
 * while it computes outside MPI: the target applies them from its mailbox, or the origin
 * withdraws them and reads and writes the memory itself (a long one after some of its pieces
 * were taken, too); either way none is lost or torn.
 * Long accumulates (48 KiB, several mailbox pieces) of every rank, rank 0's own included,
 * add up exactly; Fetch_and_op tickets come out each exactly once; a counter raised only by
 * Compare_and_swap retries ends at the number of successful swaps; Get_accumulate returns
 * whole old values. Run with the mailboxes on (default) and off (WEFT_RMA_MAILBOX=0). */
#include <time.h>

#include "common.h"

enum { NL = 12288, ROUNDS = 60, SPARSE_ROUNDS = 40, TICKETS = 300, SWAPS = 100 };

/* Rank 0 computes outside MPI for `us` microseconds: origins must not wait for it. */
static void compute_outside_mpi(double us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3 < us);
}

static void long_sums(void)
{
    int *mem = calloc(NL, sizeof(int));
    int *add = malloc(NL * sizeof(int));
    int *old = malloc(NL * sizeof(int));
    CHECK(mem && add && old, "allocation");
    for (int i = 0; i < NL; i++) add[i] = (t_rank + 1) * (1 + i % 7);
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, NL * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int r = 0; r < ROUNDS; r++) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        if (r % 2 == 0) {
            MPI_OK(MPI_Accumulate(add, NL, MPI_INT, 0, 0, NL, MPI_INT, MPI_SUM, win));
        } else {
            MPI_OK(MPI_Get_accumulate(add, NL, MPI_INT, old, NL, MPI_INT, 0, 0, NL, MPI_INT, MPI_SUM, win));
            /* Every element's old value is a whole number of contributions of its pattern. */
            for (int i = 0; i < NL; i++)
                if (old[i] % (1 + i % 7) != 0) {
                    FAIL("Get_accumulate round %d: old value %d of element %d is torn", r, old[i], i);
                    break;
                }
        }
        MPI_OK(MPI_Win_unlock(0, win));
        /* Bursts of different lengths: some origins withdraw a piece after others were taken. */
        if (t_rank == 0) compute_outside_mpi(r % 4 == 1 ? 300 : 20 * (r % 5));
    }
    /* Rank 0 enters MPI only for one probe between bursts longer than an origin waits: it takes
     * one piece of a long accumulate, and the origin applies the rest itself. */
    if (t_rank == 0) {
        for (int tokens = 0; tokens < t_size - 1;) {
            int flag = 0;
            MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            if (flag) {
                MPI_OK(MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                tokens++;
            }
            compute_outside_mpi(80);
        }
    } else {
        for (int r = 0; r < SPARSE_ROUNDS; r++) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            MPI_OK(MPI_Accumulate(add, NL, MPI_INT, 0, 0, NL, MPI_INT, MPI_SUM, win));
            MPI_OK(MPI_Win_unlock(0, win));
        }
        MPI_OK(MPI_Send(NULL, 0, MPI_INT, 0, 7, MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) {
        const int ranks_sum = t_size * (t_size + 1) / 2;
        const int per_pattern = ROUNDS * ranks_sum + SPARSE_ROUNDS * (ranks_sum - 1);
        for (int i = 0; i < NL; i++)
            if (mem[i] != per_pattern * (1 + i % 7)) {
                FAIL("element %d: %d, expected %d", i, mem[i], per_pattern * (1 + i % 7));
                break;
            }
    }
    MPI_OK(MPI_Win_free(&win));
    free(mem);
    free(add);
    free(old);
}

static void tickets_and_swaps(void)
{
    long long *counters = calloc(2, sizeof(long long)); /* tickets, swapped counter */
    long long *mine = malloc(TICKETS * sizeof(long long));
    CHECK(counters && mine, "allocation");
    MPI_Win win;
    MPI_OK(MPI_Win_create(counters, 2 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_lock_all(0, win));
    const long long one = 1;
    for (int i = 0; i < TICKETS; i++) {
        MPI_OK(MPI_Fetch_and_op(&one, &mine[i], MPI_LONG_LONG, 0, 0, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win));
        if (t_rank == 0 && i % 50 == 25) compute_outside_mpi(200);
    }
    int swapped = 0;
    while (swapped < SWAPS) {
        long long seen = 0, got = -1;
        const long long dummy = 0;
        MPI_OK(MPI_Fetch_and_op(&dummy, &seen, MPI_LONG_LONG, 0, 1, MPI_NO_OP, win));
        MPI_OK(MPI_Win_flush(0, win));
        const long long next = seen + 1;
        MPI_OK(MPI_Compare_and_swap(&next, &seen, &got, MPI_LONG_LONG, 0, 1, win));
        MPI_OK(MPI_Win_flush(0, win));
        if (got == seen) swapped++;
        if (t_rank == 0 && swapped % 40 == 20) compute_outside_mpi(100);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    long long *all = t_rank == 0 ? malloc((size_t)t_size * TICKETS * sizeof(long long)) : NULL;
    MPI_OK(MPI_Gather(mine, TICKETS, MPI_LONG_LONG, all, TICKETS, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) {
        const int n = t_size * TICKETS;
        char *seen = calloc((size_t)n, 1);
        for (int i = 0; i < n; i++) {
            CHECK(all[i] >= 0 && all[i] < n && !seen[all[i]], "ticket %lld out of range or drawn twice", all[i]);
            if (all[i] >= 0 && all[i] < n) seen[all[i]] = 1;
        }
        CHECK(counters[0] == n, "tickets drawn: %lld, expected %d", counters[0], n);
        CHECK(counters[1] == (long long)t_size * SWAPS, "counter raised by swaps: %lld, expected %d", counters[1],
              t_size * SWAPS);
        free(seen);
        free(all);
    }
    MPI_OK(MPI_Win_free(&win));
    free(counters);
    free(mine);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "rma_mailbox");
    long_sums();
    tickets_and_swaps();
    if (t_rank == 0) printf("rma_mailbox: ok (%d ranks)\n", t_size);
    MPI_Finalize();
    return 0;
}
