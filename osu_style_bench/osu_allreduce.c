/*
 * osu_allreduce.c - OSU-style MPI_Allreduce latency test (weft).
 *
 * MPI_Allreduce of MPI_FLOAT with MPI_SUM over all ranks of MPI_COMM_WORLD.
 * Each rank times its own loop; the average, minimum and maximum of the
 * per-rank averages are combined with MPI_Allreduce (SUM / MIN / MAX on a
 * double).  The result of the first iteration of every size is checked
 * against the sum computed locally from the rank-dependent input pattern;
 * any mismatch is reported and the program exits with status 1.  The input
 * is written and the result checked in a host mirror, copied in before the
 * loop and out after the first iteration (outside the timing), so the
 * buffers themselves may be device or managed memory (-d).
 */
#include "bench_common.h"

#include <stdio.h>

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

    bench_init(&argc, &argv, BENCH_ALLREDUCE, &o);
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
    /* Host copy of the input, then of the result. */
    mirror = bench_alloc_or_abort(&o, o.max_size, BENCH_PLACE_HOST);

    bench_print_header(&o);

    size = o.min_size;
    do {
        const int iters = bench_iterations(&o, size);
        const int warmup = bench_warmup(&o, size);
        const size_t count = size / sizeof(float);
        double t_start = 0.0, t_end, t_check = 0.0;
        double local_us, sum_us, min_us, max_us;
        int i, local_errors = 0, errors = 0;
        size_t first_bad = 0;

        for (k = 0; k < count; ++k)
            mirror[k] = pattern(o.rank, k);
        bench_copy_in(sbuf, mirror, count * sizeof(float), place);
        bench_touch(rbuf, size, 0, place);
        MPI_Barrier(MPI_COMM_WORLD);

        for (i = 0; i < warmup + iters; ++i) {
            if (i == warmup)
                t_start = bench_now();
            MPI_Allreduce(sbuf, rbuf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            if (i == 0) {
                const double t0 = bench_now();
                bench_copy_out(mirror, rbuf, count * sizeof(float), place);
                for (k = 0; k < count; ++k) {
                    if (mirror[k] != expected[k % PATTERN_PERIOD]) {
                        if (local_errors == 0)
                            first_bad = k;
                        ++local_errors;
                    }
                }
                /* Keep validation out of the timing when it falls inside it. */
                if (warmup == 0)
                    t_check = bench_now() - t0;
            }
        }
        t_end = bench_now();

        if (local_errors > 0)
            fprintf(stderr,
                    "osu_allreduce: rank %d: size %zu: %d of %zu elements wrong, "
                    "first at index %zu: got %g, expected %g\n",
                    o.rank, size, local_errors, count, first_bad,
                    (double)mirror[first_bad], (double)expected[first_bad % PATTERN_PERIOD]);
        MPI_Allreduce(&local_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (errors > 0) {
            if (o.rank == 0) {
                fflush(stdout);
                fprintf(stderr,
                        "osu_allreduce: validation FAILED at size %zu (%d wrong elements "
                        "over all ranks)\n", size, errors);
            }
            status = 1;
            break;
        }

        local_us = (t_end - t_start - t_check) * 1e6 / iters;
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
