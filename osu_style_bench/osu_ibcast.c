/*
 * osu_ibcast.c - OSU-style MPI_Ibcast overlap test (weft).
 *
 * MPI_Ibcast of MPI_CHAR from rank 0 over MPI_COMM_WORLD, measured as
 * osu_iallreduce is (see there): a pure pass (post, then wait) and an
 * overlap pass (post, compute for the pure time without calling MPI, wait),
 * reporting overall, compute and pure times and the overlap.  The root's
 * bytes are checked at every rank after the first iteration of each pass.
 */
#include "bench_common.h"

#define ROOT 0

static size_t root_pattern(const bench_case *c, void *host)
{
    char *bytes = host;
    size_t k;
    for (k = 0; k < c->size; ++k)
        bytes[k] = (char)('a' + (c->size + k) % 26u);
    return c->size;
}

static size_t root_input(const bench_case *c, void *host)
{
    return c->opts->rank == ROOT ? root_pattern(c, host) : 0;
}

static void ibcasts(bench_case *c, int n)
{
    MPI_Request req;
    int i;

    for (i = 0; i < n; ++i) {
        MPI_Ibcast(c->sbuf, (int)c->size, MPI_CHAR, ROOT, MPI_COMM_WORLD, &req);
        if (c->pass == 2) {
            const double t1 = bench_now();
            bench_dummy_compute(c->compute_s);
            c->compute_total_s += bench_now() - t1;
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static const bench_desc ibcast = {
    .kind = BENCH_IBCAST, .run = ibcasts, .buffers = BENCH_BUF_ONE,
    .timing = BENCH_TIME_OVERLAP, .report = BENCH_REPORT_OVERLAP,
    .fill = root_input, .expect = root_pattern};

BENCH_MAIN(ibcast)
