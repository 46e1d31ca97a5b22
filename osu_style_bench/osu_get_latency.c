/*
 * osu_get_latency.c - OSU-style MPI_Get latency test (weft).
 *
 * Rank 0 gets `size` bytes from rank 1's window and synchronises, once per
 * iteration (-s, default flush; fence and pscw alternate the direction as
 * OSU does).  After the timed loop every origin checks the bytes it read.
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
    (void)j;
    BENCH_RMA_CHECK(
        MPI_Get(c->rbuf, (int)c->size, MPI_CHAR, target, disp, (int)c->size, MPI_CHAR, c->win));
}

int main(int argc, char **argv)
{
    bench_opts o;
    size_t size;
    char *rbuf;

    bench_init(&argc, &argv, BENCH_GET_LATENCY, &o);
    rbuf = bench_alloc_or_abort(&o, o.max_size, BENCH_PLACE_HOST);
    bench_print_header(&o);

    size = o.min_size;
    do {
        bench_window w;
        get_ctx c;
        double us;

        bench_window_create(&o, size, &w);
        /* What the peer reads: stored before the loop's opening barrier. */
        bench_pattern_fill(w.base, size, o.rank, size);
        bench_touch(rbuf, size, 0, BENCH_PLACE_HOST);
        c.rbuf = rbuf;
        c.size = size;
        c.win = w.win;
        us = bench_rma_latency(&o, &w, size, get_op, &c);
        bench_rma_verify(&o,
                         !bench_rma_is_origin(&o) || bench_pattern_ok(rbuf, size, 1 - o.rank, size),
                         size, "the origin buffer");
        bench_print_row(&o, size, us);
        bench_window_free(&o, &w);
    } while (bench_advance(&o, &size));

    bench_free(rbuf, BENCH_PLACE_HOST);
    return bench_finalize(&o, 0);
}
