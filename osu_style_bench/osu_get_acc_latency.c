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
#include "bench_rma.h"

#include <string.h>

static void get_acc_op(void *ctx, int target, MPI_Aint disp, int j)
{
    bench_rma_row *r = ctx;
    (void)j;
    BENCH_RMA_CHECK(MPI_Get_accumulate(r->origin, r->count, r->type, r->fetched, r->count,
                                       r->type, target, disp, r->count, r->type, MPI_SUM,
                                       r->w.win));
}

static void get_acc_setup(bench_case *c)
{
    bench_rma_row *r = bench_rma_begin(c, get_acc_op);
    r->origin = c->sbuf;
    r->fetched = c->rbuf;
    r->count = (int)(c->size / bench_elem_size(c->opts->elem));
    r->type = bench_elem_type(c->opts->elem);
    bench_elem_fill(r->origin, (size_t)r->count, c->opts->elem);
    bench_touch(r->fetched, c->size, 0, BENCH_PLACE_HOST);
}

/* The checks run on a short pass from a zeroed window (see bench_rma_check_pass). */
static void get_acc_verify(bench_case *c)
{
    const bench_opts *o = c->opts;
    bench_rma_row *r = c->state;
    const size_t count = (size_t)r->count;
    bench_opts check;
    long n;

    bench_rma_check_pass(o, &check);
    n = bench_rma_ops(&check, c->size);
    memset(r->w.base, 0, c->size);
    (void)bench_rma_latency(&check, &r->w, c->size, get_acc_op, r);
    bench_rma_verify(o, !bench_rma_is_target(o) || bench_elem_sum_ok(r->w.base, count, o->elem, n),
                     c->size, "the target window");
    bench_rma_verify(o,
                     !bench_rma_is_origin(o) || bench_elem_sum_ok(r->fetched, count, o->elem, n - 1),
                     c->size, "the fetched values");
}

static const bench_desc get_acc_latency = BENCH_RMA_DESC(
    BENCH_GET_ACC_LATENCY, BENCH_BUF_SEND | BENCH_BUF_RECV, get_acc_setup, get_acc_verify);

BENCH_MAIN(get_acc_latency)
