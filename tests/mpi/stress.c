/* Stress: TOTAL_MSGS messages in all (split evenly over the ranks) with
 * random sizes 0 B .. 4 MiB (skewed to small, a few large), random tags and
 * random destinations (self included), sent with Isend and received with
 * Irecv, a mix of specific receives and MPI_ANY_SOURCE/MPI_ANY_TAG ones.
 * Every byte is checked: content derives from (source, sequence, offset);
 * the sequence number is carried in the first 4 bytes when the message has
 * them and is also derivable from the tag (low 6 bits = sequence mod 64).
 *
 * Every rank derives every rank's send plan from a seeded PRNG, so each
 * receiver knows exactly which messages to expect. Messages go in batches
 * of BATCH per sender separated by a barrier. Within a batch (source, tag)
 * is unique, specific receives are posted before the wildcard ones (so a
 * wildcard can only take a message no specific receive is waiting for), and
 * wildcards are used only in batches whose largest incoming message is at
 * most WILD_MAX (their buffer must hold any message of the batch).
 *
 * Optional arguments: [total_messages] [seed]. */
#include "common.h"

#define TOTAL_MSGS 3000
#define BATCH 32 /* messages per sender per batch; must divide 64 (tag low bits) */
#define MAX_SIZE (4u << 20)
#define WILD_MAX (256u << 10)
#define TIME_LIMIT 100.0 /* seconds; the ctest timeout is 120 */

typedef struct {
    int dest, tag;
    uint32_t size;
} plan_t;

static uint32_t pick_size(uint64_t *s)
{
    uint32_t r = (uint32_t)(t_rand(s) % 1000);
    uint64_t x = t_rand(s);
    if (r < 50)
        return 0;
    if (r < 700)
        return 1 + (uint32_t)(x % 256);
    if (r < 900)
        return 256 + (uint32_t)(x % (16u << 10));
    if (r < 992)
        return (16u << 10) + (uint32_t)(x % (240u << 10));
    return (256u << 10) + (uint32_t)(x % (MAX_SIZE - (256u << 10) + 1));
}

static void make_plan(plan_t *p, int n, int src, int np, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)src * 0xD1B54A32D192ED03ULL + 1;
    for (int i = 0; i < 8; i++)
        t_rand(&s);
    for (int i = 0; i < n; i++) {
        p[i].dest = (int)(t_rand(&s) % (uint64_t)np);
        p[i].tag = (int)(t_rand(&s) % 256) * 64 + (i % 64);
        p[i].size = pick_size(&s);
    }
}

static void fill_msg(unsigned char *b, uint32_t n, int src, int seq)
{
    t_fill(b, n, (uint32_t)src, (uint32_t)seq, 77);
    if (n >= 4) {
        uint32_t v = (uint32_t)seq;
        memcpy(b, &v, 4);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "stress");
    int total = argc > 1 ? atoi(argv[1]) : TOTAL_MSGS;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 12345;
    const int np = t_size, me = t_rank;
    const int per = (total + np - 1) / np;
    const int nbatch = (per + BATCH - 1) / BATCH;
    plan_t **plan = malloc(sizeof(plan_t *) * (size_t)np);
    CHECK(plan, "out of memory");
    for (int s = 0; s < np; s++) {
        plan[s] = malloc(sizeof(plan_t) * (size_t)per);
        CHECK(plan[s], "out of memory");
        make_plan(plan[s], per, s, np, seed);
    }
    uint64_t rs = seed ^ (0xABCDEF12345ULL * (uint64_t)(me + 1)); /* receiver's own choices */
    const int maxin = BATCH * np;
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(maxin + BATCH));
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(maxin + BATCH));
    unsigned char **rbuf = malloc(sizeof(unsigned char *) * (size_t)maxin);
    int *rsrc = malloc(sizeof(int) * (size_t)maxin), *rseq = malloc(sizeof(int) * (size_t)maxin);
    unsigned char **sbuf = malloc(sizeof(unsigned char *) * BATCH);
    char *seen = malloc((size_t)np * BATCH);
    CHECK(rq && st && rbuf && rsrc && rseq && sbuf && seen, "out of memory");
    long long nrecv = 0, nwild = 0, bytes = 0;
    double t0 = MPI_Wtime();

    for (int b = 0; b < nbatch; b++) {
        const int lo = b * BATCH, hi = lo + BATCH < per ? lo + BATCH : per;
        int nr = 0, nw = 0, ns = 0;
        uint32_t bmax = 0;
        int recv_first = (int)(t_rand(&rs) & 1);

        /* incoming messages of this batch */
        for (int s = 0; s < np; s++)
            for (int i = lo; i < hi; i++)
                if (plan[s][i].dest == me && plan[s][i].size > bmax)
                    bmax = plan[s][i].size;
        int allow_wild = bmax <= WILD_MAX;
        int nin = 0;
        for (int s = 0; s < np; s++)
            for (int i = lo; i < hi; i++)
                nin += plan[s][i].dest == me;

        for (int phase = 0; phase < 2; phase++) {
            if ((phase == 0) == (recv_first != 0)) {
                /* receives: specific first, then wildcards */
                for (int s = 0; s < np; s++)
                    for (int i = lo; i < hi; i++) {
                        if (plan[s][i].dest != me)
                            continue;
                        if (allow_wild && t_rand(&rs) % 100 < 35) {
                            nw++;
                            continue;
                        }
                        rbuf[nr] = malloc(plan[s][i].size + 1);
                        CHECK(rbuf[nr], "out of memory");
                        rsrc[nr] = s;
                        rseq[nr] = i;
                        MPI_OK(MPI_Irecv(rbuf[nr], (int)plan[s][i].size, MPI_BYTE, s, plan[s][i].tag,
                                         MPI_COMM_WORLD, &rq[nr]));
                        nr++;
                    }
                for (int w = 0; w < nw; w++) {
                    rbuf[nr] = malloc(bmax + 1);
                    CHECK(rbuf[nr], "out of memory");
                    rsrc[nr] = -1;
                    rseq[nr] = -1;
                    MPI_OK(MPI_Irecv(rbuf[nr], (int)bmax, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                     MPI_COMM_WORLD, &rq[nr]));
                    nr++;
                }
                CHECK_EQ_INT(nr, nin, "receives posted in batch");
            } else {
                for (int i = lo; i < hi; i++) {
                    const plan_t *p = &plan[me][i];
                    sbuf[ns] = malloc(p->size + 1);
                    CHECK(sbuf[ns], "out of memory");
                    fill_msg(sbuf[ns], p->size, me, i);
                    MPI_OK(MPI_Isend(sbuf[ns], (int)p->size, MPI_BYTE, p->dest, p->tag,
                                     MPI_COMM_WORLD, &rq[nin + ns]));
                    ns++;
                }
            }
        }
        MPI_OK(MPI_Waitall(nin + ns, rq, st));

        memset(seen, 0, (size_t)np * BATCH);
        for (int r = 0; r < nr; r++) {
            int src = st[r].MPI_SOURCE, tag = st[r].MPI_TAG, cnt = -1, seq;
            MPI_Get_count(&st[r], MPI_BYTE, &cnt);
            if (src < 0 || src >= np)
                FAIL("batch %d receive %d: status source %d out of range", b, r, src);
            seq = lo - lo % 64 + tag % 64; /* BATCH divides 64 */
            if (seq >= hi)
                FAIL("batch %d: tag %d from %d maps to sequence %d outside the batch [%d, %d)", b,
                     tag, src, seq, lo, hi);
            if (rsrc[r] >= 0 && (src != rsrc[r] || seq != rseq[r]))
                FAIL("batch %d: specific receive for (src %d, seq %d) got (src %d, seq %d)", b,
                     rsrc[r], rseq[r], src, seq);
            const plan_t *p = &plan[src][seq];
            if (p->dest != me || p->tag != tag)
                FAIL("batch %d: got (src %d, tag %d, seq %d) which was not sent to me", b, src, tag, seq);
            if (seen[src * BATCH + (seq - lo)]++)
                FAIL("batch %d: message (src %d, seq %d) received twice", b, src, seq);
            if ((uint32_t)cnt != p->size)
                FAIL("message (src %d, seq %d, tag %d): expected %u bytes, got %d (%s receive)", src,
                     seq, tag, p->size, cnt, rsrc[r] >= 0 ? "specific" : "wildcard");
            if (cnt >= 4) {
                uint32_t v;
                memcpy(&v, rbuf[r], 4);
                if (v != (uint32_t)seq)
                    FAIL("message (src %d, tag %d): header sequence %u, tag says %d", src, tag, v, seq);
            }
            for (int i = 4; i < cnt; i++) {
                unsigned char e = t_pat((uint32_t)src, (uint32_t)seq, 77, (size_t)i);
                if (rbuf[r][i] != e)
                    FAIL("message (src %d, seq %d, %d bytes): byte %d expected 0x%02x, got 0x%02x",
                         src, seq, cnt, i, e, rbuf[r][i]);
            }
            bytes += cnt;
            free(rbuf[r]);
        }
        nrecv += nr;
        nwild += nw;
        for (int i = 0; i < ns; i++)
            free(sbuf[i]);
        MPI_Barrier(MPI_COMM_WORLD); /* no wildcard may see the next batch */
        if (MPI_Wtime() - t0 > TIME_LIMIT)
            FAIL("over the %.0f s limit after batch %d of %d", TIME_LIMIT, b, nbatch);
    }

    {
        long long expect = 0;
        for (int s = 0; s < np; s++)
            for (int i = 0; i < per; i++)
                expect += plan[s][i].dest == me;
        CHECK_EQ_INT(nrecv, expect, "messages received in all");
    }
    fprintf(stderr, "stress rank %d: %lld messages (%lld wildcard), %.1f MiB received in %.2f s\n",
            me, nrecv, nwild, (double)bytes / 1048576.0, MPI_Wtime() - t0);
    for (int s = 0; s < np; s++)
        free(plan[s]);
    free(plan);
    free(rq);
    free(st);
    free(rbuf);
    free(rsrc);
    free(rseq);
    free(sbuf);
    free(seen);
    t_done();
    return 0;
}
