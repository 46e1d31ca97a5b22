/*
 * init_time - how long MPI_Init and MPI_Finalize take: the time inside each call on every
 * rank (CLOCK_MONOTONIC, so it needs no MPI), and the slowest and fastest rank.
 *
 *   mpirun -np N init_time [--csv]
 *
 * Prints "MPI_Init ms: slowest S fastest F" (or "init_ms,S,F" with --csv), then rank 0's own
 * MPI_Finalize time (no rank can gather after finalize).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    int csv = argc > 1 && strcmp(argv[1], "--csv") == 0;
    double t0 = now_ms();
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    double init_ms = now_ms() - t0;
    int rank = 0;
    double slowest = 0, fastest = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&init_ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&init_ms, &fastest, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (csv)
            printf("init_ms,%.2f,%.2f\n", slowest, fastest);
        else
            printf("MPI_Init ms: slowest %.2f fastest %.2f\n", slowest, fastest);
        fflush(stdout);
    }
    t0 = now_ms();
    MPI_Finalize();
    if (rank == 0) {
        if (csv)
            printf("finalize_ms,%.2f\n", now_ms() - t0);
        else
            printf("MPI_Finalize ms (rank 0): %.2f\n", now_ms() - t0);
    }
    return 0;
}
