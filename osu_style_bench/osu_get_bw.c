/*
 * osu_get_bw.c - OSU-style MPI_Get bandwidth test (weft).
 *
 * Per iteration rank 0 gets a window of operations (-W, default 64), each of
 * `size` bytes from its own slot of rank 1's window, then synchronises once
 * (-s, default flush).  Bandwidth in MB/s (1e6 bytes per second).  After the
 * timed loop rank 0 checks every slot it read.
 */
#include "bench_common.h"
#include "bench_rma.h"

typedef struct {
    char *rbuf;
    size_t size;
    MPI_Win win;
} get_ctx;

static void get_op(void *ctx, int target, MPI_Aint disp, int j)
{
    get_ctx *c = ctx;
    BENCH_RMA_CHECK(MPI_Get(c->rbuf + (size_t)j * c->size, (int)c->size, MPI_CHAR, target, disp,
                            (int)c->size, MPI_CHAR, c->win));
}

int main(int argc, char **argv)
{
    bench_opts o;
    size_t size;
    char *rbuf;

    bench_init(&argc, &argv, BENCH_GET_BW, &o);
    rbuf = bench_alloc_or_abort(&o, o.max_size * (size_t)o.window, BENCH_PLACE_HOST);
    bench_print_header(&o);

    size = o.min_size;
    do {
        const size_t bytes = size * (size_t)o.window;
        bench_window w;
        get_ctx c;
        double mbs;

        bench_window_create(&o, bytes, &w);
        bench_pattern_fill(w.base, bytes, o.rank, size);
        bench_touch(rbuf, bytes, 0, BENCH_PLACE_HOST);
        c.rbuf = rbuf;
        c.size = size;
        c.win = w.win;
        mbs = bench_rma_bw(&o, &w, size, get_op, &c);
        bench_rma_verify(
            &o, !bench_rma_is_origin(&o) || bench_pattern_ok(rbuf, bytes, 1 - o.rank, size), size,
            "the origin buffer");
        bench_print_row(&o, size, mbs);
        bench_window_free(&o, &w);
    } while (bench_advance(&o, &size));

    bench_free(rbuf, BENCH_PLACE_HOST);
    return bench_finalize(&o, 0);
}
