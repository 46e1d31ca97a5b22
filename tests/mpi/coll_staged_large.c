/* Large allreduces (MPI_FLOAT, MPI_SUM; 256 KiB, 2 MiB and 16 MiB of data) whose buffers the
 * runtime stages through host scratch (packed before the schedule, unpacked after it): a
 * non-contiguous datatype, the same path device buffers take. Out of place and in place,
 * repeated (the plan is reused) and non-blocking. Every element is checked, and the gaps
 * between elements must stay untouched. Registered on virtual nodes with each hierarchical
 * algorithm forced, where hier_pipelined runs its fragments as lanes of the schedule. */
#include "common.h"

#define GAP -3.25f

static float value(int rank, int round, long i) { return (float)(round * 13 + rank * 3 + (int)(i % 1021)); }

static float sum(int round, long i)
{
    return (float)(t_size * (round * 13 + (int)(i % 1021)) + 3 * t_size * (t_size - 1) / 2);
}

/* n elements at stride 2 floats; the odd slots are gaps. */
static void fill(float *b, long n, int round)
{
    for (long i = 0; i < n; i++) {
        b[2 * i] = value(t_rank, round, i);
        b[2 * i + 1] = GAP;
    }
}

static void check(const float *b, long n, int round, const char *type, const char *what)
{
    for (long i = 0; i < n; i++) {
        if (b[2 * i] != sum(round, i))
            FAIL("%s on %s, %ld floats, round %d: element %ld is %g, expected %g", what, type, n, round, i,
                 (double)b[2 * i], (double)sum(round, i));
        if (b[2 * i + 1] != GAP)
            FAIL("%s on %s, %ld floats, round %d: gap after element %ld overwritten (%g)", what, type, n, round,
                 i, (double)b[2 * i + 1]);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_staged_large");
    enum { MAX = 4 << 20 };  /* floats: 16 MiB of data */
    float *in = malloc(sizeof(float) * 2 * MAX), *out = malloc(sizeof(float) * 2 * MAX);
    if (!in || !out) FAIL("out of memory");
    MPI_Datatype strided; /* one float with an extent of two: count n covers n floats */
    MPI_OK(MPI_Type_create_resized(MPI_FLOAT, 0, 2 * (MPI_Aint)sizeof(float), &strided));
    MPI_OK(MPI_Type_commit(&strided));
    for (long n = 64 << 10; n <= MAX; n *= 8) {
        MPI_Datatype vec; /* n floats at stride 2, as one element */
        MPI_OK(MPI_Type_vector((int)n, 1, 2, MPI_FLOAT, &vec));
        MPI_OK(MPI_Type_commit(&vec));
        for (int t = 0; t < 2; t++) {
            MPI_Datatype type = t ? vec : strided;
            const int count = t ? 1 : (int)n;
            const char *name = t ? "vector" : "resized";
            for (int round = 0; round < 2; round++) {
                fill(in, n, round);
                fill(out, n, 99);
                MPI_OK(MPI_Allreduce(in, out, count, type, MPI_SUM, MPI_COMM_WORLD));
                check(out, n, round, name, "Allreduce");
            }
            for (int round = 2; round < 4; round++) {
                fill(out, n, round);
                MPI_OK(MPI_Allreduce(MPI_IN_PLACE, out, count, type, MPI_SUM, MPI_COMM_WORLD));
                check(out, n, round, name, "Allreduce in place");
            }
            MPI_Request r;
            fill(in, n, 4);
            fill(out, n, 99);
            MPI_OK(MPI_Iallreduce(in, out, count, type, MPI_SUM, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            check(out, n, 4, name, "Iallreduce");
        }
        MPI_OK(MPI_Type_free(&vec));
    }
    MPI_OK(MPI_Type_free(&strided));
    free(in);
    free(out);
    t_done();
    return 0;
}
