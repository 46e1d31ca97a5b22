/* Large allreduces (256 KiB to 4 MiB of ints), the sizes where the hierarchical algorithms
 * cut the vector into parts or fragments: blocking and repeated (the schedule is reused), in
 * place, non-blocking, and persistent (started several times). Every element is checked. */
#include "common.h"

static void fill(int *buf, int n, int round)
{
    for (int i = 0; i < n; i++) buf[i] = round * 13 + t_rank * 3 + (i % 1021);
}

static void check(const int *buf, int n, int round, const char *what)
{
    for (int i = 0; i < n; i++) {
        int want = t_size * (round * 13 + (i % 1021)) + 3 * t_size * (t_size - 1) / 2;
        if (buf[i] != want) FAIL("%s, %d ints, round %d: element %d is %d, expected %d", what, n, round, i, buf[i], want);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_large");
    enum { MAX = 1 << 20 };
    int *in = malloc(sizeof(int) * MAX), *out = malloc(sizeof(int) * MAX);
    if (!in || !out) FAIL("out of memory");
    for (int n = 1 << 16; n <= MAX; n *= 4) {
        for (int round = 0; round < 3; round++) {
            fill(in, n, round);
            MPI_OK(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            check(out, n, round, "Allreduce");
        }
        fill(out, n, 5);
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        check(out, n, 5, "Allreduce in place");
        MPI_Request r;
        fill(in, n, 6);
        MPI_OK(MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check(out, n, 6, "Iallreduce");
        MPI_OK(MPI_Allreduce_init(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        for (int round = 7; round < 10; round++) {
            fill(in, n, round);
            MPI_OK(MPI_Start(&r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            check(out, n, round, "Allreduce_init");
        }
        MPI_OK(MPI_Request_free(&r));
    }
    free(in);
    free(out);
    t_done();
    return 0;
}
