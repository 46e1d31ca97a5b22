/*
 * osu_iallreduce.c - OSU-style MPI_Iallreduce overlap test (weft).
 *
 * MPI_Iallreduce of MPI_FLOAT with MPI_SUM over all ranks of MPI_COMM_WORLD,
 * measured in two passes per size, as OSU's non-blocking collective tests
 * do.  Every iteration is timed on its own and followed by an MPI_Barrier
 * (not timed).
 *
 *   1. Pure communication: MPI_Iallreduce immediately followed by MPI_Wait.
 *   2. Overlap: MPI_Iallreduce, then a compute loop that runs for this rank's
 *      average pure communication time of pass 1 without calling MPI (except
 *      MPI_Wtime), then MPI_Wait.  The overall time (post to completion) and
 *      the compute time are recorded.
 *
 * The overall, compute and pure times are averaged over the ranks (the pure
 * time also minimised and maximised), and the overlap is
 *     max(0, 100 * (1 - (overall - compute) / pure)):
 * 100% when the collective completes entirely behind the computation, 0%
 * when it only makes progress inside MPI_Wait.
 *
 * The result of the first iteration of each pass at every size is checked
 * against the sum computed locally from the rank-dependent input pattern
 * (bench_expect_float_sum); any mismatch is reported and the program exits
 * with status 1.
 */
#include "bench_common.h"

static void iallreduces(bench_case *c, int n)
{
    const int count = (int)(c->size / sizeof(float));
    MPI_Request req;
    int i;

    for (i = 0; i < n; ++i) {
        MPI_Iallreduce(c->sbuf, c->rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        bench_overlap_compute(c);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static const bench_desc iallreduce = {
    .kind = BENCH_IALLREDUCE, .run = iallreduces, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .timing = BENCH_TIME_OVERLAP, .report = BENCH_REPORT_OVERLAP,
    .fill = bench_fill_float_input, .expect = bench_expect_float_sum};

BENCH_MAIN(iallreduce)
