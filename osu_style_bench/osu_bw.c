/*
 * osu_bw.c - OSU-style unidirectional bandwidth test (weft).
 *
 * Per iteration rank 0 posts a window of MPI_Isend (default 64), rank 1 the
 * matching window of MPI_Irecv; both complete them with MPI_Waitall, then
 * rank 1 sends a zero-byte acknowledgement back.  Bandwidth is reported in
 * MB/s (1e6 bytes per second).
 *
 * As in OSU, every message of a window uses the same send buffer and the
 * same receive buffer, so memory use does not grow with the window.  With
 * -t vector each message is one MPI_Type_vector of doubles at stride 2 (see
 * bench_message in bench_common.h).
 */
#include "bench_common.h"

#define TAG_DATA 10
#define TAG_ACK 11

static void send_windows(bench_case *c, int n)
{
    MPI_Request reqs[BENCH_MAX_WINDOW];
    /* In locals: the loop's MPI calls may not be assumed to leave *c alone. */
    void *sbuf = c->sbuf, *rbuf = c->rbuf;
    const int count = c->msg.count;
    const MPI_Datatype type = c->msg.type;
    const int window = c->opts->window;
    int i, w;

    if (c->opts->rank == 0) {
        for (i = 0; i < n; ++i) {
            for (w = 0; w < window; ++w)
                MPI_Isend(sbuf, count, type, 1, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(rbuf, 0, MPI_CHAR, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        for (i = 0; i < n; ++i) {
            for (w = 0; w < window; ++w)
                MPI_Irecv(rbuf, count, type, 0, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(sbuf, 0, MPI_CHAR, 0, TAG_ACK, MPI_COMM_WORLD);
        }
    }
}

/* Bandwidth counts size * window bytes per iteration, one direction. */
static const bench_desc bw = {.kind = BENCH_BW, .run = send_windows,
                              .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
                              .report = BENCH_REPORT_MBPS, .directions = 1};

BENCH_MAIN(bw)
