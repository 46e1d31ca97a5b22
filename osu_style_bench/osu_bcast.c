/*
 * osu_bcast.c - OSU-style MPI_Bcast latency test (weft).
 *
 * MPI_Bcast of `size` bytes of MPI_CHAR from rank 0 to all ranks of
 * MPI_COMM_WORLD.  As in OSU, every broadcast is timed on its own and the
 * ranks meet in an MPI_Barrier (not timed) before the next one, so that the
 * root cannot run ahead of the other ranks.  The average, minimum and maximum
 * of the per-rank averages are combined with MPI_Allreduce (SUM / MIN / MAX
 * on a double).  After the first broadcast of every size each rank checks its
 * buffer against the root's pattern; any mismatch is reported and the
 * program exits with status 1.  The pattern is written and checked in a host
 * mirror of the buffer, copied in before the broadcasts and out after the
 * first one, so the buffer itself may be device or managed memory (-d).
 */
#include "bench_common.h"

#include <stdio.h>

#define ROOT 0

/* Byte i of the root's buffer for a message of `size` bytes (never 0). */
static char pattern(size_t size, size_t i)
{
    return (char)('a' + (size + i) % 26u);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_placement place;
    char *buf, *mirror;
    size_t size;
    int status = 0;
    size_t k;

    bench_init(&argc, &argv, BENCH_BCAST, &o);
    place = bench_my_placement(&o);

    buf = bench_alloc_or_abort(&o, o.max_size, place);
    bench_touch(buf, o.max_size, 0, place);
    mirror = bench_alloc_or_abort(&o, o.max_size, BENCH_PLACE_HOST);

    bench_print_header(&o);

    size = o.min_size;
    do {
        const int iters = bench_iterations(&o, size);
        const int warmup = bench_warmup(&o, size);
        double t_total = 0.0;
        double local_us, sum_us, min_us, max_us;
        int i, local_errors = 0, errors = 0;
        size_t first_bad = 0;

        if (o.rank == ROOT) {
            for (k = 0; k < size; ++k)
                mirror[k] = pattern(size, k);
            bench_copy_in(buf, mirror, size, place);
        } else {
            bench_touch(buf, size, 0, place);
        }
        MPI_Barrier(MPI_COMM_WORLD);

        for (i = 0; i < warmup + iters; ++i) {
            const double t0 = bench_now();
            MPI_Bcast(buf, (int)size, MPI_CHAR, ROOT, MPI_COMM_WORLD);
            if (i >= warmup)
                t_total += bench_now() - t0;
            if (i == 0) {
                bench_copy_out(mirror, buf, size, place);
                for (k = 0; k < size; ++k) {
                    if (mirror[k] != pattern(size, k)) {
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
                    "osu_bcast: rank %d: size %zu: %d of %zu bytes wrong, "
                    "first at offset %zu: got %d, expected %d\n",
                    o.rank, size, local_errors, size, first_bad,
                    (int)mirror[first_bad], (int)pattern(size, first_bad));
        MPI_Allreduce(&local_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (errors > 0) {
            if (o.rank == 0) {
                fflush(stdout);
                fprintf(stderr,
                        "osu_bcast: validation FAILED at size %zu (%d wrong bytes "
                        "over all ranks)\n", size, errors);
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

    bench_free(buf, place);
    bench_free(mirror, BENCH_PLACE_HOST);
    return bench_finalize(&o, status);
}
