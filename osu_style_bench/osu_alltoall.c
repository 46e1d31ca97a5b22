/*
 * osu_alltoall.c - OSU-style MPI_Alltoall latency test (weft).
 *
 * MPI_Alltoall over all ranks of MPI_COMM_WORLD; the size is the number of
 * bytes (MPI_CHAR) each rank sends to each rank, so both buffers hold
 * nranks * size bytes.  Each rank times its own loop; the average, minimum
 * and maximum of the per-rank averages are combined with MPI_Allreduce
 * (SUM / MIN / MAX on a double).  After the first iteration of every size
 * each rank checks every block it received against the pattern the sending
 * rank used for it; any mismatch is reported and the program exits with
 * status 1.
 */
#include "coll_patterns.h"

static void alltoalls(bench_case *c, int n)
{
    int i;
    for (i = 0; i < n; ++i)
        MPI_Alltoall(c->sbuf, (int)c->size, MPI_CHAR, c->rbuf, (int)c->size, MPI_CHAR,
                     MPI_COMM_WORLD);
}

/* Block d of the input goes to rank d, block s of the result came from rank s. */
static const bench_desc alltoall = {
    .kind = BENCH_ALLTOALL, .run = alltoalls, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .report = BENCH_REPORT_RANK_STATS, .fill = alltoall_blocks_sent, .expect = alltoall_blocks_received};

BENCH_MAIN(alltoall)
