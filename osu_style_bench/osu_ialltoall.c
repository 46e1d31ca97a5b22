/*
 * osu_ialltoall.c - OSU-style MPI_Ialltoall overlap test (weft).
 *
 * MPI_Ialltoall of MPI_CHAR over MPI_COMM_WORLD (the size is the bytes each
 * rank sends to each rank), measured as osu_iallreduce is: a pure pass and an
 * overlap pass with computation between post and wait, reporting overall,
 * compute and pure times and the overlap.  Every received block is checked
 * against its sender's pattern after the first iteration of each pass.
 */
#include "bench_common.h"

#define PATTERN_PERIOD 97

static char pattern(int src, int dst, size_t i)
{
    return (char)((((size_t)src * 31u + (size_t)dst * 17u + i) % PATTERN_PERIOD) + 1u);
}

static void ialltoalls(bench_case *c, int n)
{
    MPI_Request req;
    int i;

    for (i = 0; i < n; ++i) {
        MPI_Ialltoall(c->sbuf, (int)c->size, MPI_CHAR, c->rbuf, (int)c->size, MPI_CHAR, MPI_COMM_WORLD, &req);
        if (c->pass == 2) {
            const double t1 = bench_now();
            bench_dummy_compute(c->compute_s);
            c->compute_total_s += bench_now() - t1;
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static size_t blocks_sent(const bench_case *c, void *host)
{
    const size_t total = c->size * (size_t)c->opts->nranks;
    char *bytes = host;
    size_t k;
    for (k = 0; k < total; ++k)
        bytes[k] = pattern(c->opts->rank, (int)(k / c->size), k % c->size);
    return total;
}

static size_t blocks_received(const bench_case *c, void *host)
{
    const size_t total = c->size * (size_t)c->opts->nranks;
    char *bytes = host;
    size_t k;
    for (k = 0; k < total; ++k)
        bytes[k] = pattern((int)(k / c->size), c->opts->rank, k % c->size);
    return total;
}

static const bench_desc ialltoall = {
    .kind = BENCH_IALLTOALL, .run = ialltoalls, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .timing = BENCH_TIME_OVERLAP, .report = BENCH_REPORT_OVERLAP,
    .fill = blocks_sent, .expect = blocks_received};

BENCH_MAIN(ialltoall)
