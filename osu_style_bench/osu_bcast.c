/*
 * osu_bcast.c - OSU-style MPI_Bcast latency test (weft).
 *
 * MPI_Bcast of `size` bytes of MPI_CHAR from rank 0 to all ranks of
 * MPI_COMM_WORLD.  As in OSU, every broadcast is timed on its own and the
 * ranks meet in an MPI_Barrier (not timed) before the next one, so that the
 * root cannot run ahead of the other ranks.  The average, minimum and maximum
 * of the per-rank averages are combined with MPI_Allreduce (SUM / MIN / MAX
 * on a double).  After the first broadcast of every size each rank checks its
 * buffer against the root's pattern; any mismatch is reported and the
 * program exits with status 1.  The driver writes and checks the pattern in a
 * host copy, outside the timing, so the buffer itself may be device or
 * managed memory (-d).
 */
#include "coll_patterns.h"

static void bcasts(bench_case *c, int n)
{
    int i;
    for (i = 0; i < n; ++i)
        MPI_Bcast(c->sbuf, (int)c->size, MPI_CHAR, PATTERN_ROOT, MPI_COMM_WORLD);
}

static const bench_desc bcast = {
    .kind = BENCH_BCAST, .run = bcasts, .buffers = BENCH_BUF_ONE,
    .timing = BENCH_TIME_EACH, .report = BENCH_REPORT_RANK_STATS,
    .fill = bcast_root_input, .expect = bcast_root_pattern};

BENCH_MAIN(bcast)
