/* Send modes and completion functions.
 *   Ssend / Issend (Issend must not complete before the receive is posted),
 *   Rsend / Irsend (receiver pre-posts, barrier, then the ready send),
 *   Bsend / Ibsend through an attached buffer sized with MPI_BSEND_OVERHEAD,
 *   Bsend of large messages into a buffer with room for exactly one round of them, round
 *   after round (each round received before the next: the space of copies already received
 *   must be free again even when the sender has not yet seen their sends complete),
 *   Test / Testall / Testany / Testsome / Waitany / Waitsome /
 *   Request_get_status over request arrays that contain MPI_REQUEST_NULL,
 *   Cancel of an unmatched Irecv (Wait completes; a later message with the
 *   same envelope goes to a new receive).
 * Each rank sends to its right neighbour (itself at np 1). */
#include "common.h"

#define N 300
#define NB 8

static int right, left;

static void fill(int *b, int n, int src, int salt)
{
    for (int i = 0; i < n; i++)
        b[i] = src * 100000 + salt * 1000 + i;
}

static void check(const int *b, int n, int src, int salt, const char *what)
{
    for (int i = 0; i < n; i++)
        if (b[i] != src * 100000 + salt * 1000 + i)
            FAIL("%s: from %d index %d: expected %d, got %d", what, src, i,
                 src * 100000 + salt * 1000 + i, b[i]);
}

static void check_st(const MPI_Status *st, int src, int tag, int n, const char *what)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || cnt != n)
        FAIL("%s: status expected (src %d, tag %d, count %d), got (%d, %d, %d)", what, src, tag, n,
             st->MPI_SOURCE, st->MPI_TAG, cnt);
}

static int is_empty_status(const MPI_Status *st)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && cnt == 0;
}

static void test_sync(void)
{
    int sb[N], rb[N];
    MPI_Request r, s;
    MPI_Status st;
    int flag = 1;

    /* Ssend (receive pre-posted so a self-send works at np 1) */
    fill(sb, N, t_rank, 1);
    MPI_OK(MPI_Irecv(rb, N, MPI_INT, left, 10, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Ssend(sb, N, MPI_INT, right, 10, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    check_st(&st, left, 10, N, "Ssend");
    check(rb, N, left, 1, "Ssend");

    /* Issend cannot complete before the matching receive exists */
    fill(sb, N, t_rank, 2);
    MPI_OK(MPI_Issend(sb, N, MPI_INT, right, 11, MPI_COMM_WORLD, &s));
    for (int i = 0; i < 50; i++) {
        MPI_OK(MPI_Test(&s, &flag, &st));
        if (flag)
            FAIL("Issend completed before the receiver posted a receive (test %d)", i);
    }
    MPI_OK(MPI_Request_get_status(s, &flag, &st));
    CHECK(!flag, "Request_get_status reports an unmatched Issend as complete");
    CHECK(s != MPI_REQUEST_NULL, "Request_get_status freed the request");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Irecv(rb, N, MPI_INT, left, 11, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r, &st));
    check_st(&st, left, 11, N, "Issend");
    check(rb, N, left, 2, "Issend");
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_ready(void)
{
    int sb[N], rb[N], sb2[N], rb2[N];
    MPI_Request r[2], s;
    MPI_Status st[2];

    fill(sb, N, t_rank, 3);
    fill(sb2, N, t_rank, 4);
    MPI_OK(MPI_Irecv(rb, N, MPI_INT, left, 12, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Irecv(rb2, N, MPI_INT, left, 13, MPI_COMM_WORLD, &r[1]));
    MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted now */
    MPI_OK(MPI_Rsend(sb, N, MPI_INT, right, 12, MPI_COMM_WORLD));
    MPI_OK(MPI_Irsend(sb2, N, MPI_INT, right, 13, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Waitall(2, r, st));
    check_st(&st[0], left, 12, N, "Rsend");
    check_st(&st[1], left, 13, N, "Irsend");
    check(rb, N, left, 3, "Rsend");
    check(rb2, N, left, 4, "Irsend");
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_buffered(void)
{
    const int sizes[NB] = {0, 1, 10, 100, 1000, 5000, 20000, 3};
    int total = 0, *sb[NB], *rb;
    char *abuf, *dbuf = NULL;
    int dsize = 0;
    MPI_Request ib[2];

    for (int k = 0; k < NB; k++)
        total += sizes[k] * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    total += 2 * (100 * (int)sizeof(int) + MPI_BSEND_OVERHEAD); /* Ibsend */
    abuf = malloc((size_t)total);
    rb = malloc(sizeof(int) * 20000);
    CHECK(abuf && rb, "out of memory");
    MPI_OK(MPI_Buffer_attach(abuf, total));

    /* all buffered sends happen before anybody posts a receive */
    for (int k = 0; k < NB; k++) {
        sb[k] = malloc(sizeof(int) * (size_t)(sizes[k] + 1));
        CHECK(sb[k], "out of memory");
        fill(sb[k], sizes[k], t_rank, 20 + k);
        MPI_OK(MPI_Bsend(sb[k], sizes[k], MPI_INT, right, 30 + k, MPI_COMM_WORLD));
        fill(sb[k], sizes[k], -1, 0); /* the send buffer is reusable at once */
    }
    {
        int ibs[2][100];
        fill(ibs[0], 100, t_rank, 40);
        fill(ibs[1], 100, t_rank, 41);
        MPI_OK(MPI_Ibsend(ibs[0], 100, MPI_INT, right, 40, MPI_COMM_WORLD, &ib[0]));
        MPI_OK(MPI_Ibsend(ibs[1], 100, MPI_INT, right, 41, MPI_COMM_WORLD, &ib[1]));
        MPI_OK(MPI_Waitall(2, ib, MPI_STATUSES_IGNORE)); /* local completion */
        fill(ibs[0], 100, -1, 0);
        fill(ibs[1], 100, -1, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* receive in reverse order of sending */
    for (int k = 41; k >= 40; k--) {
        MPI_Status st;
        MPI_OK(MPI_Recv(rb, 100, MPI_INT, left, k, MPI_COMM_WORLD, &st));
        check_st(&st, left, k, 100, "Ibsend");
        check(rb, 100, left, k, "Ibsend");
    }
    for (int k = NB - 1; k >= 0; k--) {
        MPI_Status st;
        MPI_OK(MPI_Recv(rb, 20000, MPI_INT, left, 30 + k, MPI_COMM_WORLD, &st));
        check_st(&st, left, 30 + k, sizes[k], "Bsend");
        check(rb, sizes[k], left, 20 + k, "Bsend");
    }
    /* detach waits for buffered messages to be delivered */
    MPI_OK(MPI_Buffer_detach(&dbuf, &dsize));
    CHECK(dbuf == abuf, "Buffer_detach returned %p, attached %p", (void *)dbuf, (void *)abuf);
    CHECK_EQ_INT(dsize, total, "Buffer_detach size");
    for (int k = 0; k < NB; k++)
        free(sb[k]);
    free(abuf);
    free(rb);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_buffered_reuse(void)
{
    enum { BIG = 256 * 1024, PER_ROUND = 2, ROUNDS = 20 };
    const int bytes = PER_ROUND * (BIG * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *abuf = malloc((size_t)bytes), *dbuf;
    int *sb = malloc(sizeof(int) * BIG), *rb = malloc(sizeof(int) * BIG), dsize;
    CHECK(abuf && sb && rb, "out of memory");
    MPI_OK(MPI_Buffer_attach(abuf, bytes));
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < PER_ROUND; k++) {
            fill(sb, BIG, t_rank, (round * PER_ROUND + k) % 50);
            MPI_OK(MPI_Bsend(sb, BIG, MPI_INT, right, 60 + k, MPI_COMM_WORLD));
        }
        for (int k = 0; k < PER_ROUND; k++) {
            MPI_OK(MPI_Recv(rb, BIG, MPI_INT, left, 60 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check(rb, BIG, left, (round * PER_ROUND + k) % 50, "Bsend reusing the attached space");
        }
        MPI_Barrier(MPI_COMM_WORLD); /* every copy of this round has been received */
    }
    MPI_OK(MPI_Buffer_detach(&dbuf, &dsize));
    free(abuf);
    free(sb);
    free(rb);
}

static void test_null_sets(void)
{
    MPI_Request nul[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[3];
    int flag = 0, idx = 0, outc = 0, ind[3];

    MPI_OK(MPI_Test(&nul[0], &flag, &st));
    CHECK(flag && is_empty_status(&st), "Test(MPI_REQUEST_NULL)");
    flag = 0;
    MPI_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK(flag && is_empty_status(&st), "Request_get_status(MPI_REQUEST_NULL)");
    MPI_OK(MPI_Wait(&nul[0], &st));
    CHECK(is_empty_status(&st), "Wait(MPI_REQUEST_NULL) status");
    flag = 0;
    MPI_OK(MPI_Testall(3, nul, &flag, sts));
    CHECK(flag, "Testall on null requests: flag false");
    MPI_OK(MPI_Waitall(3, nul, sts));
    flag = 0;
    MPI_OK(MPI_Testany(3, nul, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany on null requests: flag %d index %d", flag, idx);
    MPI_OK(MPI_Waitany(3, nul, &idx, &st));
    CHECK_EQ_INT(idx, MPI_UNDEFINED, "Waitany on null requests: index");
    MPI_OK(MPI_Testsome(3, nul, &outc, ind, sts));
    CHECK_EQ_INT(outc, MPI_UNDEFINED, "Testsome on null requests: outcount");
    MPI_OK(MPI_Waitsome(3, nul, &outc, ind, sts));
    CHECK_EQ_INT(outc, MPI_UNDEFINED, "Waitsome on null requests: outcount");
    /* count 0 */
    MPI_OK(MPI_Waitall(0, nul, sts));
    MPI_OK(MPI_Waitany(0, nul, &idx, &st));
    CHECK_EQ_INT(idx, MPI_UNDEFINED, "Waitany with count 0");
}

/* Post a mixed set: [NULL, recv tag a, NULL, recv tag b, send, send, NULL, recv tag c]
 * and complete it with the function chosen by how. */
#define NSET 8
static void test_mixed(int how)
{
    static const int rtag[3] = {50, 51, 52};
    int rbuf[3][N], sbuf[3][N];
    MPI_Request rq[NSET];
    MPI_Status sts[NSET];
    int seen[NSET] = {0};
    const int ridx[3] = {1, 3, 7};
    const int sidx[2] = {4, 5};
    int left_to_do = 5;
    char what[64];

    snprintf(what, sizeof what, "mixed set (method %d)", how);
    for (int j = 0; j < NSET; j++)
        rq[j] = MPI_REQUEST_NULL;
    for (int j = 0; j < 3; j++)
        MPI_OK(MPI_Irecv(rbuf[j], N, MPI_INT, left, rtag[j], MPI_COMM_WORLD, &rq[ridx[j]]));
    /* sends: two in the set, the third (tag 52) blocking after the set is built */
    for (int j = 0; j < 3; j++)
        fill(sbuf[j], N, t_rank, 60 + j + how * 3);
    MPI_OK(MPI_Isend(sbuf[1], N, MPI_INT, right, rtag[1], MPI_COMM_WORLD, &rq[sidx[0]]));
    MPI_OK(MPI_Isend(sbuf[0], N, MPI_INT, right, rtag[0], MPI_COMM_WORLD, &rq[sidx[1]]));
    MPI_OK(MPI_Send(sbuf[2], N, MPI_INT, right, rtag[2], MPI_COMM_WORLD));

    while (left_to_do > 0) {
        int idx = -1, flag = 0, outc = 0, ind[NSET];
        MPI_Status st;
        switch (how) {
        case 0: /* Waitany */
            MPI_OK(MPI_Waitany(NSET, rq, &idx, &st));
            CHECK(idx >= 0 && idx < NSET, "Waitany index %d", idx);
            ind[0] = idx;
            sts[idx] = st;
            outc = 1;
            break;
        case 1: /* Testany */
            MPI_OK(MPI_Testany(NSET, rq, &idx, &flag, &st));
            if (!flag) {
                CHECK_EQ_INT(idx, MPI_UNDEFINED, "Testany index without completion");
                continue;
            }
            CHECK(idx >= 0 && idx < NSET, "Testany index %d", idx);
            ind[0] = idx;
            sts[idx] = st;
            outc = 1;
            break;
        case 2: { /* Waitsome */
            MPI_Status s2[NSET];
            MPI_OK(MPI_Waitsome(NSET, rq, &outc, ind, s2));
            CHECK(outc >= 1 && outc <= left_to_do, "Waitsome outcount %d", outc);
            for (int k = 0; k < outc; k++)
                sts[ind[k]] = s2[k];
            break;
        }
        case 3: { /* Testsome */
            MPI_Status s2[NSET];
            MPI_OK(MPI_Testsome(NSET, rq, &outc, ind, s2));
            CHECK(outc >= 0 && outc <= left_to_do, "Testsome outcount %d", outc);
            for (int k = 0; k < outc; k++)
                sts[ind[k]] = s2[k];
            break;
        }
        default: { /* Testall, then Request_get_status inspection */
            for (int j = 0; j < NSET; j++) {
                if (rq[j] != MPI_REQUEST_NULL) {
                    MPI_Request keep = rq[j];
                    MPI_OK(MPI_Request_get_status(rq[j], &flag, &st));
                    CHECK(rq[j] == keep, "Request_get_status changed the handle");
                }
            }
            MPI_OK(MPI_Testall(NSET, rq, &flag, sts));
            if (!flag)
                continue;
            outc = 0;
            for (int j = 0; j < NSET; j++)
                if (!seen[j] && (j == 1 || j == 3 || j == 4 || j == 5 || j == 7))
                    ind[outc++] = j;
            break;
        }
        }
        for (int k = 0; k < outc; k++) {
            int j = ind[k];
            CHECK(j == 1 || j == 3 || j == 4 || j == 5 || j == 7,
                  "%s: completion reported for index %d which holds MPI_REQUEST_NULL", what, j);
            CHECK(!seen[j], "%s: index %d reported twice", what, j);
            CHECK(rq[j] == MPI_REQUEST_NULL, "%s: completed request %d not freed", what, j);
            seen[j] = 1;
            left_to_do--;
        }
    }
    for (int j = 0; j < 3; j++) {
        check_st(&sts[ridx[j]], left, rtag[j], N, what);
        check(rbuf[j], N, left, 60 + j + how * 3, what);
    }
    for (int j = 0; j < NSET; j++)
        CHECK(rq[j] == MPI_REQUEST_NULL, "%s: request %d still active", what, j);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_cancel(void)
{
    int rb[N], sb[N];
    MPI_Request r;
    MPI_Status st;

    /* an Irecv nobody matches yet, cancelled */
    for (int i = 0; i < N; i++)
        rb[i] = -7;
    MPI_OK(MPI_Irecv(rb, N, MPI_INT, left, 70, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "Wait after Cancel did not free the request");
    for (int i = 0; i < N; i++)
        if (rb[i] != -7)
            FAIL("cancelled receive wrote into its buffer (index %d: %d)", i, rb[i]);
    /* an ANY_SOURCE/ANY_TAG receive cancelled, then tested to completion */
    {
        int flag = 0, x = 0;
        MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Cancel(&r));
        while (!flag)
            MPI_OK(MPI_Test(&r, &flag, &st));
        CHECK(r == MPI_REQUEST_NULL, "Test after Cancel did not free the request");
    }
    MPI_Barrier(MPI_COMM_WORLD); /* nobody sends before every cancel completed */

    /* the message with the cancelled envelope goes to a new receive */
    fill(sb, N, t_rank, 71);
    MPI_OK(MPI_Irecv(rb, N, MPI_INT, left, 70, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Send(sb, N, MPI_INT, right, 70, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    check_st(&st, left, 70, N, "receive after cancel");
    check(rb, N, left, 71, "receive after cancel");
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "modes");
    right = (t_rank + 1) % t_size;
    left = (t_rank + t_size - 1) % t_size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_sync();
    test_ready();
    test_buffered();
    test_buffered_reuse();
    test_null_sets();
    for (int how = 0; how < 5; how++)
        test_mixed(how);
    test_cancel();
    t_done();
    return 0;
}
