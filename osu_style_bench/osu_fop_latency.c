/*
 * osu_fop_latency.c - OSU-style MPI_Fetch_and_op latency test (weft).
 *
 * Rank 0 adds (MPI_SUM) one MPI_LONG_LONG to rank 1's window, fetching the
 * previous value, and synchronises, once per iteration (-s, default flush;
 * fence and pscw alternate the direction as OSU does).  One row, size 8.
 * After the timed loop the targets check the sum and the origins the last
 * value fetched.
 */
#include "bench_common.h"
#include "bench_rma.h"

typedef struct {
    long long value, result;
    MPI_Win win;
} fop_ctx;

static void fop_op(void *ctx, int target, MPI_Aint disp, int j)
{
    fop_ctx *c = ctx;
    (void)j;
    BENCH_RMA_CHECK(
        MPI_Fetch_and_op(&c->value, &c->result, MPI_LONG_LONG, target, disp, MPI_SUM, c->win));
}

int main(int argc, char **argv)
{
    bench_opts o;
    const size_t size = sizeof(long long);
    bench_window w;
    fop_ctx c;
    long n;
    double us;

    bench_init(&argc, &argv, BENCH_FOP_LATENCY, &o);
    bench_print_header(&o);

    n = bench_rma_ops(&o, size);
    bench_window_create(&o, size, &w);
    bench_elem_fill(&c.value, 1, BENCH_ELEM_LONG_LONG);
    c.result = -1;
    c.win = w.win;
    us = bench_rma_latency(&o, &w, size, fop_op, &c);
    bench_rma_verify(
        &o, !bench_rma_is_target(&o) || bench_elem_sum_ok(w.base, 1, BENCH_ELEM_LONG_LONG, n), size,
        "the target window");
    bench_rma_verify(&o,
                     !bench_rma_is_origin(&o) ||
                         bench_elem_sum_ok(&c.result, 1, BENCH_ELEM_LONG_LONG, n - 1),
                     size, "the fetched value");
    bench_print_row(&o, size, us);
    bench_window_free(&o, &w);
    return bench_finalize(&o, 0);
}
