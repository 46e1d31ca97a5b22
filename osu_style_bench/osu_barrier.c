/*
 * osu_barrier.c - OSU-style MPI_Barrier latency test (weft).
 *
 * MPI_Barrier over all ranks of MPI_COMM_WORLD.  Each rank times its own
 * loop; the average, minimum and maximum of the per-rank averages are
 * combined with MPI_Allreduce (SUM / MIN / MAX on a double).  The barrier
 * moves no data, so there is one row and no size; -m is accepted and
 * ignored, and --csv prints "0,avg".
 */
#include "bench_common.h"

int main(int argc, char **argv)
{
    bench_opts o;
    int iters, warmup, i;
    double t_start = 0.0, t_end;
    double local_us, sum_us, min_us, max_us;

    bench_init(&argc, &argv, BENCH_BARRIER, &o);

    bench_print_header(&o);

    iters = bench_iterations(&o, 0);
    warmup = bench_warmup(&o, 0);
    MPI_Barrier(MPI_COMM_WORLD);

    for (i = 0; i < warmup + iters; ++i) {
        if (i == warmup)
            t_start = bench_now();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    t_end = bench_now();

    local_us = (t_end - t_start) * 1e6 / iters;
    MPI_Allreduce(&local_us, &sum_us, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&local_us, &min_us, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&local_us, &max_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    bench_print_coll_row(&o, 0, sum_us / o.nranks, min_us, max_us, iters);

    return bench_finalize(&o, 0);
}
