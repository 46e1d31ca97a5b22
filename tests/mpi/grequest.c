/* Generalized requests: MPI_Grequest_start / MPI_Grequest_complete with the completion calls
 * (wait, test, their any/some/all forms, MPI_Request_get_status), MPI_Cancel and
 * MPI_Request_free; the query function fills the status, the free function runs once, and the
 * error codes the callbacks return reach the caller. Mixed with point-to-point requests. The
 * empty status of MPI_REQUEST_NULL. */
#include "common.h"

typedef struct {
    int id;          /* the status's MPI_TAG; MPI_SOURCE is the rank */
    int bytes;       /* elements of MPI_BYTE the status reports */
    int query_rc;    /* what the query function returns */
    int free_rc;     /* what the free function returns */
    int queries;     /* calls of each callback */
    int frees;
    int cancels;
    int last_cancel_complete;
    int cancelled;   /* the query function marks the status cancelled */
} op_t;

static int query_fn(void *extra, MPI_Status *status)
{
    op_t *op = (op_t *)extra;
    op->queries++;
    status->MPI_SOURCE = t_rank;
    status->MPI_TAG = op->id;
    MPI_Status_set_elements(status, MPI_BYTE, op->bytes);
    MPI_Status_set_cancelled(status, op->cancelled);
    return op->query_rc;
}

static int free_fn(void *extra)
{
    op_t *op = (op_t *)extra;
    op->frees++;
    return op->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
    op_t *op = (op_t *)extra;
    op->cancels++;
    op->last_cancel_complete = complete;
    if (complete == 0)
        op->cancelled = 1;
    return MPI_SUCCESS;
}

static void op_init(op_t *op, int id, int bytes)
{
    memset(op, 0, sizeof(*op));
    op->id = id;
    op->bytes = bytes;
}

static void check_status(const MPI_Status *st, const op_t *op, const char *what)
{
    int count = -1;
    CHECK_EQ_INT(st->MPI_SOURCE, t_rank, what);
    CHECK_EQ_INT(st->MPI_TAG, op->id, what);
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK_EQ_INT(count, op->bytes, what);
}

static void start(op_t *op, MPI_Request *req)
{
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, op, req));
    CHECK(*req != MPI_REQUEST_NULL, "MPI_Grequest_start gave MPI_REQUEST_NULL");
}

/* Single completion: test, get_status, wait. */
static void test_single(void)
{
    op_t op;
    MPI_Request req;
    MPI_Status st;
    int flag = -1;

    /* MPI_REQUEST_NULL: complete, with an empty status (MPI_ERROR included). */
    memset(&st, 0x5a, sizeof st);
    MPI_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK(flag == 1 && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && st.MPI_ERROR == MPI_SUCCESS,
          "MPI_Request_get_status(MPI_REQUEST_NULL): flag %d source %d tag %d error %d", flag, st.MPI_SOURCE,
          st.MPI_TAG, st.MPI_ERROR);

    op_init(&op, 11, 40);
    start(&op, &req);
    MPI_OK(MPI_Test(&req, &flag, &st));
    CHECK_EQ_INT(flag, 0, "MPI_Test before MPI_Grequest_complete");
    MPI_OK(MPI_Request_get_status(req, &flag, &st));
    CHECK_EQ_INT(flag, 0, "MPI_Request_get_status before MPI_Grequest_complete");
    CHECK_EQ_INT(op.queries + op.frees, 0, "callbacks before completion");

    MPI_OK(MPI_Grequest_complete(req));
    MPI_OK(MPI_Request_get_status(req, &flag, &st));
    CHECK_EQ_INT(flag, 1, "MPI_Request_get_status after MPI_Grequest_complete");
    check_status(&st, &op, "MPI_Request_get_status's status");
    CHECK_EQ_INT(op.queries, 1, "queries after get_status");
    CHECK_EQ_INT(op.frees, 0, "MPI_Request_get_status frees nothing");
    CHECK(req != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");

    memset(&st, 0, sizeof(st));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Wait left the request");
    check_status(&st, &op, "MPI_Wait's status");
    CHECK_EQ_INT(op.queries, 2, "queries after wait");
    CHECK_EQ_INT(op.frees, 1, "frees after wait");

    /* MPI_Test completes it too, with MPI_STATUS_IGNORE. */
    op_init(&op, 12, 0);
    start(&op, &req);
    MPI_OK(MPI_Grequest_complete(req));
    MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK_EQ_INT(flag, 1, "MPI_Test after MPI_Grequest_complete");
    CHECK(req == MPI_REQUEST_NULL, "MPI_Test left the request");
    CHECK_EQ_INT(op.queries, 1, "queries after test");
    CHECK_EQ_INT(op.frees, 1, "frees after test");
}

/* The multiple-completion calls over generalized and point-to-point requests together. */
static void test_sets(void)
{
    enum { N = 3 };
    op_t ops[N];
    MPI_Request reqs[N + 2];
    MPI_Status sts[N + 2];
    int sendval = 1000 + t_rank, recvval = -1;
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;

    for (int i = 0; i < N; i++) {
        op_init(&ops[i], 20 + i, 8 * i);
        start(&ops[i], &reqs[i]);
    }
    MPI_OK(MPI_Irecv(&recvval, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &reqs[N]));
    MPI_OK(MPI_Isend(&sendval, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &reqs[N + 1]));
    for (int i = 0; i < N; i++)
        MPI_OK(MPI_Grequest_complete(reqs[i]));
    MPI_OK(MPI_Waitall(N + 2, reqs, sts));
    for (int i = 0; i < N; i++) {
        CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Waitall left request %d", i);
        check_status(&sts[i], &ops[i], "MPI_Waitall's status");
        CHECK_EQ_INT(ops[i].queries * 10 + ops[i].frees, 11, "callbacks after waitall");
    }
    CHECK_EQ_INT(recvval, 1000 + left, "received value");
    CHECK_EQ_INT(sts[N].MPI_SOURCE, left, "receive's source");

    /* Waitany and Testany: only the completed one comes back. */
    for (int i = 0; i < N; i++) {
        op_init(&ops[i], 30 + i, i);
        start(&ops[i], &reqs[i]);
    }
    int index = -1, flag = -1;
    MPI_OK(MPI_Testany(N, reqs, &index, &flag, &sts[0]));
    CHECK_EQ_INT(flag, 0, "MPI_Testany with none complete");
    MPI_OK(MPI_Grequest_complete(reqs[1]));
    MPI_OK(MPI_Waitany(N, reqs, &index, &sts[0]));
    CHECK_EQ_INT(index, 1, "MPI_Waitany's index");
    check_status(&sts[0], &ops[1], "MPI_Waitany's status");
    MPI_OK(MPI_Grequest_complete(reqs[2]));
    MPI_OK(MPI_Testany(N, reqs, &index, &flag, &sts[0]));
    CHECK(flag == 1 && index == 2, "MPI_Testany: flag %d index %d", flag, index);
    check_status(&sts[0], &ops[2], "MPI_Testany's status");

    /* Waitsome / Testsome on what is left (request 0). */
    int outcount = -1, indices[N];
    MPI_OK(MPI_Testsome(N, reqs, &outcount, indices, sts));
    CHECK_EQ_INT(outcount, 0, "MPI_Testsome with none complete");
    MPI_OK(MPI_Grequest_complete(reqs[0]));
    MPI_OK(MPI_Waitsome(N, reqs, &outcount, indices, sts));
    CHECK(outcount == 1 && indices[0] == 0, "MPI_Waitsome: outcount %d", outcount);
    check_status(&sts[0], &ops[0], "MPI_Waitsome's status");
    MPI_OK(MPI_Waitsome(N, reqs, &outcount, indices, sts));
    CHECK_EQ_INT(outcount, MPI_UNDEFINED, "MPI_Waitsome with no active request");
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(ops[i].queries * 10 + ops[i].frees, 11, "callbacks after any/some");
}

/* The codes the query and free functions return are the completion call's. */
static void test_errors(void)
{
    int cls, code;
    op_t op, ok;
    MPI_Request req, reqs[2];
    MPI_Status st, sts[2];

    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_code(cls, &code));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    op_init(&op, 40, 4);
    op.query_rc = code;
    start(&op, &req);
    MPI_OK(MPI_Grequest_complete(req));
    int rc = MPI_Wait(&req, &st);
    CHECK_EQ_INT(rc, code, "MPI_Wait's code from the query function");
    CHECK_EQ_INT(op.frees, 1, "the request is freed even so");
    CHECK(req == MPI_REQUEST_NULL, "MPI_Wait left the failed request");
    int got_cls = -1;
    MPI_OK(MPI_Error_class(rc, &got_cls));
    CHECK_EQ_INT(got_cls, cls, "class of the code returned");

    op_init(&op, 41, 4);
    op.free_rc = MPI_ERR_OTHER;
    start(&op, &req);
    MPI_OK(MPI_Grequest_complete(req));
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK_EQ_INT(rc, MPI_ERR_OTHER, "MPI_Wait's code from the free function");

    op_init(&op, 42, 4);
    op.query_rc = code;
    op_init(&ok, 43, 4);
    start(&op, &reqs[0]);
    start(&ok, &reqs[1]);
    MPI_OK(MPI_Grequest_complete(reqs[0]));
    MPI_OK(MPI_Grequest_complete(reqs[1]));
    rc = MPI_Waitall(2, reqs, sts);
    MPI_OK(MPI_Error_class(rc, &got_cls));
    CHECK_EQ_INT(got_cls, MPI_ERR_IN_STATUS, "MPI_Waitall with a failing query");
    CHECK_EQ_INT(sts[0].MPI_ERROR, code, "failed request's MPI_ERROR");
    CHECK_EQ_INT(sts[1].MPI_ERROR, MPI_SUCCESS, "other request's MPI_ERROR");
    check_status(&sts[1], &ok, "other request's status");

    op_init(&op, 44, 4);
    op.query_rc = code;
    start(&op, &req);
    MPI_OK(MPI_Grequest_complete(req));
    int flag = 0;
    rc = MPI_Request_get_status(req, &flag, &st);
    CHECK_EQ_INT(rc, code, "MPI_Request_get_status's code from the query function");
    op.query_rc = MPI_SUCCESS;
    MPI_OK(MPI_Wait(&req, &st));

    /* Completing twice, or something else, is MPI_ERR_REQUEST. */
    rc = MPI_Grequest_complete(MPI_REQUEST_NULL);
    MPI_OK(MPI_Error_class(rc, &got_cls));
    CHECK_EQ_INT(got_cls, MPI_ERR_REQUEST, "MPI_Grequest_complete(MPI_REQUEST_NULL)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_Cancel calls the cancel function; MPI_Request_free defers the free function. */
static void test_cancel_free(void)
{
    op_t op;
    MPI_Request req;
    MPI_Status st;
    int flag = -1;

    op_init(&op, 50, 0);
    start(&op, &req);
    MPI_OK(MPI_Cancel(&req));
    CHECK(op.cancels == 1 && op.last_cancel_complete == 0, "cancel before completion");
    MPI_OK(MPI_Grequest_complete(req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK_EQ_INT(flag, 1, "MPI_Test_cancelled after a cancel");

    op_init(&op, 51, 0);
    start(&op, &req);
    MPI_OK(MPI_Grequest_complete(req));
    MPI_OK(MPI_Cancel(&req));
    CHECK(op.cancels == 1 && op.last_cancel_complete == 1, "cancel after completion");
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK_EQ_INT(flag, 0, "MPI_Test_cancelled after a late cancel");

    /* Freed before completion: the free function runs in MPI_Grequest_complete. */
    op_init(&op, 52, 0);
    start(&op, &req);
    MPI_Request keep = req;
    MPI_OK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    CHECK_EQ_INT(op.frees, 0, "free function before completion");
    MPI_OK(MPI_Grequest_complete(keep));
    CHECK_EQ_INT(op.frees, 1, "free function at completion");
    CHECK_EQ_INT(op.queries, 0, "a freed request is never queried");

    /* Freed after completion: the free function runs at once. */
    op_init(&op, 53, 0);
    start(&op, &req);
    MPI_OK(MPI_Grequest_complete(req));
    MPI_OK(MPI_Request_free(&req));
    CHECK_EQ_INT(op.frees, 1, "free function on MPI_Request_free");
    CHECK_EQ_INT(op.queries, 0, "a freed request is never queried");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "grequest");
    for (int round = 0; round < 3; round++) {
        test_single();
        test_sets();
        test_errors();
        test_cancel_free();
    }
    t_done();
    return 0;
}
