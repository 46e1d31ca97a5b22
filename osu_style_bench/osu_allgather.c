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
#include "bench_common.h"

#define PATTERN_PERIOD 97

/* Byte i of rank r's block: 1..PATTERN_PERIOD, different from rank to rank. */
static char pattern(int rank, size_t i)
{
    return (char)((((size_t)rank * 31u + i) % PATTERN_PERIOD) + 1u);
}

static void allgathers(bench_case *c, int n)
{
    const int block = (int)c->size; /* bytes from each rank */
    for (int i = 0; i < n; ++i)
        MPI_Allgather(c->sbuf, block, MPI_CHAR, c->rbuf, block, MPI_CHAR, MPI_COMM_WORLD);
}

static size_t own_block(const bench_case *c, void *host)
{
    char *bytes = host;
    size_t k;
    for (k = 0; k < c->size; ++k)
        bytes[k] = pattern(c->opts->rank, k);
    return c->size;
}

/* Block r of the result is rank r's contribution. */
static size_t every_block(const bench_case *c, void *host)
{
    const size_t total = c->size * (size_t)c->opts->nranks;
    char *bytes = host;
    size_t k;
    for (k = 0; k < total; ++k)
        bytes[k] = pattern((int)(k / c->size), k % c->size);
    return total;
}

static const bench_desc allgather = {
    .kind = BENCH_ALLGATHER, .run = allgathers, .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
    .report = BENCH_REPORT_RANK_STATS, .fill = own_block, .expect = every_block};

BENCH_MAIN(allgather)
