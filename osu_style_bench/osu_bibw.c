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

int main(int argc, char **argv)
{
    bench_opts o;
    bench_placement place;
    char *sbuf, *rbuf;
    MPI_Request reqs[2 * BENCH_MAX_WINDOW];
    size_t size;
    int peer;

    bench_init(&argc, &argv, BENCH_BIBW, &o);
    place = bench_my_placement(&o);
    peer = 1 - o.rank;

    sbuf = bench_alloc_or_abort(&o, bench_buffer_bytes(&o), place);
    rbuf = bench_alloc_or_abort(&o, bench_buffer_bytes(&o), place);
    bench_touch(sbuf, bench_buffer_bytes(&o), 'a', place);
    bench_touch(rbuf, bench_buffer_bytes(&o), 'b', place);

    bench_print_header(&o);

    size = o.min_size;
    do {
        const int iters = bench_iterations(&o, size);
        const int warmup = bench_warmup(&o, size);
        bench_message msg;
        const int window = o.window;
        double t_start = 0.0, t_end;
        int i, w;

        bench_message_make(&o, size, &msg);
        bench_touch(sbuf, msg.span, 'a', place);
        bench_touch(rbuf, msg.span, 'b', place);
        MPI_Barrier(MPI_COMM_WORLD);

        for (i = 0; i < warmup + iters; ++i) {
            if (i == warmup)
                t_start = bench_now();
            for (w = 0; w < window; ++w)
                MPI_Irecv(rbuf, msg.count, msg.type, peer, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
            for (w = 0; w < window; ++w)
                MPI_Isend(sbuf, msg.count, msg.type, peer, TAG_DATA, MPI_COMM_WORLD,
                          &reqs[window + w]);
            MPI_Waitall(2 * window, reqs, MPI_STATUSES_IGNORE);
        }
        t_end = bench_now();

        bench_print_row(&o, size,
                        2.0 * (double)size * window * iters / (t_end - t_start) / 1e6);
        bench_message_free(&msg);
    } while (bench_advance(&o, &size));

    bench_free(sbuf, place);
    bench_free(rbuf, place);
    return bench_finalize(&o, 0);
}
