/*
 * osu_barrier.c - OSU-style MPI_Barrier latency test (weft).
 *
 * MPI_Barrier over all ranks of MPI_COMM_WORLD.  Each rank times its own
 * loop; the average, minimum and maximum of the per-rank averages are
 * combined with MPI_Allreduce (SUM / MIN / MAX on a double).  The barrier
 * moves no data, so there is one row and no size; -m is accepted and
 * ignored, and --csv prints "0,avg".
 */
#include "bench_common.h"

static void barriers(bench_case *c, int n)
{
    int i;
    (void)c;
    for (i = 0; i < n; ++i)
        MPI_Barrier(MPI_COMM_WORLD);
}

static const bench_desc barrier = {.kind = BENCH_BARRIER, .run = barriers,
                                   .report = BENCH_REPORT_RANK_STATS};

BENCH_MAIN(barrier)
