/*
 * osu_reduce.c - OSU-style MPI_Reduce latency test (weft).
 *
 * MPI_Reduce of MPI_FLOAT with MPI_SUM over all ranks of MPI_COMM_WORLD to
 * rank 0.  As in OSU, every reduction is timed on its own and the ranks meet
 * in an MPI_Barrier (not timed) before the next one, so that the senders
 * cannot run ahead of the root.  The average, minimum and maximum of the
 * per-rank averages are combined with MPI_Allreduce (SUM / MIN / MAX on a
 * double).  After the first reduction of every size the root checks the
 * result against the sum computed locally from the rank-dependent input
 * pattern; any mismatch is reported and the program exits with status 1.
 * The driver fills and checks the data in a host copy, outside the timing, so
 * the buffers themselves may be device or managed memory (-d).
 */
#include "bench_common.h"

#define ROOT 0

static void reduces(bench_case *c, int n)
{
    const int count = (int)(c->size / sizeof(float));
    int i;
    for (i = 0; i < n; ++i)
        MPI_Reduce(c->sbuf, c->rbuf, count, MPI_FLOAT, MPI_SUM, ROOT, MPI_COMM_WORLD);
}

/* Only the root holds a result. */
static size_t expect_at_root(const bench_case *c, void *host)
{
    return c->opts->rank == ROOT ? bench_expect_float_sum(c, host) : 0;
}

static const bench_desc reduce = {
    .kind = BENCH_REDUCE, .run = reduces, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .timing = BENCH_TIME_EACH, .report = BENCH_REPORT_RANK_STATS,
    .fill = bench_fill_float_input, .expect = expect_at_root};

BENCH_MAIN(reduce)
