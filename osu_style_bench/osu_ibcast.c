/*
 * osu_ibcast.c - OSU-style MPI_Ibcast overlap test (weft).
 *
 * MPI_Ibcast of MPI_CHAR from rank 0 over MPI_COMM_WORLD, measured as
 * osu_iallreduce is (see there): a pure pass (post, then wait) and an
 * overlap pass (post, compute for the pure time without calling MPI, wait),
 * reporting overall, compute and pure times and the overlap.  The root's
 * bytes are checked at every rank after the first iteration of each pass.
 */
#include "coll_patterns.h"

static void ibcasts(bench_case *c, int n)
{
    MPI_Request req;
    int i;

    for (i = 0; i < n; ++i) {
        MPI_Ibcast(c->sbuf, (int)c->size, MPI_CHAR, PATTERN_ROOT, MPI_COMM_WORLD, &req);
        bench_overlap_compute(c);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static const bench_desc ibcast = {
    .kind = BENCH_IBCAST, .run = ibcasts, .buffers = BENCH_BUF_ONE,
    .timing = BENCH_TIME_OVERLAP, .report = BENCH_REPORT_OVERLAP,
    .fill = bcast_root_input, .expect = bcast_root_pattern};

BENCH_MAIN(ibcast)
