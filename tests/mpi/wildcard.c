/* Wildcard matching, MPI_PROC_NULL, non-overtaking order and zero-byte
 * messages.
 *   1. every rank (rank 0 included) sends NMSG messages to rank 0 with
 *      distinct tags and counts; rank 0 receives them with ANY_SOURCE +
 *      ANY_TAG and identifies each through the status (source, tag, count);
 *      then the same with ANY_SOURCE + specific tag, and specific source +
 *      ANY_TAG;
 *   2. MPI_PROC_NULL: Send/Isend/Recv/Irecv/Sendrecv semantics;
 *   3. ordering: ORDER_N messages with the same tag to the right neighbour,
 *      mixed small / large, received in order (specific and ANY_SOURCE);
 *   4. zero-byte messages with NULL buffers.
 * Works at any size; at np 1 every message is a self-message. */
#include "common.h"

#define NMSG 20
#define ORDER_N 200
#define BIG 70000

static int tag_of(int src, int k) { return 1000 + src * 64 + k; }
static int count_of(int src, int k) { return (src * 7 + k * 13) % 50; }

static void check_status(const MPI_Status *st, MPI_Datatype dt, int src, int tag, int count,
                         const char *what)
{
    int cnt = -1;
    MPI_Get_count(st, dt, &cnt);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || cnt != count)
        FAIL("%s: status expected (source %d, tag %d, count %d), got (%d, %d, %d)", what, src,
             tag, count, st->MPI_SOURCE, st->MPI_TAG, cnt);
}

static void phase_any(void)
{
    /* variant 0: ANY_SOURCE + ANY_TAG; variant 1: specific source + ANY_TAG */
    for (int variant = 0; variant < 2; variant++) {
        MPI_Request sreq[NMSG];
        int sbuf[NMSG][64];
        for (int k = 0; k < NMSG; k++) {
            for (int i = 0; i < count_of(t_rank, k); i++)
                sbuf[k][i] = t_rank * 100000 + k * 100 + i + variant;
            MPI_Isend(sbuf[k], count_of(t_rank, k), MPI_INT, 0, tag_of(t_rank, k), MPI_COMM_WORLD,
                      &sreq[k]);
        }
        if (t_rank == 0) {
            int *next = calloc((size_t)t_size, sizeof(int)); /* next k expected per source */
            CHECK(next, "out of memory");
            for (int m = 0; m < t_size * NMSG; m++) {
                int rbuf[64];
                MPI_Status st;
                int src, k, cnt = -1;
                if (variant == 0)
                    MPI_Recv(rbuf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                else
                    MPI_Recv(rbuf, 64, MPI_INT, m / NMSG, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                src = st.MPI_SOURCE;
                if (src < 0 || src >= t_size)
                    FAIL("variant %d: status source %d out of range", variant, src);
                if (variant == 1 && src != m / NMSG)
                    FAIL("variant %d: asked for source %d, status source %d", variant, m / NMSG, src);
                k = st.MPI_TAG - 1000 - src * 64;
                if (k < 0 || k >= NMSG)
                    FAIL("variant %d: unexpected tag %d from source %d", variant, st.MPI_TAG, src);
                /* messages from one source arrive in send order (non-overtaking) */
                if (k != next[src])
                    FAIL("variant %d: from source %d expected message %d (tag %d), got %d", variant,
                         src, next[src], tag_of(src, next[src]), k);
                next[src]++;
                MPI_Get_count(&st, MPI_INT, &cnt);
                CHECK_EQ_INT(cnt, count_of(src, k), "wildcard receive count");
                for (int i = 0; i < cnt; i++)
                    if (rbuf[i] != src * 100000 + k * 100 + i + variant)
                        FAIL("variant %d: source %d k %d index %d: expected %d, got %d", variant,
                             src, k, i, src * 100000 + k * 100 + i + variant, rbuf[i]);
            }
            for (int s = 0; s < t_size; s++)
                CHECK_EQ_INT(next[s], NMSG, "messages received per source");
            free(next);
        }
        MPI_OK(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* ANY_SOURCE with a specific tag: every rank sends tags T0 and T1 to rank 0;
 * rank 0 first drains all T1 with ANY_SOURCE, then all T0. */
static void phase_any_tag(void)
{
    MPI_Request sreq[2];
    int sval[2] = {t_rank * 10 + 0, t_rank * 10 + 1};
    MPI_Isend(&sval[0], 1, MPI_INT, 0, 500, MPI_COMM_WORLD, &sreq[0]);
    MPI_Isend(&sval[1], 1, MPI_INT, 0, 501, MPI_COMM_WORLD, &sreq[1]);
    if (t_rank == 0) {
        int *seen = calloc((size_t)t_size * 2, sizeof(int));
        CHECK(seen, "out of memory");
        for (int tagi = 1; tagi >= 0; tagi--) {
            for (int m = 0; m < t_size; m++) {
                int v = -1;
                MPI_Status st;
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 500 + tagi, MPI_COMM_WORLD, &st);
                if (st.MPI_TAG != 500 + tagi)
                    FAIL("ANY_SOURCE tag %d: status tag %d", 500 + tagi, st.MPI_TAG);
                if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= t_size)
                    FAIL("ANY_SOURCE: status source %d", st.MPI_SOURCE);
                if (v != st.MPI_SOURCE * 10 + tagi)
                    FAIL("ANY_SOURCE tag %d from %d: expected %d, got %d", 500 + tagi,
                         st.MPI_SOURCE, st.MPI_SOURCE * 10 + tagi, v);
                if (seen[st.MPI_SOURCE * 2 + tagi]++)
                    FAIL("ANY_SOURCE: duplicate from %d tag %d", st.MPI_SOURCE, 500 + tagi);
            }
        }
        free(seen);
    }
    MPI_OK(MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void phase_proc_null(void)
{
    int buf[4] = {1, 2, 3, 4};
    MPI_Status st;
    MPI_Request rq;
    int flag = 0;

    MPI_OK(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD));
    MPI_OK(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD));

    memset(&st, 0x77, sizeof st);
    MPI_OK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    check_status(&st, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Recv from MPI_PROC_NULL");
    CHECK(buf[0] == 1 && buf[3] == 4, "Recv from MPI_PROC_NULL modified the buffer");

    memset(&st, 0x77, sizeof st);
    MPI_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Wait(&rq, &st));
    CHECK(rq == MPI_REQUEST_NULL, "Wait did not free the request");
    check_status(&st, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Irecv from MPI_PROC_NULL");

    MPI_OK(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Test(&rq, &flag, &st));
    CHECK(flag, "Isend to MPI_PROC_NULL not complete at first Test");
    check_status(&st, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Isend to MPI_PROC_NULL");

    memset(&st, 0x77, sizeof st);
    MPI_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT, MPI_PROC_NULL, 2,
                        MPI_COMM_WORLD, &st));
    check_status(&st, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Sendrecv with MPI_PROC_NULL");

    /* shift with PROC_NULL at the ends (non-periodic chain) */
    {
        int right = t_rank + 1 < t_size ? t_rank + 1 : MPI_PROC_NULL;
        int left = t_rank > 0 ? t_rank - 1 : MPI_PROC_NULL;
        int out = 1000 + t_rank, in = -1;
        MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 9, &in, 1, MPI_INT, left, 9, MPI_COMM_WORLD,
                            &st));
        if (left == MPI_PROC_NULL) {
            check_status(&st, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, 0, "chain shift at rank 0");
            CHECK_EQ_INT(in, -1, "chain shift at rank 0: buffer changed");
        } else {
            check_status(&st, MPI_INT, left, 9, 1, "chain shift");
            CHECK_EQ_INT(in, 1000 + left, "chain shift value");
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void phase_order(void)
{
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    for (int variant = 0; variant < 2; variant++) {
        /* send side: all nonblocking, sizes alternate small and rendezvous */
        MPI_Request *rq = malloc(sizeof(MPI_Request) * ORDER_N);
        unsigned char **sb = malloc(sizeof(unsigned char *) * ORDER_N);
        unsigned char *rb = malloc(BIG + 16);
        CHECK(rq && sb && rb, "out of memory");
        for (int k = 0; k < ORDER_N; k++) {
            int n = (k % 10 == 3) ? BIG : 4 + k % 7;
            sb[k] = malloc((size_t)n);
            CHECK(sb[k], "out of memory");
            sb[k][0] = (unsigned char)k;
            sb[k][1] = (unsigned char)(k >> 8);
            t_fill(sb[k] + 2, (size_t)n - 2, (uint32_t)t_rank, (uint32_t)k, (uint32_t)variant);
            MPI_Isend(sb[k], n, MPI_BYTE, right, 42, MPI_COMM_WORLD, &rq[k]);
        }
        for (int k = 0; k < ORDER_N; k++) {
            MPI_Status st;
            int cnt = -1, got;
            int n = (k % 10 == 3) ? BIG : 4 + k % 7;
            MPI_Recv(rb, BIG + 16, MPI_BYTE, variant ? MPI_ANY_SOURCE : left,
                     variant ? MPI_ANY_TAG : 42, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            got = rb[0] | (rb[1] << 8);
            if (got != k)
                FAIL("order variant %d: expected message %d from %d, got message %d", variant, k,
                     left, got);
            check_status(&st, MPI_BYTE, left, 42, n, "ordered message");
            CHECK_PAT(rb + 2, n - 2, (uint32_t)left, (uint32_t)k, (uint32_t)variant,
                      "ordered message content");
        }
        MPI_OK(MPI_Waitall(ORDER_N, rq, MPI_STATUSES_IGNORE));
        for (int k = 0; k < ORDER_N; k++)
            free(sb[k]);
        free(sb);
        free(rq);
        free(rb);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void phase_zero(void)
{
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    MPI_Request rq[4];
    MPI_Status st[4];
    int dummy = 12345;
    /* NULL buffers with count 0, and a real buffer with count 0 */
    MPI_OK(MPI_Irecv(NULL, 0, MPI_INT, left, 60, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 61, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Isend(NULL, 0, MPI_INT, right, 60, MPI_COMM_WORLD, &rq[2]));
    MPI_OK(MPI_Isend(NULL, 0, MPI_DOUBLE, right, 61, MPI_COMM_WORLD, &rq[3]));
    MPI_OK(MPI_Waitall(4, rq, st));
    check_status(&st[0], MPI_INT, left, 60, 0, "zero-byte NULL buffer");
    check_status(&st[1], MPI_INT, left, 61, 0, "zero-byte into 1-int buffer");
    CHECK_EQ_INT(dummy, 12345, "zero-byte message modified the buffer");
    /* blocking, through ANY_TAG */
    {
        MPI_Status s;
        MPI_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, right, 62, NULL, 0, MPI_BYTE, left, MPI_ANY_TAG,
                            MPI_COMM_WORLD, &s));
        check_status(&s, MPI_BYTE, left, 62, 0, "zero-byte Sendrecv");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "wildcard");
    phase_any();
    phase_any_tag();
    phase_proc_null();
    phase_order();
    phase_zero();
    t_done();
    return 0;
}
