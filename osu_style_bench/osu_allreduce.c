/*
 * osu_allreduce.c - OSU-style MPI_Allreduce latency test (weft).
 *
 * MPI_Allreduce of MPI_FLOAT with MPI_SUM over all ranks of MPI_COMM_WORLD.
 * Each rank times its own loop; the average, minimum and maximum of the
 * per-rank averages are combined with MPI_Allreduce (SUM / MIN / MAX on a
 * double).  The result of the first iteration of every size is checked
 * against the sum computed locally from the rank-dependent input pattern
 * (bench_expect_float_sum); any mismatch is reported and the program exits
 * with status 1.  The driver fills and checks the data in a host copy, outside
 * the timing, so the buffers themselves may be device or managed memory (-d).
 */
#include "bench_common.h"

static void allreduces(bench_case *c, int n)
{
    const int count = (int)(c->size / sizeof(float));
    int i;
    for (i = 0; i < n; ++i)
        MPI_Allreduce(c->sbuf, c->rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static const bench_desc allreduce = {
    .kind = BENCH_ALLREDUCE, .run = allreduces, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .report = BENCH_REPORT_RANK_STATS,
    .fill = bench_fill_float_input, .expect = bench_expect_float_sum};

BENCH_MAIN(allreduce)
