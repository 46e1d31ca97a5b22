/*
 * osu_acc_latency.c - OSU-style MPI_Accumulate latency test (weft).
 *
 * Rank 0 adds (MPI_SUM) `size` bytes of -T elements (default MPI_CHAR, as
 * OSU) into rank 1's window and synchronises, once per iteration (-s, default
 * flush; fence and pscw alternate the direction as OSU does).  A short second
 * pass of the same loop follows, after which every target checks that each
 * element holds the sum of its operations.
 */
#include "bench_rma.h"

#include <string.h>

static void acc_op(void *ctx, int target, MPI_Aint disp, int j)
{
    bench_rma_row *r = ctx;
    (void)j;
    BENCH_RMA_CHECK(MPI_Accumulate(r->origin, r->count, r->type, target, disp, r->count, r->type,
                                   MPI_SUM, r->w.win));
}

static void acc_setup(bench_case *c)
{
    bench_rma_row *r = bench_rma_begin(c, acc_op);
    r->origin = c->sbuf;
    r->count = (int)(c->size / bench_elem_size(c->opts->elem));
    r->type = bench_elem_type(c->opts->elem);
    bench_elem_fill(r->origin, (size_t)r->count, c->opts->elem);
}

/* The check runs on a short pass from a zeroed window (see bench_rma_check_pass). */
static void acc_verify(bench_case *c)
{
    bench_rma_row *r = c->state;
    bench_opts check;

    bench_rma_check_pass(c->opts, &check);
    memset(r->w.base, 0, c->size);
    (void)bench_rma_latency(&check, &r->w, c->size, acc_op, r);
    bench_rma_verify(c->opts,
                     !bench_rma_is_target(c->opts) ||
                         bench_elem_sum_ok(r->w.base, (size_t)r->count, c->opts->elem,
                                           bench_rma_ops(&check, c->size)),
                     c->size, "the target window");
}

static const bench_desc acc_latency =
    BENCH_RMA_DESC(BENCH_ACC_LATENCY, BENCH_BUF_SEND, acc_setup, acc_verify);

BENCH_MAIN(acc_latency)
