/* Collectives on derived datatypes: a strided vector of doubles (non-contiguous) and a
 * contiguous type, with Bcast, Reduce, Allreduce, Reduce_local; gaps must stay untouched. */
#include "common.h"

#define N 257
#define GAP -7.5

static void fill(double *b, int rank, int salt)
{
    for (int i = 0; i < 2 * N; i++)
        b[i] = (i % 2) ? GAP : (double)(rank * 1000 + salt * 10 + i / 2);
}

static void check_gaps(const double *b, const char *what)
{
    for (int i = 1; i < 2 * N; i += 2)
        if (b[i] != GAP)
            FAIL("%s: gap %d overwritten (%g)", what, i, b[i]);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_dtype");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype vec, con;
    MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(3, MPI_INT, &con);
    MPI_Type_commit(&con);
    double a[2 * N], b[2 * N];
    for (int root = 0; root < t_size; root++) {
        /* Bcast */
        fill(a, t_rank == root ? root : 99, 1);
        CHECK(MPI_Bcast(a, 1, vec, root, MPI_COMM_WORLD) == MPI_SUCCESS, "Bcast failed");
        for (int i = 0; i < N; i++)
            if (a[2 * i] != root * 1000 + 10 + i) FAIL("Bcast root %d element %d: %g", root, i, a[2 * i]);
        check_gaps(a, "Bcast");
        /* Reduce (sum) */
        fill(a, t_rank, 2);
        for (int i = 0; i < 2 * N; i++) b[i] = GAP;
        CHECK(MPI_Reduce(a, b, 1, vec, MPI_SUM, root, MPI_COMM_WORLD) == MPI_SUCCESS, "Reduce failed");
        if (t_rank == root) {
            for (int i = 0; i < N; i++) {
                double e = 0;
                for (int r = 0; r < t_size; r++) e += r * 1000 + 20 + i;
                if (b[2 * i] != e) FAIL("Reduce root %d element %d: %g, expected %g", root, i, b[2 * i], e);
            }
            check_gaps(b, "Reduce");
        }
    }
    /* Allreduce (max), out of place and in place */
    fill(a, t_rank, 3);
    for (int i = 0; i < 2 * N; i++) b[i] = GAP;
    CHECK(MPI_Allreduce(a, b, 1, vec, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS, "Allreduce failed");
    for (int i = 0; i < N; i++)
        if (b[2 * i] != (t_size - 1) * 1000 + 30 + i) FAIL("Allreduce element %d: %g", i, b[2 * i]);
    check_gaps(b, "Allreduce");
    fill(a, t_rank, 4);
    CHECK(MPI_Allreduce(MPI_IN_PLACE, a, 1, vec, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS, "Allreduce in place failed");
    for (int i = 0; i < N; i++)
        if (a[2 * i] != 40 + i) FAIL("Allreduce in place element %d: %g", i, a[2 * i]);
    check_gaps(a, "Allreduce in place");
    /* Contiguous derived type */
    int x[6] = {t_rank, 1, 2, 3, 4, 5}, y[6];
    CHECK(MPI_Allreduce(x, y, 2, con, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "Allreduce contiguous failed");
    CHECK(y[0] == t_size * (t_size - 1) / 2 && y[5] == 5 * t_size, "Allreduce contiguous: %d %d", y[0], y[5]);
    /* Reduce_local on the vector */
    fill(a, 1, 5);
    fill(b, 2, 5);
    CHECK(MPI_Reduce_local(a, b, 1, vec, MPI_SUM) == MPI_SUCCESS, "Reduce_local failed");
    for (int i = 0; i < N; i++)
        if (b[2 * i] != 1000 + 50 + i + 2000 + 50 + i) FAIL("Reduce_local element %d: %g", i, b[2 * i]);
    check_gaps(b, "Reduce_local");
    MPI_Type_free(&vec);
    MPI_Type_free(&con);
    t_done();
    return 0;
}
