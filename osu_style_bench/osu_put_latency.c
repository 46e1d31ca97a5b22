/*
 * osu_put_latency.c - OSU-style MPI_Put latency test (weft).
 *
 * Rank 0 puts `size` bytes into rank 1's window and synchronises, once per
 * iteration (-s, default flush; fence and pscw alternate the direction as
 * OSU does).  After the timed loop every target checks that its window holds
 * the origin's bytes (bench_rma_put_setup, bench_rma_put_verify).
 */
#include "bench_rma.h"

static const bench_desc put_latency =
    BENCH_RMA_DESC(BENCH_PUT_LATENCY, BENCH_BUF_SEND, bench_rma_put_setup, bench_rma_put_verify);

BENCH_MAIN(put_latency)
