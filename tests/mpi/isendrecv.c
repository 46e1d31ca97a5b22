/*
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4), and their large-count forms: around a ring,
 * with contiguous and strided datatypes, several in flight at once and completed in reverse
 * order, to and from MPI_PROC_NULL, freed while in flight, and the status of each. The buffers
 * of the exchange freed in flight are released only at the end.
 */
#include "common.h"

#define N 1000

static int val(int from, int round, int i) { return from * 100000 + round * 1000 + i % 1000; }

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "isendrecv");
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    enum { ROUNDS = 4 };
    int *send[ROUNDS], *recv[ROUNDS];
    MPI_Request req[ROUNDS];

    /* Several exchanges in flight at once, completed in reverse order. */
    for (int r = 0; r < ROUNDS; r++) {
        send[r] = malloc(N * sizeof(int));
        recv[r] = malloc(N * sizeof(int));
        for (int i = 0; i < N; i++) {
            send[r][i] = val(t_rank, r, i);
            recv[r][i] = -1;
        }
        if (r % 2)
            MPI_OK(MPI_Isendrecv_c(send[r], N, MPI_INT, right, r, recv[r], N, MPI_INT, left, r,
                                   MPI_COMM_WORLD, &req[r]));
        else
            MPI_OK(MPI_Isendrecv(send[r], N, MPI_INT, right, r, recv[r], N, MPI_INT, left, r,
                                 MPI_COMM_WORLD, &req[r]));
    }
    for (int r = ROUNDS - 1; r >= 0; r--) {
        MPI_Status st;
        MPI_OK(MPI_Wait(&req[r], &st));
        CHECK(req[r] == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
        CHECK_EQ_INT(st.MPI_SOURCE, left, "status source");
        CHECK_EQ_INT(st.MPI_TAG, r, "status tag");
        int count;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_EQ_INT(count, N, "received count");
        for (int i = 0; i < N; i++)
            CHECK(recv[r][i] == val(left, r, i), "round %d element %d: got %d", r, i, recv[r][i]);
    }

    /* In place, through a strided type: every other int travels, the others stay. */
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    for (int v = 0; v < 2; v++) {
        int *buf = send[0];
        for (int i = 0; i < N; i++)
            buf[i] = val(t_rank, 10 + v, i);
        MPI_Request q;
        if (v)
            MPI_OK(MPI_Isendrecv_replace_c(buf, 1, every_other, right, 7, left, 7, MPI_COMM_WORLD, &q));
        else
            MPI_OK(MPI_Isendrecv_replace(buf, 1, every_other, right, 7, left, 7, MPI_COMM_WORLD, &q));
        int flag = 0;
        MPI_Status st;
        while (!flag)
            MPI_OK(MPI_Test(&q, &flag, &st));
        CHECK_EQ_INT(st.MPI_SOURCE, left, "replace: status source");
        int count;
        MPI_OK(MPI_Get_count(&st, every_other, &count));
        CHECK_EQ_INT(count, 1, "replace: received count");
        for (int i = 0; i < N; i++) {
            int expect = i % 2 ? val(t_rank, 10 + v, i) : val(left, 10 + v, i);
            CHECK(buf[i] == expect, "replace %d element %d: got %d, expected %d", v, i, buf[i], expect);
        }
    }
    MPI_OK(MPI_Type_free(&every_other));

    /* MPI_PROC_NULL on both sides: completes with the empty status. */
    MPI_Request q;
    MPI_Status st;
    MPI_OK(MPI_Isendrecv(send[0], N, MPI_INT, MPI_PROC_NULL, 0, recv[0], N, MPI_INT, MPI_PROC_NULL, 0,
                         MPI_COMM_WORLD, &q));
    MPI_OK(MPI_Wait(&q, &st));
    CHECK_EQ_INT(st.MPI_SOURCE, MPI_PROC_NULL, "proc null: source");
    CHECK_EQ_INT(st.MPI_TAG, MPI_ANY_TAG, "proc null: tag");
    int count;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_EQ_INT(count, 0, "proc null: count");

    /* Freed while in flight: the pair goes on alone and the next exchange still works. */
    for (int i = 0; i < N; i++) {
        send[1][i] = val(t_rank, 20, i);
        recv[1][i] = -1;
    }
    MPI_OK(MPI_Isendrecv(send[1], N, MPI_INT, right, 20, recv[1], N, MPI_INT, left, 20, MPI_COMM_WORLD, &q));
    MPI_OK(MPI_Request_free(&q));
    CHECK(q == MPI_REQUEST_NULL, "request not nulled by MPI_Request_free");
    /* A blocking exchange with the same neighbours and tag: messages do not overtake. */
    int token = t_rank, got = -1;
    MPI_OK(MPI_Sendrecv(&token, 1, MPI_INT, right, 20, &got, 1, MPI_INT, left, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ_INT(got, left, "exchange after the freed one");

    /* A null request argument is an error. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Isendrecv(send[0], 1, MPI_INT, right, 0, recv[0], 1, MPI_INT, left, 0, MPI_COMM_WORLD, NULL);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK_EQ_INT(cls, MPI_ERR_ARG, "NULL request");

    for (int r = 0; r < ROUNDS; r++) {
        free(send[r]);
        free(recv[r]);
    }
    t_done();
    return 0;
}
