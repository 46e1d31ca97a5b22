/*
 * osu_put_bw.c - OSU-style MPI_Put bandwidth test (weft).
 *
 * Per iteration rank 0 puts a window of operations (-W, default 64), each of
 * `size` bytes into its own slot of rank 1's window, then synchronises once
 * (-s, default flush).  Bandwidth in MB/s (1e6 bytes per second).  After the
 * timed loop rank 1 checks every slot (bench_rma_put_setup,
 * bench_rma_put_verify).
 */
#include "bench_rma.h"

static const bench_desc put_bw =
    BENCH_RMA_DESC(BENCH_PUT_BW, BENCH_BUF_SEND, bench_rma_put_setup, bench_rma_put_verify);

BENCH_MAIN(put_bw)
