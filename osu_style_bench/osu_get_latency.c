/*
 * osu_get_latency.c - OSU-style MPI_Get latency test (weft).
 *
 * Rank 0 gets `size` bytes from rank 1's window and synchronises, once per
 * iteration (-s, default flush; fence and pscw alternate the direction as
 * OSU does).  After the timed loop every origin checks the bytes it read
 * (bench_rma_get_setup, bench_rma_get_verify).
 */
#include "bench_rma.h"

static const bench_desc get_latency =
    BENCH_RMA_DESC(BENCH_GET_LATENCY, BENCH_BUF_RECV, bench_rma_get_setup, bench_rma_get_verify);

BENCH_MAIN(get_latency)
