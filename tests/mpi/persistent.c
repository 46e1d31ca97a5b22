/* Persistent requests: Send_init / Ssend_init / Recv_init, each started
 * ITERS times, through Start (one by one) and Startall, with the send
 * buffers rewritten every iteration and the received data checked. Also:
 * Wait/Test on an inactive persistent request, persistent requests with
 * MPI_PROC_NULL, and Request_free on inactive persistent requests.
 * Each rank talks to its right neighbour (self at np 1). */
#include "common.h"

#define ITERS 100
#define NSMALL 37
#define NBIG (64 * 1024 + 5) /* beyond the usual eager limits */

static void fill_i(int *b, int n, int src, int it, int which)
{
    for (int i = 0; i < n; i++)
        b[i] = src * 1000000 + it * 1000 + which * 100 + i;
}

static void check_i(const int *b, int n, int src, int it, int which, const char *what)
{
    for (int i = 0; i < n; i++) {
        int e = src * 1000000 + it * 1000 + which * 100 + i;
        if (b[i] != e)
            FAIL("%s: iteration %d index %d (from %d): expected %d, got %d", what, it, i, src, e, b[i]);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "persistent");
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    int *s_small = malloc(sizeof(int) * NSMALL), *r_small = malloc(sizeof(int) * NSMALL);
    int *s_big = malloc(sizeof(int) * NBIG), *r_big = malloc(sizeof(int) * NBIG);
    int *s_sync = malloc(sizeof(int) * NSMALL), *r_sync = malloc(sizeof(int) * NSMALL);
    CHECK(s_small && r_small && s_big && r_big && s_sync && r_sync, "out of memory");

    /* recvs first in the array so Startall posts them before the sends */
    MPI_Request rq[6];
    MPI_OK(MPI_Recv_init(r_small, NSMALL, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Recv_init(r_big, NBIG, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Recv_init(r_sync, NSMALL, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[2]));
    MPI_OK(MPI_Send_init(s_small, NSMALL, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[3]));
    MPI_OK(MPI_Send_init(s_big, NBIG, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[4]));
    MPI_OK(MPI_Ssend_init(s_sync, NSMALL, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[5]));
    for (int j = 0; j < 6; j++)
        CHECK(rq[j] != MPI_REQUEST_NULL, "persistent init returned MPI_REQUEST_NULL (%d)", j);

    /* Wait and Test on inactive persistent requests return at once, empty status */
    {
        MPI_Status st;
        int flag = 0;
        MPI_Request keep = rq[0];
        MPI_OK(MPI_Wait(&rq[0], &st));
        CHECK(rq[0] == keep, "Wait on an inactive persistent request changed the handle");
        CHECK_EQ_INT(st.MPI_SOURCE, MPI_ANY_SOURCE, "empty status source");
        CHECK_EQ_INT(st.MPI_TAG, MPI_ANY_TAG, "empty status tag");
        MPI_OK(MPI_Test(&rq[3], &flag, &st));
        CHECK(flag, "Test on an inactive persistent request: flag false");
    }

    for (int it = 0; it < ITERS; it++) {
        MPI_Status st[6];
        int cnt = -1;
        fill_i(s_small, NSMALL, t_rank, it, 1);
        fill_i(s_big, NBIG, t_rank, it, 2);
        fill_i(s_sync, NSMALL, t_rank, it, 3);
        memset(r_small, 0xff, sizeof(int) * NSMALL);
        memset(r_big, 0xff, sizeof(int) * NBIG);
        memset(r_sync, 0xff, sizeof(int) * NSMALL);
        switch (it % 3) {
        case 0:
            MPI_OK(MPI_Startall(6, rq));
            break;
        case 1:
            for (int j = 0; j < 6; j++)
                MPI_OK(MPI_Start(&rq[j]));
            break;
        default:
            MPI_OK(MPI_Startall(3, rq));
            MPI_OK(MPI_Start(&rq[5]));
            MPI_OK(MPI_Startall(2, &rq[3]));
            break;
        }
        if (it % 2 == 0) {
            MPI_OK(MPI_Waitall(6, rq, st));
        } else {
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Testall(6, rq, &flag, st));
        }
        for (int j = 0; j < 6; j++)
            CHECK(rq[j] != MPI_REQUEST_NULL, "completion freed persistent request %d", j);
        check_i(r_small, NSMALL, left, it, 1, "persistent Send_init/Recv_init");
        check_i(r_big, NBIG, left, it, 2, "persistent Send_init/Recv_init (large)");
        check_i(r_sync, NSMALL, left, it, 3, "persistent Ssend_init");
        CHECK_EQ_INT(st[1].MPI_SOURCE, left, "persistent ANY_SOURCE status source");
        CHECK_EQ_INT(st[2].MPI_TAG, 3, "persistent ANY_TAG status tag");
        MPI_Get_count(&st[1], MPI_INT, &cnt);
        CHECK_EQ_INT(cnt, NBIG, "persistent large count");
    }

    /* free inactive persistent requests */
    for (int j = 0; j < 6; j++) {
        MPI_OK(MPI_Request_free(&rq[j]));
        CHECK(rq[j] == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL (%d)", j);
    }

    /* persistent requests to/from MPI_PROC_NULL */
    {
        MPI_Request p[2];
        MPI_Status st[2];
        int cnt = -1, v = 42;
        MPI_OK(MPI_Send_init(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p[0]));
        MPI_OK(MPI_Recv_init(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p[1]));
        for (int it = 0; it < 3; it++) {
            MPI_OK(MPI_Startall(2, p));
            MPI_OK(MPI_Waitall(2, p, st));
            CHECK_EQ_INT(st[1].MPI_SOURCE, MPI_PROC_NULL, "persistent PROC_NULL recv source");
            CHECK_EQ_INT(st[1].MPI_TAG, MPI_ANY_TAG, "persistent PROC_NULL recv tag");
            MPI_Get_count(&st[1], MPI_INT, &cnt);
            CHECK_EQ_INT(cnt, 0, "persistent PROC_NULL recv count");
            CHECK_EQ_INT(v, 42, "persistent PROC_NULL recv changed the buffer");
        }
        MPI_OK(MPI_Request_free(&p[0]));
        MPI_OK(MPI_Request_free(&p[1]));
    }

    /* a persistent request used once and freed never started */
    {
        MPI_Request p;
        MPI_OK(MPI_Recv_init(r_small, NSMALL, MPI_INT, left, 5, MPI_COMM_WORLD, &p));
        MPI_OK(MPI_Request_free(&p));
        CHECK(p == MPI_REQUEST_NULL, "Request_free of a never-started request");
    }

    free(s_small);
    free(r_small);
    free(s_big);
    free(r_big);
    free(s_sync);
    free(r_sync);
    t_done();
    return 0;
}
