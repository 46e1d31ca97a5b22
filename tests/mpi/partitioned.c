/* Partitioned point-to-point (MPI-4.0): MPI_Psend_init / MPI_Precv_init with
 * MPI_Start, MPI_Pready, MPI_Pready_range, MPI_Pready_list, MPI_Parrived,
 * MPI_Wait and MPI_Test. Each rank sends to its right neighbour (itself at
 * np 1) and checks every element received:
 *   - equal partition counts, partitions marked in reverse order, restarted
 *     with new data each iteration, MPI_Parrived polled until arrival;
 *   - sender and receiver splitting the buffer differently (8 against 2),
 *     marked through ranges and lists, completed with MPI_Test;
 *   - a derived (strided) datatype, each partition read once MPI_Parrived reports it (before
 *     the wait), and 2 MiB in 64 partitions;
 *   - matching in the order of the init calls, whatever the start order,
 *     and the receive status (source, user tag, count);
 *   - a pending MPI_ANY_TAG receive never takes partitioned data;
 *   - MPI_PROC_NULL, an unstarted request freed, and the errors of MPI_Pready
 *     (partition out of range, marked twice). */
#include "common.h"

#define ITERS 5

static void exchange(double *sbuf, double *rbuf, int sparts, int rparts, int n, int it, int right, int left,
                     int how)
{
    MPI_Request rr, sr;
    MPI_OK(MPI_Precv_init(rbuf, rparts, n / rparts, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rr));
    MPI_OK(MPI_Psend_init(sbuf, sparts, n / sparts, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &sr));
    for (int k = 0; k < it; k++) {
        for (int i = 0; i < n; i++) {
            sbuf[i] = t_rank * 1e6 + k * 1e4 + i;
            rbuf[i] = -1;
        }
        MPI_OK(MPI_Start(&rr));
        MPI_OK(MPI_Start(&sr));
        if (how == 0) {
            for (int p = sparts - 1; p >= 0; p--) MPI_OK(MPI_Pready(p, sr));
        } else {
            MPI_OK(MPI_Pready_range(0, sparts / 2 - 1, sr));
            int list[64], m = 0;
            for (int p = sparts - 1; p >= sparts / 2; p--) list[m++] = p;
            MPI_OK(MPI_Pready_list(m, list, sr));
        }
        if (how == 0) {
            /* every partition arrives; MPI_Parrived keeps saying so */
            for (int p = 0; p < rparts; p++) {
                int flag = 0;
                while (!flag) MPI_OK(MPI_Parrived(rr, p, &flag));
            }
            MPI_Status st;
            MPI_OK(MPI_Wait(&rr, &st));
            CHECK_EQ_INT(st.MPI_SOURCE, left, "status source");
            CHECK_EQ_INT(st.MPI_TAG, 7, "status tag");
            int cnt = -1;
            MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
            CHECK_EQ_INT(cnt, n, "status count");
            MPI_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        } else {
            int fr = 0, fs = 0;
            while (!fr || !fs) {
                if (!fr) MPI_OK(MPI_Test(&rr, &fr, MPI_STATUS_IGNORE));
                if (!fs) MPI_OK(MPI_Test(&sr, &fs, MPI_STATUS_IGNORE));
            }
        }
        for (int i = 0; i < n; i++)
            if (rbuf[i] != left * 1e6 + k * 1e4 + i)
                FAIL("parts %d/%d iteration %d: element %d is %g, expected %g", sparts, rparts, k, i, rbuf[i],
                     left * 1e6 + k * 1e4 + i);
        int flag = 0;
        MPI_OK(MPI_Parrived(rr, 0, &flag));  /* inactive: its partitions have arrived */
        CHECK(flag, "MPI_Parrived on an inactive request says not arrived");
    }
    MPI_OK(MPI_Request_free(&rr));
    MPI_OK(MPI_Request_free(&sr));
}

static void strided(int right, int left)
{
    enum { PARTS = 4, BLOCKS = 3, N = PARTS * BLOCKS };
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));  /* elements 0 and 3 of each 4 */
    MPI_OK(MPI_Type_create_resized(vec, 0, 4 * sizeof(int), &vec));
    MPI_OK(MPI_Type_commit(&vec));
    int s[N * 4], r[N * 4];
    for (int i = 0; i < N * 4; i++) {
        s[i] = t_rank * 1000 + i;
        r[i] = -1;
    }
    MPI_Request rr, sr;
    MPI_OK(MPI_Precv_init(r, PARTS, BLOCKS, vec, left, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &rr));
    MPI_OK(MPI_Psend_init(s, PARTS, BLOCKS, vec, right, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &sr));
    MPI_Request both[2] = {rr, sr};
    MPI_OK(MPI_Startall(2, both));
    MPI_OK(MPI_Pready_range(0, PARTS - 1, sr));
    /* What MPI_Parrived reports may be read before the wait (the strided type is unpacked then). */
    for (int p = 0; p < PARTS; p++) {
        int flag = 0;
        while (!flag) MPI_OK(MPI_Parrived(rr, p, &flag));
        for (int i = p * BLOCKS * 4; i < (p + 1) * BLOCKS * 4; i++) {
            int expect = (i % 4 == 0 || i % 4 == 3) ? left * 1000 + i : -1;
            CHECK_EQ_INT(r[i], expect, "strided partition read after MPI_Parrived, before the wait");
        }
    }
    MPI_Status done[2];
    MPI_OK(MPI_Waitall(2, both, done));
    for (int i = 0; i < N * 4; i++) {
        int expect = (i % 4 == 0 || i % 4 == 3) ? left * 1000 + i : -1;
        CHECK_EQ_INT(r[i], expect, "strided partitioned receive");
    }
    MPI_OK(MPI_Request_free(&both[0]));
    MPI_OK(MPI_Request_free(&both[1]));
    MPI_OK(MPI_Type_free(&vec));
}

/* Three pairs with one tag: the k-th send init meets the k-th receive init. */
static void init_order(int right, int left)
{
    enum { PARTS = 4, N = 64 };
    int s[3][N], r[3][N];
    MPI_Request sr[3], rr[3];
    for (int j = 0; j < 3; j++) {
        MPI_OK(MPI_Psend_init(s[j], PARTS, N / PARTS, MPI_INT, right, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sr[j]));
        MPI_OK(MPI_Precv_init(r[j], PARTS, N / PARTS, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rr[j]));
    }
    for (int j = 0; j < 3; j++) {
        for (int i = 0; i < N; i++) {
            s[j][i] = t_rank * 100000 + j * 1000 + i;
            r[j][i] = -1;
        }
        MPI_OK(MPI_Start(&rr[j]));
    }
    for (int j = 2; j >= 0; j--) {  /* started and marked last to first */
        MPI_OK(MPI_Start(&sr[j]));
        MPI_OK(MPI_Pready_range(0, PARTS - 1, sr[j]));
    }
    MPI_Status sent[3];
    MPI_OK(MPI_Waitall(3, sr, sent));
    MPI_OK(MPI_Waitall(3, rr, MPI_STATUSES_IGNORE));
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < N; i++)
            CHECK_EQ_INT(r[j][i], left * 100000 + j * 1000 + i, "init-order matching");
    for (int j = 0; j < 3; j++) {
        MPI_OK(MPI_Request_free(&sr[j]));
        MPI_OK(MPI_Request_free(&rr[j]));
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "partitioned");
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    const int big = 2 * 1024 * 1024 / (int)sizeof(double);
    double *sbuf = malloc(sizeof(double) * big), *rbuf = malloc(sizeof(double) * big);
    CHECK(sbuf && rbuf, "out of memory");

    /* a wildcard receive pending through the partitioned exchanges below */
    int wild = -1;
    MPI_Request wreq;
    MPI_OK(MPI_Irecv(&wild, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &wreq));

    exchange(sbuf, rbuf, 4, 4, 64, ITERS, right, left, 0);
    exchange(sbuf, rbuf, 8, 2, 64, ITERS, right, left, 1);
    exchange(sbuf, rbuf, 1, 16, 64, ITERS, right, left, 0);
    exchange(sbuf, rbuf, 64, 64, big, 2, right, left, 1);
    strided(right, left);
    init_order(right, left);

    int flag = 0;
    MPI_OK(MPI_Test(&wreq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "an MPI_ANY_TAG receive took partitioned data (%d)", wild);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));  /* every rank has looked before the message goes */
    int v = 4242 + t_rank;
    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 9, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&wreq, MPI_STATUS_IGNORE));
    CHECK_EQ_INT(wild, 4242 + left, "the wildcard receive's message");

    /* MPI_PROC_NULL: complete at once after the start (send: after its partitions) */
    MPI_Request pn[2];
    MPI_OK(MPI_Psend_init(sbuf, 2, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &pn[0]));
    MPI_OK(MPI_Precv_init(rbuf, 2, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &pn[1]));
    MPI_OK(MPI_Startall(2, pn));
    MPI_OK(MPI_Pready_range(0, 1, pn[0]));
    MPI_Status st[2];
    MPI_OK(MPI_Waitall(2, pn, st));
    CHECK_EQ_INT(st[1].MPI_SOURCE, MPI_PROC_NULL, "MPI_PROC_NULL receive's source");

    /* errors, returned */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Start(&pn[0]));
    int cls = 0;
    MPI_Error_class(MPI_Pready(2, pn[0]), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_ARG, "MPI_Pready of a partition out of range");
    MPI_OK(MPI_Pready(0, pn[0]));
    MPI_Error_class(MPI_Pready(0, pn[0]), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_ARG, "MPI_Pready of a partition marked twice");
    MPI_OK(MPI_Pready(1, pn[0]));
    MPI_OK(MPI_Wait(&pn[0], MPI_STATUS_IGNORE));
    MPI_Error_class(MPI_Pready(0, pn[1]), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_ARG, "MPI_Pready on a receive");
    MPI_Request plain;
    MPI_OK(MPI_Send_init(sbuf, 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &plain));
    MPI_Error_class(MPI_Pready(0, plain), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_REQUEST, "MPI_Pready on a request that is not partitioned");
    MPI_OK(MPI_Request_free(&plain));
    MPI_OK(MPI_Request_free(&pn[0]));
    MPI_OK(MPI_Request_free(&pn[1]));

    /* never started, then freed */
    MPI_Request unused;
    MPI_OK(MPI_Psend_init(sbuf, 1, 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &unused));
    MPI_OK(MPI_Request_free(&unused));
    MPI_OK(MPI_Precv_init(rbuf, 1, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &unused));
    MPI_OK(MPI_Request_free(&unused));

    free(sbuf);
    free(rbuf);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) printf("partitioned: OK\n");
    MPI_Finalize();
    return 0;
}
