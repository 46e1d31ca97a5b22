/*
 * osu_latency.c - OSU-style point-to-point latency test (weft).
 *
 * Two ranks ping-pong a message with blocking MPI_Send / MPI_Recv.  The
 * reported latency is the one-way time: half the round trip, averaged over
 * the timed iterations.  With -t vector each message is one MPI_Type_vector
 * of doubles at stride 2 (see bench_message in bench_common.h).
 */
#include "bench_common.h"

#define TAG_PING 1
#define TAG_PONG 2

static void ping_pong(bench_case *c, int n)
{
    /* In locals: the loop's MPI calls may not be assumed to leave *c alone. */
    void *sbuf = c->sbuf, *rbuf = c->rbuf;
    const int count = c->msg.count;
    const MPI_Datatype type = c->msg.type;
    int i;

    if (c->opts->rank == 0) {
        for (i = 0; i < n; ++i) {
            MPI_Send(sbuf, count, type, 1, TAG_PING, MPI_COMM_WORLD);
            MPI_Recv(rbuf, count, type, 1, TAG_PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        for (i = 0; i < n; ++i) {
            MPI_Recv(rbuf, count, type, 0, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, count, type, 0, TAG_PONG, MPI_COMM_WORLD);
        }
    }
}

static const bench_desc latency = {.kind = BENCH_LATENCY, .run = ping_pong,
                                   .buffers = BENCH_BUF_SEND | BENCH_BUF_RECV,
                                   .report = BENCH_REPORT_ONE_WAY_US};

BENCH_MAIN(latency)
