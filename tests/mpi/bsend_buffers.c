/* Buffered sends with the attach scopes of MPI 4.1, between ranks 0 and 1 (others only meet):
 * a communicator's own buffer (used while the process has none; a second message that does not
 * fit fails with MPI_ERR_BUFFER; MPI_Comm_iflush_buffer stays pending until the receiver took
 * the message, then completes; detach gives back the address and size), MPI_BUFFER_AUTOMATIC on
 * the process (three 1 MiB messages with no bound, MPI_Buffer_flush, detach answers
 * MPI_BUFFER_AUTOMATIC), a session's buffer used by a communicator of that session
 * (MPI_Session_iflush_buffer), MPI_Buffer_iflush, a cancelled MPI_Ibsend on the communicator's
 * space, and bad arguments. Every message is checked. */
#include "common.h"

#define BIG (1 << 20) /* past the eager size: the copy stays in flight until received */

static void fill(int *v, int n, int seed)
{
    for (int i = 0; i < n; ++i) v[i] = seed * 7919 + i;
}

static void recv_check(MPI_Comm comm, int seed, const char *what)
{
    const int n = BIG / (int)sizeof(int);
    int *v = malloc(BIG);
    MPI_OK(MPI_Recv(v, n, MPI_INT, 0, seed, comm, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; ++i)
        CHECK(v[i] == seed * 7919 + i, "%s: element %d is %d, %d was due", what, i, v[i], seed * 7919 + i);
    free(v);
}

static int class_of(int rc)
{
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "bsend_buffers");
    CHECK(t_size >= 2, "needs 2 ranks or more, got %d", t_size);
    const int n = BIG / (int)sizeof(int);
    int *data = malloc(BIG);
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* 1. The communicator's own buffer: room for one message. */
    const int room = BIG + MPI_BSEND_OVERHEAD;
    char *cbuf = malloc((size_t)room);
    if (t_rank == 0) {
        MPI_OK(MPI_Comm_attach_buffer(c, cbuf, room));
        CHECK(class_of(MPI_Comm_attach_buffer(c, cbuf, room)) == MPI_ERR_BUFFER, "a second attach was not refused");
        fill(data, n, 1);
        /* The process has no buffer: a buffered send on MPI_COMM_WORLD has no space. */
        CHECK(class_of(MPI_Bsend(data, n, MPI_INT, 1, 1, MPI_COMM_WORLD)) == MPI_ERR_BUFFER,
              "a buffered send on a communicator without any attached buffer did not fail");
        MPI_OK(MPI_Bsend(data, n, MPI_INT, 1, 1, c));
        fill(data, n, -1); /* the message was copied: the data may change */
        CHECK(class_of(MPI_Bsend(data, n, MPI_INT, 1, 2, c)) == MPI_ERR_BUFFER,
              "a second message that does not fit the communicator's buffer did not fail");
        MPI_Request flush;
        int done = 1;
        MPI_OK(MPI_Comm_iflush_buffer(c, &flush));
        MPI_OK(MPI_Test(&flush, &done, MPI_STATUS_IGNORE));
        CHECK(!done, "the flush completed before the receiver took the message");
        MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD)); /* the receiver may go on */
        MPI_OK(MPI_Wait(&flush, MPI_STATUS_IGNORE));
        /* A buffered send on the communicator's space cancelled before it is received: its copy
         * is recalled where the transport can (then the space is free at once), else it goes. */
        MPI_Request ib;
        int cancelled = 0;
        fill(data, n, 3);
        MPI_OK(MPI_Ibsend(data, n, MPI_INT, 1, 3, c, &ib));
        MPI_OK(MPI_Cancel(&ib));
        MPI_Status st;
        MPI_OK(MPI_Wait(&ib, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        MPI_OK(MPI_Send(&cancelled, 1, MPI_INT, 1, 98, MPI_COMM_WORLD));
        if (cancelled) { /* the space is free again: the next message fits without waiting */
            fill(data, n, 4);
            MPI_OK(MPI_Bsend(data, n, MPI_INT, 1, 4, c));
        }
        void *addr = NULL;
        int size = 0;
        MPI_OK(MPI_Comm_detach_buffer(c, &addr, &size));
        CHECK(addr == cbuf && size == room, "detach gave %p and %d, %p and %d were attached", addr, size, (void *)cbuf,
              room);
    } else if (t_rank == 1) {
        MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        recv_check(c, 1, "the communicator's buffered message");
        int cancelled = 0;
        MPI_OK(MPI_Recv(&cancelled, 1, MPI_INT, 0, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        recv_check(c, cancelled ? 4 : 3, cancelled ? "the message after a cancelled one" : "a message not recalled");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 2. MPI_BUFFER_AUTOMATIC on the process: no bound. */
    if (t_rank == 0) {
        MPI_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
        for (int k = 0; k < 3; ++k) {
            fill(data, n, 10 + k);
            MPI_OK(MPI_Bsend(data, n, MPI_INT, 1, 10 + k, MPI_COMM_WORLD));
        }
        MPI_OK(MPI_Buffer_flush());
        void *addr = NULL;
        int size = -1;
        MPI_OK(MPI_Buffer_detach(&addr, &size));
        CHECK(addr == MPI_BUFFER_AUTOMATIC, "detach gave %p, not MPI_BUFFER_AUTOMATIC", addr);
    } else if (t_rank == 1) {
        for (int k = 0; k < 3; ++k) recv_check(MPI_COMM_WORLD, 10 + k, "an automatic buffer's message");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 3. A session's buffer, used by a communicator made from that session. */
    MPI_Session s;
    MPI_Group g;
    MPI_Comm sc;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_OK(MPI_Comm_create_from_group(g, "weft.test.bsend_buffers", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
    MPI_OK(MPI_Group_free(&g));
    char *sbuf = malloc((size_t)room);
    if (t_rank == 0) {
        MPI_OK(MPI_Session_attach_buffer(s, sbuf, room));
        fill(data, n, 20);
        MPI_OK(MPI_Bsend(data, n, MPI_INT, 1, 20, sc));
        CHECK(class_of(MPI_Bsend(data, n, MPI_INT, 1, 21, MPI_COMM_WORLD)) == MPI_ERR_BUFFER,
              "a world communicator used the session's buffer");
        MPI_Request flush;
        MPI_OK(MPI_Session_iflush_buffer(s, &flush));
        MPI_OK(MPI_Wait(&flush, MPI_STATUS_IGNORE));
        void *addr = NULL;
        int size = 0;
        MPI_OK(MPI_Session_detach_buffer(s, &addr, &size));
        CHECK(addr == sbuf && size == room, "session detach gave %p and %d", addr, size);
    } else if (t_rank == 1) {
        recv_check(sc, 20, "the session's buffered message");
    }
    MPI_OK(MPI_Barrier(sc));

    /* 4. MPI_Buffer_iflush with nothing in flight completes at once; bad arguments. */
    MPI_Request r;
    int done = 0;
    MPI_OK(MPI_Buffer_iflush(&r));
    MPI_OK(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
    CHECK(done, "a flush with no buffered message did not complete at once");
    CHECK(class_of(MPI_Buffer_iflush(NULL)) == MPI_ERR_ARG, "a NULL request was not refused");
    CHECK(class_of(MPI_Comm_attach_buffer(MPI_COMM_NULL, cbuf, room)) == MPI_ERR_COMM,
          "MPI_COMM_NULL was not refused");
    CHECK(class_of(MPI_Comm_attach_buffer(c, cbuf, -1)) == MPI_ERR_ARG, "a negative size was not refused");

    MPI_OK(MPI_Comm_free(&sc));
    MPI_OK(MPI_Session_finalize(&s));
    MPI_OK(MPI_Comm_free(&c));
    free(sbuf);
    free(cbuf);
    free(data);
    if (t_rank == 0) printf("bsend_buffers: PASS (%d ranks)\n", t_size);
    MPI_Finalize();
    return 0;
}
