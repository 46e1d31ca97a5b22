/*
 * osu_iallreduce.c - OSU-style MPI_Iallreduce overlap test (weft).
 *
 * MPI_Iallreduce of MPI_FLOAT with MPI_SUM over all ranks of MPI_COMM_WORLD,
 * measured in two passes per size, as OSU's non-blocking collective tests
 * do.  Every iteration is timed on its own and followed by an MPI_Barrier
 * (not timed).
 *
 *   1. Pure communication: MPI_Iallreduce immediately followed by MPI_Wait.
 *   2. Overlap: MPI_Iallreduce, then a compute loop that runs for this rank's
 *      average pure communication time of pass 1 without calling MPI (except
 *      MPI_Wtime), then MPI_Wait.  The overall time (post to completion) and
 *      the compute time are recorded.
 *
 * The overall, compute and pure times are averaged over the ranks (the pure
 * time also minimised and maximised), and the overlap is
 *     max(0, 100 * (1 - (overall - compute) / pure)):
 * 100% when the collective completes entirely behind the computation, 0%
 * when it only makes progress inside MPI_Wait.
 *
 * The result of the first iteration of each pass at every size is checked
 * against the sum computed locally from the rank-dependent input pattern;
 * any mismatch is reported and the program exits with status 1.
 */
#include "bench_common.h"

#include <stdio.h>

#define PATTERN_PERIOD 16
#define COMPUTE_WIDTH 16
#define COMPUTE_REPS 8

/*
 * Input element i of rank r: small integers, so that the float sum is exact
 * whatever order the library adds the contributions in.
 */
static float pattern(int rank, size_t i)
{
    return (float)((((size_t)rank * 3u + i) % PATTERN_PERIOD) + 1u);
}

/* Keeps the compute loop from being optimised away. */
static volatile float compute_sink;

/* Floating-point work for about `seconds`; the only MPI call is MPI_Wtime. */
static void dummy_compute(double seconds)
{
    float a[COMPUTE_WIDTH];
    const double t0 = bench_now();
    int j, r;

    for (j = 0; j < COMPUTE_WIDTH; ++j)
        a[j] = (float)j;
    do {
        for (r = 0; r < COMPUTE_REPS; ++r)
            for (j = 0; j < COMPUTE_WIDTH; ++j)
                a[j] = a[j] * 0.999f + 0.5f;
    } while (bench_now() - t0 < seconds);
    compute_sink = a[0] + a[COMPUTE_WIDTH - 1];
}

/* Count the wrong elements of rbuf; the first one goes to *first_bad. */
static int check_result(const float *rbuf, size_t count, const float *expected,
                        size_t *first_bad)
{
    int errors = 0;
    size_t k;
    for (k = 0; k < count; ++k) {
        if (rbuf[k] != expected[k % PATTERN_PERIOD]) {
            if (errors == 0)
                *first_bad = k;
            ++errors;
        }
    }
    return errors;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_placement place;
    float *sbuf, *rbuf;
    float expected[PATTERN_PERIOD];
    size_t size;
    int r, status = 0;
    size_t k;

    bench_init(&argc, &argv, BENCH_IALLREDUCE, &o);
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

    bench_print_header(&o);

    size = o.min_size;
    do {
        const int iters = bench_iterations(&o, size);
        const int warmup = bench_warmup(&o, size);
        const size_t count = size / sizeof(float);
        double t_pure = 0.0, t_overall = 0.0, t_compute = 0.0;
        double local[3], sum[3], min_comm_us, max_comm_us;
        int i, pass, local_errors = 0, errors = 0, bad_pass = 0;
        size_t first_bad = 0;
        MPI_Request req;

        for (k = 0; k < count; ++k)
            sbuf[k] = pattern(o.rank, k);

        /* Pass 1: pure communication.  Pass 2: with overlapping compute. */
        for (pass = 1; pass <= 2; ++pass) {
            /* Pass 2 computes for this rank's average pure time of pass 1. */
            const double compute_s = t_pure / iters;
            bench_touch(rbuf, size, 0, place);
            MPI_Barrier(MPI_COMM_WORLD);

            for (i = 0; i < warmup + iters; ++i) {
                const double t0 = bench_now();
                double t1 = t0, t2 = t0, t3;
                MPI_Iallreduce(sbuf, rbuf, (int)count, MPI_FLOAT, MPI_SUM,
                               MPI_COMM_WORLD, &req);
                if (pass == 2) {
                    t1 = bench_now();
                    dummy_compute(compute_s);
                    t2 = bench_now();
                }
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                t3 = bench_now();
                if (i >= warmup) {
                    if (pass == 1) {
                        t_pure += t3 - t0;
                    } else {
                        t_overall += t3 - t0;
                        t_compute += t2 - t1;
                    }
                }
                if (i == 0 && local_errors == 0) {
                    local_errors = check_result(rbuf, count, expected, &first_bad);
                    if (local_errors > 0)
                        bad_pass = pass;
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }

        if (local_errors > 0)
            fprintf(stderr,
                    "osu_iallreduce: rank %d: size %zu: %s: %d of %zu elements wrong, "
                    "first at index %zu: got %g, expected %g\n",
                    o.rank, size, bad_pass == 1 ? "pure pass" : "overlap pass",
                    local_errors, count, first_bad, (double)rbuf[first_bad],
                    (double)expected[first_bad % PATTERN_PERIOD]);
        MPI_Allreduce(&local_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (errors > 0) {
            if (o.rank == 0) {
                fflush(stdout);
                fprintf(stderr,
                        "osu_iallreduce: validation FAILED at size %zu (%d wrong elements "
                        "over all ranks)\n", size, errors);
            }
            status = 1;
            break;
        }

        local[0] = t_overall * 1e6 / iters;
        local[1] = t_compute * 1e6 / iters;
        local[2] = t_pure * 1e6 / iters;
        MPI_Allreduce(local, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&local[2], &min_comm_us, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&local[2], &max_comm_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

        bench_print_nbc_row(&o, size, sum[0] / o.nranks, sum[1] / o.nranks,
                            sum[2] / o.nranks, min_comm_us, max_comm_us, iters);
    } while (bench_advance(&o, &size));

    bench_free(sbuf, place);
    bench_free(rbuf, place);
    return bench_finalize(&o, status);
}
