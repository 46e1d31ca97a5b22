/* Point-to-point with MPI_PROC_NULL: blocking, immediate and combined calls complete at once
 * with the status of MPI_PROC_NULL (source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0), also when
 * they name no datatype (MPI_DATATYPE_NULL with a count of 0), while a count of 1 of
 * MPI_DATATYPE_NULL stays an error. A null request completes with the empty status. A message
 * between real neighbours afterwards checks that nothing of them was left behind. */
#include "common.h"

static void check_null_status(const MPI_Status *st, const char *what)
{
    int count = -1;
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d", what, st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d", what, st->MPI_TAG);
    MPI_OK(MPI_Get_count(st, MPI_INT, &count));
    CHECK_EQ_INT(count, 0, what);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "proc_null");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Status st;
    MPI_Request req[2];
    int buf[4] = {1, 2, 3, 4};

    for (int round = 0; round < 2; round++) {
        MPI_Datatype dt = round ? MPI_DATATYPE_NULL : MPI_INT;
        const char *name = round ? "MPI_DATATYPE_NULL" : "MPI_INT";
        char what[64];

        memset(&st, 0x5a, sizeof st);
        MPI_OK(MPI_Irecv(NULL, 0, dt, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &req[0]));
        MPI_OK(MPI_Waitall(1, req, &st));
        snprintf(what, sizeof what, "Irecv of 0 %s", name);
        check_null_status(&st, what);

        memset(&st, 0x5a, sizeof st);
        MPI_OK(MPI_Recv(NULL, 0, dt, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &st));
        snprintf(what, sizeof what, "Recv of 0 %s", name);
        check_null_status(&st, what);

        MPI_OK(MPI_Send(NULL, 0, dt, MPI_PROC_NULL, 10, MPI_COMM_WORLD));
        MPI_OK(MPI_Isend(NULL, 0, dt, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &req[1]));
        MPI_OK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));

        memset(&st, 0x5a, sizeof st);
        MPI_OK(MPI_Sendrecv(NULL, 0, dt, MPI_PROC_NULL, 1, NULL, 0, dt, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        snprintf(what, sizeof what, "Sendrecv of 0 %s", name);
        check_null_status(&st, what);
    }

    /* A null request completes at once with the empty status: MPI_ANY_SOURCE, MPI_ANY_TAG, no
     * data and MPI_SUCCESS. */
    for (int call = 0; call < 3; call++) {
        static const char *names[] = {"Request_get_status", "Test", "Wait"};
        MPI_Request null = MPI_REQUEST_NULL;
        int flag = 0, count = -1;
        memset(&st, 0x5a, sizeof st);
        if (call == 0) MPI_OK(MPI_Request_get_status(null, &flag, &st));
        else if (call == 1) MPI_OK(MPI_Test(&null, &flag, &st));
        else {
            MPI_OK(MPI_Wait(&null, &st));
            flag = 1;
        }
        CHECK(flag, "%s of MPI_REQUEST_NULL: flag false", names[call]);
        CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && st.MPI_ERROR == MPI_SUCCESS,
              "%s of MPI_REQUEST_NULL: source %d tag %d error %d", names[call], st.MPI_SOURCE, st.MPI_TAG,
              st.MPI_ERROR);
        MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_EQ_INT(count, 0, names[call]);
    }

    /* A count of 1 needs a datatype, MPI_PROC_NULL or not. */
    int cls = MPI_SUCCESS;
    MPI_Error_class(MPI_Recv(buf, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &st), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_TYPE, "error class of a Recv of 1 MPI_DATATYPE_NULL");
    MPI_Error_class(MPI_Send(buf, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_TYPE, "error class of a Send of 1 MPI_DATATYPE_NULL");

    /* A ring exchange: every rank gets its left neighbour's data, and an empty message of no
     * datatype from it. */
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    int got[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) buf[i] = t_rank * 10 + i;
    MPI_OK(MPI_Irecv(got, 4, MPI_INT, left, 3, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Send(buf, 4, MPI_INT, right, 3, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&req[0], &st));
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(got[i], left * 10 + i, "ring data");
    CHECK_EQ_INT(st.MPI_SOURCE, left, "ring source");
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, right, 4, NULL, 0, MPI_DATATYPE_NULL, left, 4, MPI_COMM_WORLD,
                        &st));
    CHECK_EQ_INT(st.MPI_SOURCE, left, "empty message source");
    CHECK_EQ_INT(st.MPI_TAG, 4, "empty message tag");
    t_done();
    return 0;
}
