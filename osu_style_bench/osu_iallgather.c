/*
 * osu_iallgather.c - OSU-style MPI_Iallgather overlap test (weft).
 *
 * MPI_Iallgather of MPI_CHAR over MPI_COMM_WORLD (the size is each rank's
 * contribution), measured as osu_iallreduce is: a pure pass and an overlap
 * pass with computation between post and wait, reporting overall, compute
 * and pure times and the overlap.  Every block of the result is checked
 * against its rank's pattern after the first iteration of each pass.
 */
#include "coll_patterns.h"

static void iallgathers(bench_case *c, int n)
{
    const int block = (int)c->size;
    MPI_Request req;
    int i;

    for (i = 0; i < n; ++i) {
        MPI_Iallgather(c->sbuf, block, MPI_CHAR, c->rbuf, block, MPI_CHAR, MPI_COMM_WORLD, &req);
        bench_overlap_compute(c);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static const bench_desc iallgather = {
    .kind = BENCH_IALLGATHER, .run = iallgathers, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .timing = BENCH_TIME_OVERLAP, .report = BENCH_REPORT_OVERLAP,
    .fill = allgather_own_block, .expect = allgather_every_block};

BENCH_MAIN(iallgather)
