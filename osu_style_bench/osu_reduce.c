/*
 * osu_reduce.c - OSU-style MPI_Reduce latency test (weft).
 *
 * MPI_Reduce of MPI_FLOAT with MPI_SUM over all ranks of MPI_COMM_WORLD to
 * rank 0.  As in OSU, every reduction is timed on its own and the ranks meet
 * in an MPI_Barrier (not timed) before the next one, so that the senders
 * cannot run ahead of the root.  The average, minimum and maximum of the
 * per-rank averages are combined with MPI_Allreduce (SUM / MIN / MAX on a
 * double).  After the first reduction of every size the root checks the
 * result against the sum computed locally from the rank-dependent input
 * pattern; any mismatch is reported and the program exits with status 1.
 * The input is written and the result checked in a host mirror, copied in
 * before the reductions and out after the first one, so the buffers
 * themselves may be device or managed memory (-d).
 */
#include "bench_common.h"

#include <stdio.h>

#define ROOT 0
#define PATTERN_PERIOD 16

/*
 * Input element i of rank r: small integers, so that the float sum is exact
 * whatever order the library adds the contributions in.
 */
static float pattern(int rank, size_t i)
{
    return (float)((((size_t)rank * 3u + i) % PATTERN_PERIOD) + 1u);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_placement place;
    float *sbuf, *rbuf, *mirror;
    float expected[PATTERN_PERIOD];
    size_t size;
    int r, status = 0;
    size_t k;

    bench_init(&argc, &argv, BENCH_REDUCE, &o);
    place = bench_my_placement(&o);

    /* The pattern is periodic in the element index: precompute the sums. */
    for (k = 0; k < PATTERN_PERIOD; ++k) {
        expected[k] = 0.0f;
        for (r = 0; r < o.nranks; ++r)
            expected[k] += pattern(r, k);
    }

    sbuf = bench_alloc_or_abort(&o, o.max_size, place);
    rbuf = bench_alloc_or_abort(&o, o.max_size, place);
    bench_touch(sbuf, o.max_size, 0, place);
    bench_touch(rbuf, o.max_size, 0, place);
    /* Host copy of the input, then of the root's result. */
    mirror = bench_alloc_or_abort(&o, o.max_size, BENCH_PLACE_HOST);

    bench_print_header(&o);

    size = o.min_size;
    do {
        const int iters = bench_iterations(&o, size);
        const int warmup = bench_warmup(&o, size);
        const size_t count = size / sizeof(float);
        double t_total = 0.0;
        double local_us, sum_us, min_us, max_us;
        int i, local_errors = 0, errors = 0;
        size_t first_bad = 0;

        for (k = 0; k < count; ++k)
            mirror[k] = pattern(o.rank, k);
        bench_copy_in(sbuf, mirror, count * sizeof(float), place);
        bench_touch(rbuf, size, 0, place);
        MPI_Barrier(MPI_COMM_WORLD);

        for (i = 0; i < warmup + iters; ++i) {
            const double t0 = bench_now();
            MPI_Reduce(sbuf, rbuf, (int)count, MPI_FLOAT, MPI_SUM, ROOT, MPI_COMM_WORLD);
            if (i >= warmup)
                t_total += bench_now() - t0;
            if (i == 0 && o.rank == ROOT) {
                bench_copy_out(mirror, rbuf, count * sizeof(float), place);
                for (k = 0; k < count; ++k) {
                    if (mirror[k] != expected[k % PATTERN_PERIOD]) {
                        if (local_errors == 0)
                            first_bad = k;
                        ++local_errors;
                    }
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }

        if (local_errors > 0)
            fprintf(stderr,
                    "osu_reduce: rank %d: size %zu: %d of %zu elements wrong, "
                    "first at index %zu: got %g, expected %g\n",
                    o.rank, size, local_errors, count, first_bad,
                    (double)mirror[first_bad], (double)expected[first_bad % PATTERN_PERIOD]);
        MPI_Allreduce(&local_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (errors > 0) {
            if (o.rank == 0) {
                fflush(stdout);
                fprintf(stderr,
                        "osu_reduce: validation FAILED at size %zu (%d wrong elements "
                        "at the root)\n", size, errors);
            }
            status = 1;
            break;
        }

        local_us = t_total * 1e6 / iters;
        MPI_Allreduce(&local_us, &sum_us, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&local_us, &min_us, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&local_us, &max_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

        bench_print_coll_row(&o, size, sum_us / o.nranks, min_us, max_us, iters);
    } while (bench_advance(&o, &size));

    bench_free(sbuf, place);
    bench_free(rbuf, place);
    bench_free(mirror, BENCH_PLACE_HOST);
    return bench_finalize(&o, status);
}
