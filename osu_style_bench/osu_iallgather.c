/*
 * osu_iallgather.c - OSU-style MPI_Iallgather overlap test (weft).
 *
 * MPI_Iallgather of MPI_CHAR over MPI_COMM_WORLD (the size is each rank's
 * contribution), measured as osu_iallreduce is: a pure pass and an overlap
 * pass with computation between post and wait, reporting overall, compute
 * and pure times and the overlap.  Every block of the result is checked
 * against its rank's pattern after the first iteration of each pass.
 */
#include "bench_common.h"

#define PATTERN_PERIOD 97

static char pattern(int rank, size_t i)
{
    return (char)((((size_t)rank * 31u + i) % PATTERN_PERIOD) + 1u);
}

static void iallgathers(bench_case *c, int n)
{
    const int block = (int)c->size;
    MPI_Request req;
    int i;

    for (i = 0; i < n; ++i) {
        MPI_Iallgather(c->sbuf, block, MPI_CHAR, c->rbuf, block, MPI_CHAR, MPI_COMM_WORLD, &req);
        if (c->pass == 2) {
            const double t1 = bench_now();
            bench_dummy_compute(c->compute_s);
            c->compute_total_s += bench_now() - t1;
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static size_t own_block(const bench_case *c, void *host)
{
    char *bytes = host;
    size_t k;
    for (k = 0; k < c->size; ++k)
        bytes[k] = pattern(c->opts->rank, k);
    return c->size;
}

static size_t every_block(const bench_case *c, void *host)
{
    const size_t total = c->size * (size_t)c->opts->nranks;
    char *bytes = host;
    size_t k;
    for (k = 0; k < total; ++k)
        bytes[k] = pattern((int)(k / c->size), k % c->size);
    return total;
}

static const bench_desc iallgather = {
    .kind = BENCH_IALLGATHER, .run = iallgathers, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .timing = BENCH_TIME_OVERLAP, .report = BENCH_REPORT_OVERLAP,
    .fill = own_block, .expect = every_block};

BENCH_MAIN(iallgather)
