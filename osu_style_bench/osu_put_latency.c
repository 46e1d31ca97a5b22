/*
 * osu_put_latency.c - OSU-style MPI_Put latency test (weft).
 *
 * Rank 0 puts `size` bytes into rank 1's window and synchronises, once per
 * iteration (-s, default flush; fence and pscw alternate the direction as
 * OSU does).  After the timed loop every target checks that its window holds
 * the origin's bytes.
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
    (void)j;
    BENCH_RMA_CHECK(
        MPI_Put(c->sbuf, (int)c->size, MPI_CHAR, target, disp, (int)c->size, MPI_CHAR, c->win));
}

int main(int argc, char **argv)
{
    bench_opts o;
    size_t size;
    char *sbuf;

    bench_init(&argc, &argv, BENCH_PUT_LATENCY, &o);
    sbuf = bench_alloc_or_abort(&o, o.max_size, BENCH_PLACE_HOST);
    bench_print_header(&o);

    size = o.min_size;
    do {
        bench_window w;
        put_ctx c;
        double us;

        bench_window_create(&o, size, &w);
        bench_pattern_fill(sbuf, size, o.rank, size);
        c.sbuf = sbuf;
        c.size = size;
        c.win = w.win;
        us = bench_rma_latency(&o, &w, size, put_op, &c);
        bench_rma_verify(
            &o, !bench_rma_is_target(&o) || bench_pattern_ok(w.base, size, 1 - o.rank, size), size,
            "the target window");
        bench_print_row(&o, size, us);
        bench_window_free(&o, &w);
    } while (bench_advance(&o, &size));

    bench_free(sbuf, BENCH_PLACE_HOST);
    return bench_finalize(&o, 0);
}
