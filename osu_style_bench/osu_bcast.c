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
#include "bench_common.h"

#define ROOT 0

/* Byte i of the root's buffer for a message of `size` bytes (never 0). */
static size_t root_pattern(const bench_case *c, void *host)
{
    char *bytes = host;
    size_t k;
    for (k = 0; k < c->size; ++k)
        bytes[k] = (char)('a' + (c->size + k) % 26u);
    return c->size;
}

/* The root sends the pattern, the others start from a zeroed buffer. */
static size_t root_input(const bench_case *c, void *host)
{
    return c->opts->rank == ROOT ? root_pattern(c, host) : 0;
}

static void bcasts(bench_case *c, int n)
{
    int i;
    for (i = 0; i < n; ++i)
        MPI_Bcast(c->sbuf, (int)c->size, MPI_CHAR, ROOT, MPI_COMM_WORLD);
}

static const bench_desc bcast = {
    .kind = BENCH_BCAST, .run = bcasts, .buffers = BENCH_BUF_ONE,
    .timing = BENCH_TIME_EACH, .report = BENCH_REPORT_RANK_STATS,
    .fill = root_input, .expect = root_pattern};

BENCH_MAIN(bcast)
