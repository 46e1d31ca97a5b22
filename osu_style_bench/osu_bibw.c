/*
 * osu_bibw.c - OSU-style bidirectional bandwidth test (weft).
 *
 * Per iteration both ranks post a window of MPI_Irecv (default 64) followed
 * by a window of MPI_Isend to the other rank and complete all of them with
 * one MPI_Waitall.  The reported bandwidth counts the bytes of both
 * directions, in MB/s (1e6 bytes per second), timed on rank 0.
 *
 * As in OSU, every message of a window uses the same send buffer and the
 * same receive buffer, so memory use does not grow with the window.  With
 * -t vector each message is one MPI_Type_vector of doubles at stride 2 (see
 * bench_message in bench_common.h).
 */
#include "bench_common.h"

#define TAG_DATA 20

static void exchange_windows(bench_case *c, int n)
{
    MPI_Request reqs[2 * BENCH_MAX_WINDOW];
    /* In locals: the loop's MPI calls may not be assumed to leave *c alone. */
    void *sbuf = c->sbuf, *rbuf = c->rbuf;
    const int count = c->msg.count;
    const MPI_Datatype type = c->msg.type;
    const int window = c->opts->window;
    const int peer = 1 - c->opts->rank;
    int i, w;

    for (i = 0; i < n; ++i) {
        for (w = 0; w < window; ++w)
            MPI_Irecv(rbuf, count, type, peer, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
        for (w = 0; w < window; ++w)
            MPI_Isend(sbuf, count, type, peer, TAG_DATA, MPI_COMM_WORLD,
                      &reqs[window + w]);
        MPI_Waitall(2 * window, reqs, MPI_STATUSES_IGNORE);
    }
}

/* Both ranks send: size * window bytes per iteration each way. */
static const bench_desc bibw = {.kind = BENCH_BIBW, .run = exchange_windows,
                                .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
                                .report = BENCH_REPORT_MBPS, .directions = 2};

BENCH_MAIN(bibw)
