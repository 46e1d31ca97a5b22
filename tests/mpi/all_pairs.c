/* Every rank exchanges with every rank (itself included):
 *   1. Isend/Irecv to/from all ranks at once, completed with one Waitall;
 *   2. pairwise Sendrecv over a shift schedule;
 *   3. pairwise Sendrecv_replace over a shift schedule.
 * Payload values depend on (src, dst, index); counts depend on (src, dst).
 * At np 1 every exchange is a self-exchange. */
#include "common.h"

static int val_int(int src, int dst, int i, int phase)
{
    return (int)((unsigned)src * 1000003u + (unsigned)dst * 7919u + (unsigned)i * 31u +
                 (unsigned)phase * 0x10001u);
}

static double val_dbl(int src, int dst, int i)
{
    return (double)src * 1e6 + (double)dst * 1e3 + (double)i * 0.5;
}

/* element count of the message src -> dst */
static int count_of(int src, int dst, int round)
{
    if (round == 0)
        return 0;
    if (round == 1)
        return 1 + 17 * src + 5 * dst;
    return 20000 + 131 * src + 71 * dst; /* ~80 KiB of ints: rendezvous */
}

static void check_ints(const int *buf, int n, int src, int dst, int phase, const char *what)
{
    for (int i = 0; i < n; i++) {
        int e = val_int(src, dst, i, phase);
        if (buf[i] != e)
            FAIL("%s: src %d dst %d index %d: expected %d, got %d", what, src, dst, i, e, buf[i]);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "all_pairs");
    const int np = t_size, me = t_rank;
    const int maxn = count_of(np, np, 2) + 8;
    int **sb = malloc(sizeof(int *) * (size_t)np);
    int **rb = malloc(sizeof(int *) * (size_t)np);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)np);
    MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t)np);
    CHECK(sb && rb && rq && st, "out of memory");
    for (int p = 0; p < np; p++) {
        sb[p] = malloc(sizeof(int) * (size_t)maxn);
        rb[p] = malloc(sizeof(int) * (size_t)maxn);
        CHECK(sb[p] && rb[p], "out of memory");
    }

    /* 1. all at once */
    for (int round = 0; round < 3; round++) {
        for (int p = 0; p < np; p++) {
            int n = count_of(p, me, round);
            for (int i = 0; i < maxn; i++)
                rb[p][i] = -1;
            MPI_Irecv(rb[p], n, MPI_INT, p, round, MPI_COMM_WORLD, &rq[p]);
        }
        for (int k = 0; k < np; k++) {
            int p = (me + k) % np; /* stagger the destinations */
            int n = count_of(me, p, round);
            for (int i = 0; i < n; i++)
                sb[p][i] = val_int(me, p, i, round);
            MPI_Isend(sb[p], n, MPI_INT, p, round, MPI_COMM_WORLD, &rq[np + p]);
        }
        MPI_OK(MPI_Waitall(2 * np, rq, st));
        for (int p = 0; p < np; p++) {
            int cnt = -1, n = count_of(p, me, round);
            CHECK(rq[p] == MPI_REQUEST_NULL && rq[np + p] == MPI_REQUEST_NULL,
                  "Waitall left a request non-null (peer %d)", p);
            MPI_Get_count(&st[p], MPI_INT, &cnt);
            CHECK_EQ_INT(cnt, n, "Irecv count");
            CHECK_EQ_INT(st[p].MPI_SOURCE, p, "Irecv status source");
            CHECK_EQ_INT(st[p].MPI_TAG, round, "Irecv status tag");
            check_ints(rb[p], n, p, me, round, "Isend/Irecv");
            if (rb[p][n] != -1)
                FAIL("Isend/Irecv from %d: element %d past the message overwritten (%d)", p, n, rb[p][n]);
        }
    }

    /* 2. Sendrecv, shift schedule: at step k send to me+k, receive from me-k */
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < np; k++) {
            int to = (me + k) % np, from = (me - k + np) % np;
            int ns = count_of(me, to, round), nr = count_of(from, me, round);
            MPI_Status s;
            int cnt = -1;
            for (int i = 0; i < ns; i++)
                sb[0][i] = val_int(me, to, i, 10 + round);
            for (int i = 0; i < maxn; i++)
                rb[0][i] = -1;
            /* receive buffer larger than the message: count must be exact */
            MPI_OK(MPI_Sendrecv(sb[0], ns, MPI_INT, to, 50 + k, rb[0], maxn, MPI_INT, from, 50 + k,
                                MPI_COMM_WORLD, &s));
            MPI_Get_count(&s, MPI_INT, &cnt);
            CHECK_EQ_INT(cnt, nr, "Sendrecv count");
            CHECK_EQ_INT(s.MPI_SOURCE, from, "Sendrecv status source");
            CHECK_EQ_INT(s.MPI_TAG, 50 + k, "Sendrecv status tag");
            check_ints(rb[0], nr, from, me, 10 + round, "Sendrecv");
            if (rb[0][nr] != -1)
                FAIL("Sendrecv from %d: element %d past the message overwritten", from, nr);
        }
    }

    /* 2b. Sendrecv with doubles */
    for (int k = 0; k < np; k++) {
        int to = (me + k) % np, from = (me - k + np) % np;
        int n = maxn / 2 - 4;
        double *ds = malloc(sizeof(double) * (size_t)n), *dr = malloc(sizeof(double) * (size_t)n);
        MPI_Status s;
        CHECK(ds && dr, "out of memory");
        for (int i = 0; i < n; i++) {
            ds[i] = val_dbl(me, to, i);
            dr[i] = -1.0;
        }
        MPI_OK(MPI_Sendrecv(ds, n, MPI_DOUBLE, to, 77, dr, n, MPI_DOUBLE, from, 77,
                            MPI_COMM_WORLD, &s));
        for (int i = 0; i < n; i++)
            if (dr[i] != val_dbl(from, me, i))
                FAIL("Sendrecv double from %d index %d: expected %g, got %g", from, i,
                     val_dbl(from, me, i), dr[i]);
        free(ds);
        free(dr);
        MPI_Barrier(MPI_COMM_WORLD); /* keep tag 77 rounds apart */
    }

    /* 3. Sendrecv_replace, same schedule, same count both ways */
    for (int round = 1; round < 3; round++) {
        for (int k = 0; k < np; k++) {
            int to = (me + k) % np, from = (me - k + np) % np;
            int n = count_of(0, 0, round);
            MPI_Status s;
            int cnt = -1;
            for (int i = 0; i < n; i++)
                sb[0][i] = val_int(me, to, i, 20 + round);
            sb[0][n] = 0x5A5A5A5A;
            MPI_OK(MPI_Sendrecv_replace(sb[0], n, MPI_INT, to, 90 + k, from, 90 + k,
                                        MPI_COMM_WORLD, &s));
            MPI_Get_count(&s, MPI_INT, &cnt);
            CHECK_EQ_INT(cnt, n, "Sendrecv_replace count");
            CHECK_EQ_INT(s.MPI_SOURCE, from, "Sendrecv_replace status source");
            check_ints(sb[0], n, from, me, 20 + round, "Sendrecv_replace");
            CHECK(sb[0][n] == 0x5A5A5A5A, "Sendrecv_replace wrote past the buffer");
        }
    }

    for (int p = 0; p < np; p++) {
        free(sb[p]);
        free(rb[p]);
    }
    free(sb);
    free(rb);
    free(rq);
    free(st);
    t_done();
    return 0;
}
