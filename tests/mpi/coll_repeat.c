/* Repeated blocking and non-blocking collectives with the same arguments reuse their schedule:
 * results must follow the buffers' current contents, identical non-blocking calls in flight at
 * once must each get a schedule (and scratch memory) of their own, and a datatype freed and
 * recreated (often under the same handle) with another layout must not reuse the old schedule. */
#include "common.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_repeat");
    enum { N = 20000 };
    int *in = malloc(sizeof(int) * 2 * N), *out = malloc(sizeof(int) * 2 * N);
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < N; i++) in[i] = round * 7 + t_rank + i;
        MPI_OK(MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            int want = t_size * (round * 7 + i) + t_size * (t_size - 1) / 2;
            if (out[i] != want) FAIL("round %d: allreduce element %d: got %d, expected %d", round, i, out[i], want);
        }
        for (int i = 0; i < N; i++) out[i] = t_rank == round % t_size ? round + i : -1;
        MPI_OK(MPI_Bcast(out, N, MPI_INT, round % t_size, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            if (out[i] != round + i) FAIL("round %d: bcast element %d: got %d", round, i, out[i]);
    }
    /* Non-blocking: the same call again and again, then identical calls in flight together. */
    int *recv2 = malloc(sizeof(int) * N);
    for (int round = 0; round < 30; round++) {
        MPI_Request r[4];
        for (int i = 0; i < N; i++) in[i] = round * 3 + t_rank - i;
        MPI_OK(MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) {
            int want = t_size * (round * 3 - i) + t_size * (t_size - 1) / 2;
            if (out[i] != want) FAIL("round %d: iallreduce element %d: got %d, expected %d", round, i, out[i], want);
        }
        /* Two reductions of one send buffer to root 0 at once: the other ranks' calls are
         * identical (their receive buffer is not used), the root's differ. Two barriers too. */
        for (int i = 0; i < N; i++) {
            out[i] = -1;
            recv2[i] = -1;
        }
        MPI_OK(MPI_Ireduce(in, t_rank == 0 ? out : NULL, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[1]));
        MPI_OK(MPI_Ireduce(in, t_rank == 0 ? recv2 : NULL, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, &r[2]));
        MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[3]));
        MPI_OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
        if (t_rank == 0)
            for (int i = 0; i < N; i++) {
                int sum = t_size * (round * 3 - i) + t_size * (t_size - 1) / 2;
                int max = round * 3 + t_size - 1 - i;
                if (out[i] != sum) FAIL("round %d: ireduce sum element %d: got %d, expected %d", round, i, out[i], sum);
                if (recv2[i] != max) FAIL("round %d: ireduce max element %d: got %d, expected %d", round, i, recv2[i], max);
            }
        /* The same reduction twice in flight on the ranks other than the root. */
        MPI_OK(MPI_Ireduce(in, t_rank == 0 ? out : NULL, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Ireduce(in, t_rank == 0 ? recv2 : NULL, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r[1]));
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        if (t_rank == 0)
            for (int i = 0; i < N; i++) {
                int sum = t_size * (round * 3 - i) + t_size * (t_size - 1) / 2;
                if (out[i] != sum || recv2[i] != sum)
                    FAIL("round %d: twin ireduce element %d: got %d and %d, expected %d", round, i, out[i], recv2[i], sum);
            }
    }
    free(recv2);
    /* Same handle slot, different layouts: contiguous pairs, then every other int. */
    for (int layout = 0; layout < 4; layout++) {
        MPI_Datatype t;
        if (layout % 2 == 0) MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
        else MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &t));
        MPI_OK(MPI_Type_commit(&t));
        for (int i = 0; i < 2 * N; i++) {
            in[i] = t_rank + i;
            out[i] = -5;
        }
        MPI_OK(MPI_Allreduce(in, out, N / 4, t, MPI_SUM, MPI_COMM_WORLD));
        for (int e = 0; e < N / 4; e++) {
            const int base = layout % 2 == 0 ? 2 * e : 3 * e; /* a vector(2,1,2) spans 3 ints */
            const int second = layout % 2 == 0 ? base + 1 : base + 2;
            for (int k = 0; k < 2; k++) {
                int at = k ? second : base;
                int want = t_size * at + t_size * (t_size - 1) / 2;
                if (out[at] != want) FAIL("layout %d element %d: got %d, expected %d", layout, e, out[at], want);
            }
            if (layout % 2 == 1 && out[base + 1] != -5) FAIL("layout %d: gap of element %d written", layout, e);
        }
        MPI_OK(MPI_Type_free(&t));
    }
    free(in);
    free(out);
    t_done();
    return 0;
}
