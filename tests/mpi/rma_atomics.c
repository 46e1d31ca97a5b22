/* One-sided atomics under contention: every rank adds 1 to one counter at rank 0 with
 * 10,000 MPI_Fetch_and_op(MPI_SUM) under lock_all (each rank's fetched values strictly
 * increase, the final value is exact), on an MPI_Win_allocate window and, when the world is
 * one node, on a shared window; then every rank accumulates onto rank 0's 16-byte elements
 * (long double and double complex sums, which take the target's accumulate mutex) and the
 * totals are exact. */
#include <complex.h>

#include "common.h"

enum { COUNTS = 10000, ACCS = 300 };

static void counter(MPI_Win win, int64_t *base, MPI_Comm comm, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    base[0] = 0;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Win_lock_all(0, win));
    const int64_t one = 1;
    int64_t prev = -1;
    for (int k = 0; k < COUNTS; k++) {
        int64_t old = -1;
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, win));
        if (old <= prev) FAIL("%s: fetched %lld after %lld", what, (long long)old, (long long)prev);
        prev = old;
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Win_sync(win));
    if (rank == 0)
        CHECK(base[0] == (int64_t)COUNTS * size, "%s: counter %lld, expected %lld", what, (long long)base[0],
              (long long)COUNTS * size);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "rma_atomics");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int64_t *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    counter(win, base, MPI_COMM_WORLD, "allocate window");

    /* 16-byte elements: long double at byte 16, double complex at byte 32 of rank 0. */
    long double *ld = (long double *)((char *)base + 16);
    double _Complex *cz = (double _Complex *)((char *)base + 32);
    *ld = 0;
    *cz = 0;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock_all(0, win));
    const long double add = 1.0L + t_rank;
    const double _Complex zadd = 1.0 + 2.0 * I;
    for (int k = 0; k < ACCS; k++) {
        MPI_OK(MPI_Accumulate(&add, 1, MPI_LONG_DOUBLE, 0, 2, 1, MPI_LONG_DOUBLE, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(&zadd, 1, MPI_C_DOUBLE_COMPLEX, 0, 4, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(win));
    if (t_rank == 0) {
        const long double want = (long double)ACCS * t_size * (t_size + 1) / 2;
        CHECK(*ld == want, "long double sum %Lg, expected %Lg", *ld, want);
        CHECK(creal(*cz) == (double)ACCS * t_size && cimag(*cz) == 2.0 * ACCS * t_size,
              "double complex sum %g%+gi", creal(*cz), cimag(*cz));
    }
    MPI_OK(MPI_Win_free(&win));

    /* The same counter in a shared window (node-local world only). */
    MPI_Comm node;
    int node_size;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_size(node, &node_size));
    if (node_size == t_size) {
        MPI_OK(MPI_Win_allocate_shared(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        counter(win, base, MPI_COMM_WORLD, "shared window");
        MPI_OK(MPI_Win_free(&win));
    }
    MPI_OK(MPI_Comm_free(&node));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) printf("rma_atomics: every check passed at np %d\n", t_size);
    MPI_Finalize();
    return 0;
}
