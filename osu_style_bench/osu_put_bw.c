/*
 * osu_put_bw.c - OSU-style MPI_Put bandwidth test (weft).
 *
 * Per iteration rank 0 puts a window of operations (-W, default 64), each of
 * `size` bytes into its own slot of rank 1's window, then synchronises once
 * (-s, default flush).  Bandwidth in MB/s (1e6 bytes per second).  After the
 * timed loop rank 1 checks every slot.
 */
#include "bench_common.h"
#include "bench_rma.h"

typedef struct {
    char *sbuf;
    size_t size;
    MPI_Win win;
} put_ctx;

static void put_op(void *ctx, int target, MPI_Aint disp, int j)
{
    put_ctx *c = ctx;
    BENCH_RMA_CHECK(MPI_Put(c->sbuf + (size_t)j * c->size, (int)c->size, MPI_CHAR, target, disp,
                            (int)c->size, MPI_CHAR, c->win));
}

int main(int argc, char **argv)
{
    bench_opts o;
    size_t size;
    char *sbuf;

    bench_init(&argc, &argv, BENCH_PUT_BW, &o);
    sbuf = bench_alloc_or_abort(&o, o.max_size * (size_t)o.window, BENCH_PLACE_HOST);
    bench_print_header(&o);

    size = o.min_size;
    do {
        const size_t bytes = size * (size_t)o.window;
        bench_window w;
        put_ctx c;
        double mbs;

        bench_window_create(&o, bytes, &w);
        bench_pattern_fill(sbuf, bytes, o.rank, size);
        c.sbuf = sbuf;
        c.size = size;
        c.win = w.win;
        mbs = bench_rma_bw(&o, &w, size, put_op, &c);
        bench_rma_verify(
            &o, !bench_rma_is_target(&o) || bench_pattern_ok(w.base, bytes, 1 - o.rank, size), size,
            "the target window");
        bench_print_row(&o, size, mbs);
        bench_window_free(&o, &w);
    } while (bench_advance(&o, &size));

    bench_free(sbuf, BENCH_PLACE_HOST);
    return bench_finalize(&o, 0);
}
