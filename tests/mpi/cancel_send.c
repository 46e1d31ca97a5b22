/* MPI_Cancel of sends. Each rank sends to its right neighbour (itself at np 1).
 *   - An unmatched Isend, Issend, Ibsend, Send_init or Bsend_init (eager and large
 *     messages) is cancelled: MPI_Wait returns, MPI_Test_cancelled says so, and the
 *     receiver's next receive with that envelope gets the next message instead.
 *   - A cancelled Ibsend frees its space in the attached buffer (which holds one
 *     message): a second Ibsend of the same size fits.
 *   - A cancelled persistent send can be started again, and that message arrives.
 *   - A send the receiver has already matched is not cancelled, and its data arrives.
 * Over UCX (WEFT_PT2PT=ucx) a send cannot be recalled: cancellation may then report
 * false, and the message is received instead; only small messages of the modes that
 * complete without a receive are tried there. */
#include "common.h"

enum { ISEND, ISSEND, IBSEND, SEND_INIT, SSEND_INIT, BSEND_INIT, MODES };
static const char *mode_name[MODES] = {"Isend", "Issend", "Ibsend", "Send_init", "Ssend_init", "Bsend_init"};
static const int sizes[] = {1, 100, 10000, 1000000};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define CTRL_TAG 7

static int right, left, over_ucx;

static int must_cancel(void) { return !over_ucx; }

static void start_send(int mode, unsigned char *buf, int n, int tag, MPI_Request *req)
{
    switch (mode) {
    case ISEND: MPI_OK(MPI_Isend(buf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, req)); break;
    case ISSEND: MPI_OK(MPI_Issend(buf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, req)); break;
    case IBSEND: MPI_OK(MPI_Ibsend(buf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, req)); break;
    case SEND_INIT: MPI_OK(MPI_Send_init(buf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, req)); break;
    case SSEND_INIT: MPI_OK(MPI_Ssend_init(buf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, req)); break;
    case BSEND_INIT: MPI_OK(MPI_Bsend_init(buf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, req)); break;
    }
    if (mode >= SEND_INIT) MPI_OK(MPI_Start(req));
}

/* One unmatched send cancelled, then the next message with the same envelope. */
static void unmatched(int mode, int si)
{
    const int n = sizes[si];
    const int tag = 100 + mode * 10 + si;
    const int persistent = mode >= SEND_INIT;
    const int buffered = mode == IBSEND || mode == BSEND_INIT;
    unsigned char *first = malloc((size_t)n), *next = malloc((size_t)n), *in = malloc((size_t)n);
    char *bbuf = NULL;
    if (buffered) {
        /* Room for one message (two over UCX, where the first may stay). */
        int bsize = (n + MPI_BSEND_OVERHEAD) * (over_ucx ? 2 : 1);
        bbuf = malloc((size_t)bsize);
        MPI_OK(MPI_Buffer_attach(bbuf, bsize));
    }
    t_fill(first, (size_t)n, (uint32_t)t_rank, (uint32_t)tag, 1);
    MPI_Request req, next_req = MPI_REQUEST_NULL;
    MPI_Status st;
    start_send(mode, first, n, tag, &req);
    MPI_OK(MPI_Cancel(&req));
    MPI_OK(MPI_Wait(&req, &st));
    int cancelled = -1;
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    if (must_cancel())
        CHECK(cancelled, "%s of %d bytes: an unmatched send was not cancelled", mode_name[mode], n);
    CHECK(!persistent || req != MPI_REQUEST_NULL, "%s: the persistent request was freed by MPI_Wait", mode_name[mode]);

    /* The next message on the same envelope: the same persistent request started again. */
    t_fill(next, (size_t)n, (uint32_t)t_rank, (uint32_t)tag, 2);
    if (persistent) {
        memcpy(first, next, (size_t)n);
        MPI_OK(MPI_Start(&req));
        next_req = req;
    } else {
        start_send(mode, next, n, tag, &next_req);  /* an Ibsend here needs the space back */
    }
    MPI_Request ctrl;
    MPI_OK(MPI_Isend(&cancelled, 1, MPI_INT, right, CTRL_TAG, MPI_COMM_WORLD, &ctrl));

    int left_cancelled = -1;
    MPI_OK(MPI_Recv(&left_cancelled, 1, MPI_INT, left, CTRL_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (!left_cancelled) {
        MPI_OK(MPI_Recv(in, n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st));
        CHECK_PAT(in, n, (uint32_t)left, (uint32_t)tag, 1, "a send not cancelled");
    }
    memset(in, 0, (size_t)n);
    MPI_OK(MPI_Recv(in, n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st));
    CHECK_PAT(in, n, (uint32_t)left, (uint32_t)tag, 2, "the message after a cancelled one");
    int cnt = -1;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK_EQ_INT(cnt, n, "count of the next message");

    MPI_OK(MPI_Wait(&next_req, &st));
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(!cancelled, "%s: a send never cancelled reports cancelled", mode_name[mode]);
    MPI_OK(MPI_Wait(&ctrl, MPI_STATUS_IGNORE));
    if (persistent) MPI_OK(MPI_Request_free(&req));
    if (buffered) {
        void *b;
        int bs;
        MPI_OK(MPI_Buffer_detach(&b, &bs));
        free(bbuf);
    }
    free(first);
    free(next);
    free(in);
}

/* A send whose receive has matched it cannot be cancelled any more. */
static void matched(int n)
{
    const int tag = 50;
    unsigned char *out = malloc((size_t)n), *in = calloc(1, (size_t)n);
    t_fill(out, (size_t)n, (uint32_t)t_rank, 9, (uint32_t)n);
    MPI_Request rreq, sreq, ack_req;
    MPI_Status st;
    int ack = 1, got = 0;
    MPI_OK(MPI_Irecv(in, n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rreq));
    MPI_OK(MPI_Isend(out, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sreq));
    MPI_OK(MPI_Wait(&rreq, &st));
    CHECK_PAT(in, n, (uint32_t)left, 9, (uint32_t)n, "a matched message");
    /* Tell the sender its message arrived; learn that ours did. */
    MPI_OK(MPI_Isend(&ack, 1, MPI_INT, left, CTRL_TAG, MPI_COMM_WORLD, &ack_req));
    MPI_OK(MPI_Recv(&got, 1, MPI_INT, right, CTRL_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Cancel(&sreq));
    MPI_OK(MPI_Wait(&sreq, &st));
    int cancelled = -1;
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(!cancelled, "a send of %d bytes its receiver matched reports cancelled", n);
    MPI_OK(MPI_Wait(&ack_req, MPI_STATUS_IGNORE));
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "cancel_send");
    right = (t_rank + 1) % t_size;
    left = (t_rank + t_size - 1) % t_size;
    const char *path = getenv("WEFT_PT2PT");
    over_ucx = path && strcmp(path, "ucx") == 0;
    for (int mode = 0; mode < MODES; mode++) {
        if (over_ucx && (mode == ISSEND || mode == SSEND_INIT)) continue;  /* would wait for a receive */
        for (int si = 0; si < NSIZES; si++) {
            if (over_ucx && sizes[si] > 100) continue;  /* eager only: complete without a receive */
            unmatched(mode, si);
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    matched(4);
    matched(1000000);
    t_done();
    return 0;
}
