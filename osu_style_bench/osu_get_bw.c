/*
 * osu_get_bw.c - OSU-style MPI_Get bandwidth test (weft).
 *
 * Per iteration rank 0 gets a window of operations (-W, default 64), each of
 * `size` bytes from its own slot of rank 1's window, then synchronises once
 * (-s, default flush).  Bandwidth in MB/s (1e6 bytes per second).  After the
 * timed loop rank 0 checks every slot it read (bench_rma_get_setup,
 * bench_rma_get_verify).
 */
#include "bench_rma.h"

static const bench_desc get_bw =
    BENCH_RMA_DESC(BENCH_GET_BW, BENCH_BUF_RECV, bench_rma_get_setup, bench_rma_get_verify);

BENCH_MAIN(get_bw)
