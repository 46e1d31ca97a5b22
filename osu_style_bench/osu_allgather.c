/*
 * osu_allgather.c - OSU-style MPI_Allgather latency test (weft).
 *
 * MPI_Allgather over all ranks of MPI_COMM_WORLD; the size is the number of
 * bytes (MPI_CHAR) each rank contributes, so the receive buffer holds
 * nranks * size bytes.  Each rank times its own loop; the average, minimum
 * and maximum of the per-rank averages are combined with MPI_Allreduce
 * (SUM / MIN / MAX on a double).  After the first iteration of every size
 * each rank checks every block of its receive buffer against the
 * contributing rank's pattern; any mismatch is reported and the program
 * exits with status 1.  The input is written and the result checked in a
 * host mirror, copied in before the loop and out after the first iteration
 * (outside the timing), so the buffers themselves may be device or managed
 * memory (-d).
 */
#include "bench_common.h"

#include <stdio.h>

#define PATTERN_PERIOD 97

/* Byte i of rank r's block: 1..PATTERN_PERIOD, different from rank to rank. */
static char pattern(int rank, size_t i)
{
    return (char)((((size_t)rank * 31u + i) % PATTERN_PERIOD) + 1u);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_placement place;
    char *sbuf, *rbuf, *mirror;
    size_t size, total;
    int status = 0;
    size_t k;

    bench_init(&argc, &argv, BENCH_ALLGATHER, &o);
    place = bench_my_placement(&o);

    /* bench_init guarantees that nranks * max_size fits in an int. */
    total = o.max_size * (size_t)o.nranks;
    sbuf = bench_alloc_or_abort(&o, o.max_size, place);
    rbuf = bench_alloc_or_abort(&o, total, place);
    bench_touch(sbuf, o.max_size, 0, place);
    bench_touch(rbuf, total, 0, place);
    /* Host copy of the input, then of the whole receive buffer. */
    mirror = bench_alloc_or_abort(&o, total, BENCH_PLACE_HOST);

    bench_print_header(&o);

    size = o.min_size;
    do {
        const int iters = bench_iterations(&o, size);
        const int warmup = bench_warmup(&o, size);
        const size_t bytes = size * (size_t)o.nranks;
        double t_start = 0.0, t_end, t_check = 0.0;
        double local_us, sum_us, min_us, max_us;
        int i, local_errors = 0, errors = 0;
        size_t first_bad = 0;

        for (k = 0; k < size; ++k)
            mirror[k] = pattern(o.rank, k);
        bench_copy_in(sbuf, mirror, size, place);
        bench_touch(rbuf, bytes, 0, place);
        MPI_Barrier(MPI_COMM_WORLD);

        for (i = 0; i < warmup + iters; ++i) {
            if (i == warmup)
                t_start = bench_now();
            MPI_Allgather(sbuf, (int)size, MPI_CHAR, rbuf, (int)size, MPI_CHAR,
                          MPI_COMM_WORLD);
            if (i == 0) {
                const double t0 = bench_now();
                bench_copy_out(mirror, rbuf, bytes, place);
                for (k = 0; k < bytes; ++k) {
                    if (mirror[k] != pattern((int)(k / size), k % size)) {
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
                    "osu_allgather: rank %d: size %zu: %d of %zu bytes wrong, "
                    "first in the block of rank %zu at offset %zu: got %d, expected %d\n",
                    o.rank, size, local_errors, bytes, first_bad / size, first_bad % size,
                    (int)mirror[first_bad],
                    (int)pattern((int)(first_bad / size), first_bad % size));
        MPI_Allreduce(&local_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (errors > 0) {
            if (o.rank == 0) {
                fflush(stdout);
                fprintf(stderr,
                        "osu_allgather: validation FAILED at size %zu (%d wrong bytes "
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
