/* ABI smoke test: built with Debian MPICH's mpicc (mpicc.mpich) against
 * MPICH's mpi.h, run against weft's libmpich.so.12 / libmpi.so.12.
 * Ring (blocking and non-blocking), Sendrecv, Probe + Get_count, Barrier,
 * and MPI_ERRORS_RETURN with an invalid rank. Exit 0 on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1, size = 0;

#define FAIL(...)                                                            \
    do {                                                                     \
        fprintf(stderr, "[abi_hello rank %d] FAIL line %d: ", rank, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                        \
        fputc('\n', stderr);                                                 \
        MPI_Abort(MPI_COMM_WORLD, 1);                                        \
        return 1;                                                            \
    } while (0)

#define N 5000

int main(int argc, char **argv)
{
    int *sb, *rb, cnt = -1;
    MPI_Status st;
    MPI_Request rq[2];
    MPI_Status sts[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    sb = malloc(sizeof(int) * N);
    rb = malloc(sizeof(int) * N);
    if (!sb || !rb)
        FAIL("out of memory");

    /* blocking token ring */
    for (int lap = 0; lap < 3; lap++) {
        int token = -1;
        if (rank == 0) {
            token = 1000 * lap;
            MPI_Isend(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[0]);
            MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
            MPI_Waitall(1, rq, &st);
            if (token != 1000 * lap + size - 1)
                FAIL("ring lap %d: token %d, expected %d", lap, token, 1000 * lap + size - 1);
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
            if (token != 1000 * lap + rank - 1)
                FAIL("ring lap %d: token %d, expected %d", lap, token, 1000 * lap + rank - 1);
            token++;
            MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
        }
    }

    /* non-blocking shift with data check */
    for (int i = 0; i < N; i++) {
        sb[i] = rank * 100000 + i;
        rb[i] = -1;
    }
    MPI_Irecv(rb, N, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(sb, N, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, sts);
    for (int i = 0; i < N; i++)
        if (rb[i] != left * 100000 + i)
            FAIL("shift index %d: expected %d, got %d", i, left * 100000 + i, rb[i]);

    /* Sendrecv the other way */
    MPI_Sendrecv(sb, N / 2, MPI_INT, left, 3, rb, N, MPI_INT, right, 3, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    if (cnt != N / 2 || st.MPI_SOURCE != right || st.MPI_TAG != 3)
        FAIL("Sendrecv status: count %d source %d tag %d", cnt, st.MPI_SOURCE, st.MPI_TAG);
    for (int i = 0; i < N / 2; i++)
        if (rb[i] != right * 100000 + i)
            FAIL("Sendrecv index %d: expected %d, got %d", i, right * 100000 + i, rb[i]);

    /* Probe + Get_count, then receive exactly that */
    MPI_Isend(sb, 123 + rank, MPI_INT, right, 4, MPI_COMM_WORLD, &rq[0]);
    MPI_Probe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    if (st.MPI_SOURCE != left || cnt != 123 + left)
        FAIL("Probe: source %d count %d, expected %d %d", st.MPI_SOURCE, cnt, left, 123 + left);
    MPI_Recv(rb, cnt, MPI_INT, st.MPI_SOURCE, 4, MPI_COMM_WORLD, &st);
    MPI_Waitall(1, rq, &st);
    for (int i = 0; i < cnt; i++)
        if (rb[i] != left * 100000 + i)
            FAIL("Probe+Recv index %d", i);

    /* error handling through the ABI */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int rc = MPI_Send(sb, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD), cls = -1;
        if (rc == MPI_SUCCESS)
            FAIL("Send to rank %d returned MPI_SUCCESS", size + 1);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_RANK)
            FAIL("Send to an invalid rank: class %d, expected MPI_ERR_RANK (%d)", cls, MPI_ERR_RANK);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        printf("abi_hello: OK (np %d) on: %.80s\n", size, lib);
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
