/*
 * osu_ialltoall.c - OSU-style MPI_Ialltoall overlap test (weft).
 *
 * MPI_Ialltoall of MPI_CHAR over MPI_COMM_WORLD (the size is the bytes each
 * rank sends to each rank), measured as osu_iallreduce is: a pure pass and an
 * overlap pass with computation between post and wait, reporting overall,
 * compute and pure times and the overlap.  Every received block is checked
 * against its sender's pattern after the first iteration of each pass.
 */
#include "coll_patterns.h"

static void ialltoalls(bench_case *c, int n)
{
    MPI_Request req;
    int i;

    for (i = 0; i < n; ++i) {
        MPI_Ialltoall(c->sbuf, (int)c->size, MPI_CHAR, c->rbuf, (int)c->size, MPI_CHAR, MPI_COMM_WORLD, &req);
        bench_overlap_compute(c);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static const bench_desc ialltoall = {
    .kind = BENCH_IALLTOALL, .run = ialltoalls, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .timing = BENCH_TIME_OVERLAP, .report = BENCH_REPORT_OVERLAP,
    .fill = alltoall_blocks_sent, .expect = alltoall_blocks_received};

BENCH_MAIN(ialltoall)
