/*
 * osu_cas_latency.c - OSU-style MPI_Compare_and_swap latency test (weft).
 *
 * Rank 0 compares-and-swaps one MPI_LONG_LONG in rank 1's window and
 * synchronises, once per iteration (-s, default flush; fence and pscw
 * alternate the direction as OSU does).  The compare value is 0: the first
 * operation swaps the origin's value in, every later one fails and fetches
 * it.  One row, size 8.  After the timed loop the targets check the value
 * swapped in and the origins the value fetched.
 */
#include "bench_rma.h"

#include <string.h>

static void cas_op(void *ctx, int target, MPI_Aint disp, int j)
{
    bench_rma_row *r = ctx;
    (void)j;
    BENCH_RMA_CHECK(MPI_Compare_and_swap(&r->value, &r->compare, &r->result, MPI_LONG_LONG, target,
                                         disp, r->w.win));
}

/* The value rank `writer` swaps in. */
static long long cas_value(int writer)
{
    return 0x5a5a0000LL + writer + 1;
}

static void cas_setup(bench_case *c)
{
    bench_rma_row *r = bench_rma_begin(c, cas_op);
    r->value = cas_value(c->opts->rank);
    r->compare = 0;
    r->result = -1;
}

static void cas_verify(bench_case *c)
{
    const bench_opts *o = c->opts;
    const bench_rma_row *r = c->state;
    const long n = bench_rma_ops(o, c->size);
    long long held;

    memcpy(&held, r->w.base, sizeof(held));
    bench_rma_verify(o, !bench_rma_is_target(o) || held == cas_value(1 - o->rank), c->size,
                     "the target window");
    bench_rma_verify(o, !bench_rma_is_origin(o) || r->result == (n > 1 ? cas_value(o->rank) : 0),
                     c->size, "the fetched value");
}

static const bench_desc cas_latency =
    BENCH_RMA_DESC(BENCH_CAS_LATENCY, 0, cas_setup, cas_verify);

BENCH_MAIN(cas_latency)
