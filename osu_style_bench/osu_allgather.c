/*
 * osu_allgather.c - OSU-style MPI_Allgather latency test (weft).
 *
 * MPI_Allgather over all ranks of MPI_COMM_WORLD; the size is the number of
 * bytes (MPI_CHAR) each rank contributes, so the receive buffer holds
 * nranks * size bytes.  Each rank times its own loop; the average, minimum
 * and maximum of the per-rank averages are combined with MPI_Allreduce
 * (SUM / MIN / MAX on a double).  After the first iteration of every size
 * each rank checks every block of its receive buffer against the
 * contributing rank's pattern; any mismatch is reported and the program
 * exits with status 1.  The driver fills and checks the data in a host copy,
 * outside the timing, so the buffers themselves may be device or managed
 * memory (-d).
 */
#include "coll_patterns.h"

static void allgathers(bench_case *c, int n)
{
    const int block = (int)c->size; /* bytes from each rank */
    for (int i = 0; i < n; ++i)
        MPI_Allgather(c->sbuf, block, MPI_CHAR, c->rbuf, block, MPI_CHAR, MPI_COMM_WORLD);
}

static const bench_desc allgather = {
    .kind = BENCH_ALLGATHER, .run = allgathers, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .report = BENCH_REPORT_RANK_STATS, .fill = allgather_own_block, .expect = allgather_every_block};

BENCH_MAIN(allgather)
