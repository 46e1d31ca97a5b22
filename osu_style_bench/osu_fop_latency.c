/*
 * osu_fop_latency.c - OSU-style MPI_Fetch_and_op latency test (weft).
 *
 * Rank 0 adds (MPI_SUM) one MPI_LONG_LONG to rank 1's window, fetching the
 * previous value, and synchronises, once per iteration (-s, default flush;
 * fence and pscw alternate the direction as OSU does).  One row, size 8.
 * After the timed loop the targets check the sum and the origins the last
 * value fetched.
 */
#include "bench_rma.h"

static void fop_op(void *ctx, int target, MPI_Aint disp, int j)
{
    bench_rma_row *r = ctx;
    (void)j;
    BENCH_RMA_CHECK(
        MPI_Fetch_and_op(&r->value, &r->result, MPI_LONG_LONG, target, disp, MPI_SUM, r->w.win));
}

static void fop_setup(bench_case *c)
{
    bench_rma_row *r = bench_rma_begin(c, fop_op);
    bench_elem_fill(&r->value, 1, BENCH_ELEM_LONG_LONG);
    r->result = -1;
}

static void fop_verify(bench_case *c)
{
    const bench_opts *o = c->opts;
    const bench_rma_row *r = c->state;
    const long n = bench_rma_ops(o, c->size);

    bench_rma_verify(
        o, !bench_rma_is_target(o) || bench_elem_sum_ok(r->w.base, 1, BENCH_ELEM_LONG_LONG, n),
        c->size, "the target window");
    bench_rma_verify(o,
                     !bench_rma_is_origin(o) ||
                         bench_elem_sum_ok(&r->result, 1, BENCH_ELEM_LONG_LONG, n - 1),
                     c->size, "the fetched value");
}

static const bench_desc fop_latency =
    BENCH_RMA_DESC(BENCH_FOP_LATENCY, 0, fop_setup, fop_verify);

BENCH_MAIN(fop_latency)
