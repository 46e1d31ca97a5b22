/* Probe / Iprobe / Mprobe / Improbe / Mrecv / Imrecv.
 *   1. Probe and Iprobe (specific and ANY_SOURCE), then Recv exactly the
 *      probed size; probing does not consume the message;
 *   2. matched probes with concurrent senders: every rank sends NM messages
 *      to rank 0 with the same tag; rank 0 matches them with Mprobe/Improbe
 *      (ANY_SOURCE), keeps several matched handles, and receives them in
 *      reverse order with Mrecv/Imrecv: each received message must be the
 *      one its probe reported (source, size, header);
 *   3. MPI_PROC_NULL: Mprobe/Improbe give MPI_MESSAGE_NO_PROC, Mrecv/Imrecv
 *      of it complete at once with an empty PROC_NULL status.
 * Works at any size (self-messages at np 1). */
#include "common.h"

#define NPROBE 30
#define NM 12

static int size_of(int src, int k) { return (k % 5 == 4) ? 100000 + src * 8 + k : src * 3 + k * 11; }

static void check_msg(const unsigned char *b, int n, int src, int k, int tagv, const char *what)
{
    CHECK(n >= 0, "negative count");
    if (n != size_of(src, k))
        FAIL("%s: message (src %d, k %d): expected %d bytes, got %d", what, src, k, size_of(src, k), n);
    CHECK_PAT(b, n, (uint32_t)src, (uint32_t)k, (uint32_t)tagv, what);
}

static void phase_probe(void)
{
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    MPI_Request *rq = malloc(sizeof(MPI_Request) * NPROBE);
    unsigned char **sb = malloc(sizeof(unsigned char *) * NPROBE);
    CHECK(rq && sb, "out of memory");
    for (int k = 0; k < NPROBE; k++) {
        int n = size_of(t_rank, k);
        sb[k] = malloc((size_t)n + 1);
        CHECK(sb[k], "out of memory");
        t_fill(sb[k], (size_t)n, (uint32_t)t_rank, (uint32_t)k, 1);
        MPI_Isend(sb[k], n, MPI_BYTE, right, 100 + k, MPI_COMM_WORLD, &rq[k]);
    }
    for (int k = 0; k < NPROBE; k++) {
        MPI_Status st, st2;
        int cnt = -1, cnt2 = -1, flag = 0;
        unsigned char *rb;
        switch (k % 3) {
        case 0:
            MPI_OK(MPI_Probe(left, 100 + k, MPI_COMM_WORLD, &st));
            break;
        case 1:
            MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            break;
        default:
            while (!flag)
                MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 100 + k, MPI_COMM_WORLD, &flag, &st));
            break;
        }
        CHECK_EQ_INT(st.MPI_SOURCE, left, "probe status source");
        CHECK_EQ_INT(st.MPI_TAG, 100 + k, "probe status tag");
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK_EQ_INT(cnt, size_of(left, k), "probed size");
        /* probing again finds the same message */
        flag = 0;
        MPI_OK(MPI_Iprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st2));
        CHECK(flag, "second Iprobe of an already probed message found nothing (k %d)", k);
        MPI_Get_count(&st2, MPI_BYTE, &cnt2);
        CHECK(st2.MPI_TAG == 100 + k && cnt2 == cnt, "second probe saw tag %d count %d, expected %d %d",
              st2.MPI_TAG, cnt2, 100 + k, cnt);
        rb = malloc((size_t)cnt + 1);
        CHECK(rb, "out of memory");
        MPI_OK(MPI_Recv(rb, cnt, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
        MPI_Get_count(&st2, MPI_BYTE, &cnt2);
        CHECK_EQ_INT(cnt2, cnt, "received size after probe");
        check_msg(rb, cnt2, left, k, 1, "Probe+Recv");
        free(rb);
    }
    /* nothing left: Iprobe for an unused tag reports no message */
    {
        int flag = 1;
        MPI_Status st;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "Iprobe found a message with a tag nobody sent");
    }
    MPI_OK(MPI_Waitall(NPROBE, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NPROBE; k++)
        free(sb[k]);
    free(sb);
    free(rq);
    MPI_Barrier(MPI_COMM_WORLD);
}

typedef struct {
    MPI_Message msg;
    int src, k, n;
} matched_t;

static void phase_mprobe(void)
{
    MPI_Request rq[NM];
    unsigned char *sb[NM];
    /* each message: 2-byte k header then pattern; everyone -> rank 0, tag 7 */
    for (int k = 0; k < NM; k++) {
        int n = size_of(t_rank, k) + 2;
        sb[k] = malloc((size_t)n);
        CHECK(sb[k], "out of memory");
        sb[k][0] = (unsigned char)k;
        sb[k][1] = (unsigned char)t_rank;
        t_fill(sb[k] + 2, (size_t)n - 2, (uint32_t)t_rank, (uint32_t)k, 2);
        MPI_Isend(sb[k], n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &rq[k]);
    }
    if (t_rank == 0) {
        const int total = NM * t_size;
        int *next = calloc((size_t)t_size, sizeof(int));
        matched_t batch[4];
        int done = 0, iter = 0;
        CHECK(next, "out of memory");
        while (done < total) {
            int nb = 0;
            /* match up to 4 messages, alternating Mprobe and Improbe */
            while (nb < 4 && done + nb < total) {
                MPI_Status st;
                int cnt = -1;
                if ((iter++ & 1) == 0) {
                    MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &batch[nb].msg, &st));
                } else {
                    int flag = 0;
                    while (!flag)
                        MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                                           &batch[nb].msg, &st));
                }
                CHECK(batch[nb].msg != MPI_MESSAGE_NULL && batch[nb].msg != MPI_MESSAGE_NO_PROC,
                      "matched probe returned a null message handle");
                CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < t_size, "mprobe source %d", st.MPI_SOURCE);
                CHECK_EQ_INT(st.MPI_TAG, 7, "mprobe tag");
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                batch[nb].src = st.MPI_SOURCE;
                batch[nb].k = next[st.MPI_SOURCE]++; /* non-overtaking per source */
                batch[nb].n = cnt;
                CHECK_EQ_INT(cnt, size_of(batch[nb].src, batch[nb].k) + 2, "mprobe count");
                nb++;
            }
            /* a matched message is no longer visible to probes of the same source */
            /* receive in reverse order, Mrecv and Imrecv alternating */
            for (int j = nb - 1; j >= 0; j--) {
                unsigned char *rb = malloc((size_t)batch[j].n + 1);
                MPI_Status st;
                int cnt = -1;
                CHECK(rb, "out of memory");
                if (j & 1) {
                    MPI_OK(MPI_Mrecv(rb, batch[j].n, MPI_BYTE, &batch[j].msg, &st));
                } else {
                    MPI_Request r;
                    MPI_OK(MPI_Imrecv(rb, batch[j].n, MPI_BYTE, &batch[j].msg, &r));
                    MPI_OK(MPI_Wait(&r, &st));
                }
                CHECK(batch[j].msg == MPI_MESSAGE_NULL, "Mrecv/Imrecv did not reset the handle");
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                CHECK_EQ_INT(cnt, batch[j].n, "Mrecv count");
                CHECK_EQ_INT(st.MPI_SOURCE, batch[j].src, "Mrecv status source");
                if (rb[0] != batch[j].k || rb[1] != batch[j].src)
                    FAIL("Mrecv got message (k %d, src %d), probe matched (k %d, src %d)", rb[0],
                         rb[1], batch[j].k, batch[j].src);
                check_msg(rb + 2, cnt - 2, batch[j].src, batch[j].k, 2, "Mprobe+Mrecv");
                free(rb);
            }
            done += nb;
        }
        for (int s = 0; s < t_size; s++)
            CHECK_EQ_INT(next[s], NM, "matched messages per source");
        free(next);
    }
    MPI_OK(MPI_Waitall(NM, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NM; k++)
        free(sb[k]);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void phase_no_proc(void)
{
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_Request r;
    int buf[2] = {5, 6}, flag = 0, cnt = -1;

    memset(&st, 0x55, sizeof st);
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) did not return MPI_MESSAGE_NO_PROC");
    CHECK_EQ_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Mprobe(PROC_NULL) source");
    CHECK_EQ_INT(st.MPI_TAG, MPI_ANY_TAG, "Mprobe(PROC_NULL) tag");
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ_INT(cnt, 0, "Mprobe(PROC_NULL) count");
    memset(&st, 0x55, sizeof st);
    MPI_OK(MPI_Mrecv(buf, 2, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) did not set MPI_MESSAGE_NULL");
    CHECK_EQ_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Mrecv(NO_PROC) source");
    CHECK_EQ_INT(st.MPI_TAG, MPI_ANY_TAG, "Mrecv(NO_PROC) tag");
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ_INT(cnt, 0, "Mrecv(NO_PROC) count");
    CHECK(buf[0] == 5 && buf[1] == 6, "Mrecv(NO_PROC) changed the buffer");

    m = MPI_MESSAGE_NULL;
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag, "Improbe(MPI_PROC_NULL) flag false");
    CHECK(m == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL) did not return MPI_MESSAGE_NO_PROC");
    CHECK_EQ_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Improbe(PROC_NULL) source");
    MPI_OK(MPI_Imrecv(buf, 2, MPI_INT, &m, &r));
    CHECK(m == MPI_MESSAGE_NULL, "Imrecv(MPI_MESSAGE_NO_PROC) did not set MPI_MESSAGE_NULL");
    memset(&st, 0x55, sizeof st);
    MPI_OK(MPI_Wait(&r, &st));
    CHECK_EQ_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Imrecv(NO_PROC) source");
    CHECK_EQ_INT(st.MPI_TAG, MPI_ANY_TAG, "Imrecv(NO_PROC) tag");
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ_INT(cnt, 0, "Imrecv(NO_PROC) count");

    /* Probe / Iprobe of MPI_PROC_NULL */
    memset(&st, 0x55, sizeof st);
    MPI_OK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK_EQ_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Probe(PROC_NULL) source");
    CHECK_EQ_INT(st.MPI_TAG, MPI_ANY_TAG, "Probe(PROC_NULL) tag");
    flag = 0;
    MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag, "Iprobe(MPI_PROC_NULL) flag false");
    CHECK_EQ_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Iprobe(PROC_NULL) source");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "probe");
    phase_probe();
    phase_mprobe();
    phase_no_proc();
    t_done();
    return 0;
}
