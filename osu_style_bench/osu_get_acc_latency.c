/*
 * osu_get_acc_latency.c - OSU-style MPI_Get_accumulate latency test (weft).
 *
 * Rank 0 adds (MPI_SUM) `size` bytes of -T elements (default MPI_CHAR, as
 * OSU) into rank 1's window, fetching the previous values, and synchronises,
 * once per iteration (-s, default flush; fence and pscw alternate the
 * direction as OSU does).  A short second pass of the same loop follows,
 * after which every target checks the sums in its window and every origin the
 * values its last operation fetched.
 */
#include "bench_common.h"
#include "bench_rma.h"

#include <string.h>

typedef struct {
    char *sbuf, *rbuf;
    int count;
    MPI_Datatype type;
    MPI_Win win;
} get_acc_ctx;

static void get_acc_op(void *ctx, int target, MPI_Aint disp, int j)
{
    get_acc_ctx *c = ctx;
    (void)j;
    BENCH_RMA_CHECK(MPI_Get_accumulate(c->sbuf, c->count, c->type, c->rbuf, c->count, c->type,
                                       target, disp, c->count, c->type, MPI_SUM, c->win));
}

int main(int argc, char **argv)
{
    bench_opts o, check;
    size_t size;
    char *sbuf, *rbuf;

    bench_init(&argc, &argv, BENCH_GET_ACC_LATENCY, &o);
    sbuf = bench_alloc_or_abort(&o, o.max_size, BENCH_PLACE_HOST);
    rbuf = bench_alloc_or_abort(&o, o.max_size, BENCH_PLACE_HOST);
    bench_print_header(&o);

    size = o.min_size;
    do {
        const size_t count = size / bench_elem_size(o.elem);
        long n;
        bench_window w;
        get_acc_ctx c;
        double us;

        bench_window_create(&o, size, &w);
        bench_elem_fill(sbuf, count, o.elem);
        bench_touch(rbuf, size, 0, BENCH_PLACE_HOST);
        c.sbuf = sbuf;
        c.rbuf = rbuf;
        c.count = (int)count;
        c.type = bench_elem_type(o.elem);
        c.win = w.win;
        us = bench_rma_latency(&o, &w, size, get_acc_op, &c);
        /* The checks run on a short pass from a zeroed window (see bench_rma_check_pass). */
        bench_rma_check_pass(&o, &check);
        n = bench_rma_ops(&check, size);
        memset(w.base, 0, size);
        (void)bench_rma_latency(&check, &w, size, get_acc_op, &c);
        bench_rma_verify(&o,
                         !bench_rma_is_target(&o) || bench_elem_sum_ok(w.base, count, o.elem, n),
                         size, "the target window");
        bench_rma_verify(&o,
                         !bench_rma_is_origin(&o) || bench_elem_sum_ok(rbuf, count, o.elem, n - 1),
                         size, "the fetched values");
        bench_print_row(&o, size, us);
        bench_window_free(&o, &w);
    } while (bench_advance(&o, &size));

    bench_free(sbuf, BENCH_PLACE_HOST);
    bench_free(rbuf, BENCH_PLACE_HOST);
    return bench_finalize(&o, 0);
}
