/*
 * osu_acc_latency.c - OSU-style MPI_Accumulate latency test (weft).
 *
 * Rank 0 adds (MPI_SUM) `size` bytes of -T elements (default MPI_CHAR, as
 * OSU) into rank 1's window and synchronises, once per iteration (-s, default
 * flush; fence and pscw alternate the direction as OSU does).  A short second
 * pass of the same loop follows, after which every target checks that each
 * element holds the sum of its operations.
 */
#include "bench_common.h"
#include "bench_rma.h"

#include <string.h>

typedef struct {
    char *sbuf;
    int count;
    MPI_Datatype type;
    MPI_Win win;
} acc_ctx;

static void acc_op(void *ctx, int target, MPI_Aint disp, int j)
{
    acc_ctx *c = ctx;
    (void)j;
    BENCH_RMA_CHECK(MPI_Accumulate(c->sbuf, c->count, c->type, target, disp, c->count, c->type,
                                   MPI_SUM, c->win));
}

int main(int argc, char **argv)
{
    bench_opts o, check;
    size_t size;
    char *sbuf;

    bench_init(&argc, &argv, BENCH_ACC_LATENCY, &o);
    sbuf = bench_alloc_or_abort(&o, o.max_size, BENCH_PLACE_HOST);
    bench_print_header(&o);

    size = o.min_size;
    do {
        const size_t count = size / bench_elem_size(o.elem);
        bench_window w;
        acc_ctx c;
        double us;

        bench_window_create(&o, size, &w);
        bench_elem_fill(sbuf, count, o.elem);
        c.sbuf = sbuf;
        c.count = (int)count;
        c.type = bench_elem_type(o.elem);
        c.win = w.win;
        us = bench_rma_latency(&o, &w, size, acc_op, &c);
        /* The check runs on a short pass from a zeroed window (see bench_rma_check_pass). */
        bench_rma_check_pass(&o, &check);
        memset(w.base, 0, size);
        (void)bench_rma_latency(&check, &w, size, acc_op, &c);
        bench_rma_verify(&o,
                         !bench_rma_is_target(&o) ||
                             bench_elem_sum_ok(w.base, count, o.elem, bench_rma_ops(&check, size)),
                         size, "the target window");
        bench_print_row(&o, size, us);
        bench_window_free(&o, &w);
    } while (bench_advance(&o, &size));

    bench_free(sbuf, BENCH_PLACE_HOST);
    return bench_finalize(&o, 0);
}
