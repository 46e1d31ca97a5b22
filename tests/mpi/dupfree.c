/* Context-id reuse: 10,000 Comm_dup / Comm_free cycles (alternating the
 * parent between MPI_COMM_WORLD and a long-lived dup) must not exhaust the
 * context ids; every 1000th communicator carries a ring message and an
 * Allreduce, checked. Then 100 communicators live at once: a message with
 * the same tag on each, posted in one order and received in the reverse
 * order, so any cross-matching between them shows up as wrong data.
 * Works at any size, including 1. */
#include "common.h"

#define CYCLES 10000
#define LIVE 100

static void ring_check(MPI_Comm c, int salt, const char *what)
{
    int r, n, out[2], in[2] = {-1, -1};
    MPI_Status st;
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK_EQ_INT(r, t_rank, "rank in a dup of world");
    CHECK_EQ_INT(n, t_size, "size of a dup of world");
    int right = (r + 1) % n, left = (r + n - 1) % n;
    out[0] = salt;
    out[1] = r;
    MPI_OK(MPI_Sendrecv(out, 2, MPI_INT, right, 3, in, 2, MPI_INT, left, 3, c, &st));
    if (in[0] != salt || in[1] != left)
        FAIL("%s: ring: expected {%d,%d}, got {%d,%d}", what, salt, left, in[0], in[1]);
    int v = salt + r, sum = -1;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    if (sum != salt * n + n * (n - 1) / 2)
        FAIL("%s: Allreduce expected %d, got %d", what, salt * n + n * (n - 1) / 2, sum);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "dupfree");
    MPI_Comm base = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));

    for (int i = 0; i < CYCLES; i++) {
        MPI_Comm c = MPI_COMM_NULL;
        MPI_OK(MPI_Comm_dup(i % 2 ? base : MPI_COMM_WORLD, &c));
        if (c == MPI_COMM_NULL)
            FAIL("Comm_dup number %d returned MPI_COMM_NULL", i);
        if (i % 1000 == 999) {
            char what[64];
            snprintf(what, sizeof what, "communicator %d", i);
            ring_check(c, i, what);
        }
        MPI_OK(MPI_Comm_free(&c));
        if (c != MPI_COMM_NULL)
            FAIL("Comm_free number %d did not set MPI_COMM_NULL", i);
    }
    ring_check(base, 1, "base after the cycles");

    /* 100 live communicators */
    {
        MPI_Comm cs[LIVE];
        MPI_Request rq[LIVE];
        int out[LIVE], in[LIVE];
        int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
        for (int i = 0; i < LIVE; i++)
            MPI_OK(MPI_Comm_dup(i % 3 == 0 ? MPI_COMM_WORLD : i % 3 == 1 ? base : cs[i - 1],
                                &cs[i]));
        for (int i = 0; i < LIVE; i++) {
            out[i] = i * 1000 + t_rank;
            MPI_OK(MPI_Isend(&out[i], 1, MPI_INT, right, 9, cs[i], &rq[i]));
        }
        for (int i = LIVE - 1; i >= 0; i--) {
            MPI_Status st;
            in[i] = -1;
            MPI_OK(MPI_Recv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, cs[i], &st));
            if (in[i] != i * 1000 + left || st.MPI_SOURCE != left || st.MPI_TAG != 9)
                FAIL("live communicator %d: expected %d from %d tag 9, got %d from %d tag %d", i,
                     i * 1000 + left, left, in[i], st.MPI_SOURCE, st.MPI_TAG);
        }
        MPI_Status sts[LIVE];
        MPI_OK(MPI_Waitall(LIVE, rq, sts));
        for (int i = 0; i < LIVE; i += 10)
            ring_check(cs[i], 50000 + i, "live communicator");
        /* free in an interleaved order */
        for (int i = 0; i < LIVE; i += 2)
            MPI_OK(MPI_Comm_free(&cs[i]));
        for (int i = 1; i < LIVE; i += 2)
            ring_check(cs[i], 60000 + i, "live communicator after freeing the even ones");
        for (int i = 1; i < LIVE; i += 2)
            MPI_OK(MPI_Comm_free(&cs[i]));
        for (int i = 0; i < LIVE; i++)
            CHECK(cs[i] == MPI_COMM_NULL, "communicator %d not MPI_COMM_NULL after free", i);
    }
    /* still possible to create more afterwards */
    for (int i = 0; i < 1000; i++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(base, &c));
        if (i == 999)
            ring_check(c, 77, "dup after the live set");
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Comm_free(&base));
    t_done();
    return 0;
}
