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
#include "bench_common.h"
#include "bench_rma.h"

#include <string.h>

typedef struct {
    long long value, compare, result;
    MPI_Win win;
} cas_ctx;

static void cas_op(void *ctx, int target, MPI_Aint disp, int j)
{
    cas_ctx *c = ctx;
    (void)j;
    BENCH_RMA_CHECK(MPI_Compare_and_swap(&c->value, &c->compare, &c->result, MPI_LONG_LONG, target,
                                         disp, c->win));
}

/* The value rank `writer` swaps in. */
static long long cas_value(int writer)
{
    return 0x5a5a0000LL + writer + 1;
}

int main(int argc, char **argv)
{
    bench_opts o;
    const size_t size = sizeof(long long);
    bench_window w;
    cas_ctx c;
    long long held;
    long n;
    double us;

    bench_init(&argc, &argv, BENCH_CAS_LATENCY, &o);
    bench_print_header(&o);

    n = bench_rma_ops(&o, size);
    bench_window_create(&o, size, &w);
    c.value = cas_value(o.rank);
    c.compare = 0;
    c.result = -1;
    c.win = w.win;
    us = bench_rma_latency(&o, &w, size, cas_op, &c);
    memcpy(&held, w.base, sizeof(held));
    bench_rma_verify(&o, !bench_rma_is_target(&o) || held == cas_value(1 - o.rank), size,
                     "the target window");
    bench_rma_verify(&o, !bench_rma_is_origin(&o) || c.result == (n > 1 ? cas_value(o.rank) : 0),
                     size, "the fetched value");
    bench_print_row(&o, size, us);
    bench_window_free(&o, &w);
    return bench_finalize(&o, 0);
}
