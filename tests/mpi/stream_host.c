/* The MPIX stream API without a GPU (runs in CI): MPIX_Info_set_hex round trip (MPICH's
 * upper-case hex, byte by byte in memory order), CPU streams (MPI_INFO_NULL) through
 * MPIX_Stream_create, MPIX_Stream_comm_create (a working duplicate) and MPIX_Stream_free,
 * freed and invalid handles, malformed info values, and a "cudaStream_t" info in a process
 * that cannot use CUDA. The *_enqueue calls on a communicator without a GPU stream must fail
 * cleanly. Every error is checked for its class and its message. */
#include "common.h"

static int error_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* An error of class `cls` whose message contains `needle`. */
static void expect_error(int rc, int cls, const char *needle, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = 0;
    if (rc == MPI_SUCCESS) FAIL("%s: succeeded, expected an error", what);
    MPI_Error_string(rc, msg, &len);
    if (error_class(rc) != cls) FAIL("%s: error class %d, expected %d (%s)", what, error_class(rc), cls, msg);
    if (needle && !strstr(msg, needle)) FAIL("%s: message '%s' does not mention '%s'", what, msg, needle);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "stream_host");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int cuda_build = MPIX_Query_cuda_support();

    /* MPIX_Info_set_hex: two upper-case hex digits per byte, in memory order. */
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    const unsigned char bytes[5] = {0x00, 0x1f, 0xa0, 0xff, 0x7c};
    MPI_OK(MPIX_Info_set_hex(info, "blob", bytes, 5));
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Info_get(info, "blob", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag, "key blob not set");
    CHECK(!strcmp(value, "001FA0FF7C"), "MPIX_Info_set_hex wrote '%s'", value);
    /* A pointer-sized value, as programs pass a cudaStream_t. */
    void *ptr = (void *)(uintptr_t)0x0123456789abcdefULL;
    MPI_OK(MPIX_Info_set_hex(info, "value", &ptr, (int)sizeof(ptr)));
    MPI_OK(MPI_Info_get(info, "value", MPI_MAX_INFO_VAL, value, &flag));
    char expect[2 * sizeof(ptr) + 1];
    for (size_t i = 0; i < sizeof(ptr); i++)
        snprintf(expect + 2 * i, 3, "%02X", ((const unsigned char *)&ptr)[i]);
    CHECK(flag && !strcmp(value, expect), "pointer hex '%s', expected '%s'", value, expect);
    MPI_OK(MPIX_Info_set_hex(info, "empty", bytes, 0));
    MPI_OK(MPI_Info_get(info, "empty", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && value[0] == 0, "zero bytes gave '%s'", value);
    expect_error(MPIX_Info_set_hex(info, "neg", bytes, -1), MPI_ERR_ARG, "value_size", "negative value_size");
    expect_error(MPIX_Info_set_hex(MPI_INFO_NULL, "k", bytes, 1), MPI_ERR_INFO, "info", "MPI_INFO_NULL");
    static unsigned char big[MPI_MAX_INFO_VAL];
    expect_error(MPIX_Info_set_hex(info, "big", big, MPI_MAX_INFO_VAL), MPI_ERR_INFO_VALUE, "MPI_MAX_INFO_VAL",
                 "too long");
    MPI_OK(MPI_Info_free(&info));

    /* CPU streams: create, make communicators, use them, free in any order. */
    MPIX_Stream streams[3];
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPIX_Stream_create(MPI_INFO_NULL, &streams[i]));
        CHECK(streams[i] != MPIX_STREAM_NULL, "stream %d is MPIX_STREAM_NULL", i);
    }
    CHECK(streams[0] != streams[1] && streams[1] != streams[2], "stream handles not distinct");
    MPI_Comm sc, sc_null;
    MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, streams[1], &sc));
    MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, MPIX_STREAM_NULL, &sc_null));
    int size = 0, rank = -1, cmp = -1;
    MPI_OK(MPI_Comm_size(sc, &size));
    MPI_OK(MPI_Comm_rank(sc, &rank));
    CHECK_EQ_INT(size, t_size, "stream comm size");
    CHECK_EQ_INT(rank, t_rank, "stream comm rank");
    MPI_OK(MPI_Comm_compare(sc, MPI_COMM_WORLD, &cmp));
    CHECK_EQ_INT(cmp, MPI_CONGRUENT, "stream comm compares congruent with MPI_COMM_WORLD");
    long sum = 0, mine = t_rank + 1;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, sc));
    CHECK_EQ_INT(sum, (long)t_size * (t_size + 1) / 2, "allreduce on the stream comm");
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_MAX, sc_null));
    CHECK_EQ_INT(sum, t_size, "allreduce on the MPIX_STREAM_NULL comm");

    /* *_enqueue needs a GPU stream: a CPU-stream comm and MPI_COMM_WORLD are refused. */
    const int enq_cls = cuda_build ? MPI_ERR_ARG : MPI_ERR_UNSUPPORTED_OPERATION;
    const char *enq_msg = cuda_build ? "GPU stream" : "built without CUDA";
    int x = 1, y = 0;
    expect_error(MPIX_Allreduce_enqueue(&x, &y, 1, MPI_INT, MPI_SUM, sc), enq_cls, enq_msg, "Allreduce_enqueue, CPU stream");
    expect_error(MPIX_Allreduce_enqueue(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), enq_cls, enq_msg,
                 "Allreduce_enqueue on MPI_COMM_WORLD");
    expect_error(MPIX_Send_enqueue(&x, 1, MPI_INT, 0, 0, sc_null), enq_cls, enq_msg, "Send_enqueue, no stream");
    expect_error(MPIX_Bcast_enqueue(&x, 1, MPI_INT, 0, sc), enq_cls, enq_msg, "Bcast_enqueue, CPU stream");
    expect_error(MPIX_Reduce_enqueue(&x, &y, 1, MPI_INT, MPI_SUM, 0, sc), enq_cls, enq_msg, "Reduce_enqueue, CPU stream");
    {
        int counts[64] = {0};
        expect_error(MPIX_Reduce_scatter_enqueue(&x, &y, counts, MPI_INT, MPI_SUM, sc), enq_cls, enq_msg,
                     "Reduce_scatter_enqueue, CPU stream");
    }
    /* Registration needs device memory on every rank: host memory fails everywhere, no hang. */
    {
        void *h = (void *)1;
        const int rc = MPIX_Comm_register_buffer(MPI_COMM_WORLD, &x, sizeof(x), &h);
        CHECK(rc != MPI_SUCCESS, "MPIX_Comm_register_buffer accepted host memory");
        CHECK(h == NULL, "a failed MPIX_Comm_register_buffer left a handle");
        CHECK(MPIX_Comm_deregister_buffer(MPI_COMM_WORLD, &x) != MPI_SUCCESS, "a bogus registration handle was accepted");
    }
    CHECK_EQ_INT(y, 0, "a refused Allreduce_enqueue wrote its result");
    MPI_Request rq = MPI_REQUEST_NULL;
    expect_error(MPIX_Irecv_enqueue(&y, 1, MPI_INT, 0, 0, sc, &rq), enq_cls, enq_msg, "Irecv_enqueue, CPU stream");
    CHECK(rq == MPI_REQUEST_NULL, "a refused Irecv_enqueue set a request");
    /* Wait_enqueue on a request of a communicator without a GPU stream. */
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, t_rank, 5, sc, &rq));
    expect_error(MPIX_Wait_enqueue(&rq, MPI_STATUS_IGNORE), cuda_build ? MPI_ERR_REQUEST : MPI_ERR_UNSUPPORTED_OPERATION,
                 cuda_build ? "GPU stream" : "built without CUDA", "Wait_enqueue, request without a stream");
    MPI_OK(MPI_Send(&x, 1, MPI_INT, t_rank, 5, sc));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_EQ_INT(y, 1, "message on the stream comm");

    /* Free a stream while its communicator lives; the communicator keeps working. */
    MPIX_Stream saved = streams[1];
    MPI_OK(MPIX_Stream_free(&streams[1]));
    CHECK(streams[1] == MPIX_STREAM_NULL, "MPIX_Stream_free did not set MPIX_STREAM_NULL");
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, sc));
    CHECK_EQ_INT(sum, (long)t_size * (t_size + 1) / 2, "allreduce after MPIX_Stream_free");
    /* The freed handle: every use is an error. */
    MPI_Comm bad = MPI_COMM_NULL;
    expect_error(MPIX_Stream_comm_create(MPI_COMM_WORLD, saved, &bad), MPI_ERR_ARG, "freed", "comm_create, freed stream");
    CHECK(bad == MPI_COMM_NULL, "a failed MPIX_Stream_comm_create set newcomm");
    expect_error(MPIX_Stream_free(&saved), MPI_ERR_ARG, "freed", "double free");
    MPIX_Stream null_stream = MPIX_STREAM_NULL;
    expect_error(MPIX_Stream_free(&null_stream), MPI_ERR_ARG, "stream", "free MPIX_STREAM_NULL");
    expect_error(MPIX_Stream_comm_create(MPI_COMM_WORLD, (MPIX_Stream)0x12345, &bad), MPI_ERR_ARG, "stream",
                 "garbage stream handle");
    expect_error(MPIX_Stream_comm_create(MPI_COMM_NULL, streams[0], &bad), MPI_ERR_COMM, "comm", "MPI_COMM_NULL");
    expect_error(MPIX_Stream_create(MPI_INFO_NULL, NULL), MPI_ERR_ARG, "stream", "NULL stream pointer");
    MPI_OK(MPIX_Stream_free(&streams[0]));
    MPI_OK(MPIX_Stream_free(&streams[2]));
    MPI_OK(MPI_Comm_free(&sc));
    MPI_OK(MPI_Comm_free(&sc_null));

    /* Create/free loops reuse handles and do not leak communicators. */
    for (int i = 0; i < 50; i++) {
        MPIX_Stream s;
        MPI_Comm c;
        MPI_OK(MPIX_Stream_create(MPI_INFO_NULL, &s));
        MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c));
        MPI_OK(MPIX_Stream_free(&s));
        MPI_OK(MPI_Comm_free(&c));
    }
    /* A plain dup after freed stream comms never carries a stream (handles are reused). */
    MPI_Comm plain;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &plain));
    expect_error(MPIX_Allreduce_enqueue(&x, &y, 1, MPI_INT, MPI_SUM, plain), enq_cls, enq_msg,
                 "Allreduce_enqueue on a dup reusing a stream comm's handle");
    MPI_OK(MPI_Comm_free(&plain));

    /* Info values for a cudaStream_t. Malformed ones are errors in any process. */
    MPIX_Stream s = MPIX_STREAM_NULL;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "type", "hipStream_t"));
    expect_error(MPIX_Stream_create(info, &s), MPI_ERR_UNSUPPORTED_OPERATION, "hipStream_t", "type hipStream_t");
    MPI_OK(MPI_Info_set(info, "type", "cudaStream_t"));
    if (cuda_build) {
        expect_error(MPIX_Stream_create(info, &s), MPI_ERR_INFO_NOKEY, "value", "cudaStream_t without value");
        MPI_OK(MPI_Info_set(info, "value", "xyz"));
        expect_error(MPIX_Stream_create(info, &s), MPI_ERR_INFO_VALUE, "hex", "malformed value");
        MPI_OK(MPI_Info_set(info, "value", "0011"));
        expect_error(MPIX_Stream_create(info, &s), MPI_ERR_INFO_VALUE, "hex", "value of 2 bytes");
        CHECK(s == MPIX_STREAM_NULL, "a failed MPIX_Stream_create set the stream");
    }
    /* The legacy default stream (a null cudaStream_t), written as MPICH does: usable only
     * where CUDA is; without it, a clear error. "[8]" is newer MPICH's run of 8 zero bytes. */
    const char *forms[2] = {NULL, "[8]"};
    for (int f = 0; f < 2; f++) {
        void *legacy = NULL;
        if (forms[f]) MPI_OK(MPI_Info_set(info, "value", forms[f]));
        else MPI_OK(MPIX_Info_set_hex(info, "value", &legacy, (int)sizeof(legacy)));
        int rc = MPIX_Stream_create(info, &s);
        if (!cuda_build) {
            expect_error(rc, MPI_ERR_UNSUPPORTED_OPERATION, "built without CUDA", "cudaStream_t, no CUDA build");
        } else if (rc == MPI_SUCCESS) {
            /* CUDA is usable here (a GPU machine): the stream works like any other. */
            MPI_Comm c;
            MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c));
            MPI_OK(MPI_Comm_free(&c));
            MPI_OK(MPIX_Stream_free(&s));
            if (t_rank == 0 && f == 0) printf("note: CUDA is usable here; the no-GPU error is not checked\n");
        } else {
            expect_error(rc, MPI_ERR_UNSUPPORTED_OPERATION, "CUDA", "cudaStream_t without a GPU");
        }
    }
    MPI_OK(MPI_Info_free(&info));
    t_done();
    return 0;
}
