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

int main(int argc, char **argv)
{
    bench_opts o;
    bench_placement place;
    char *sbuf, *rbuf;
    MPI_Request reqs[BENCH_MAX_WINDOW];
    size_t size;

    bench_init(&argc, &argv, BENCH_BW, &o);
    place = bench_my_placement(&o);

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

        if (o.rank == 0) {
            for (i = 0; i < warmup + iters; ++i) {
                if (i == warmup)
                    t_start = bench_now();
                for (w = 0; w < window; ++w)
                    MPI_Isend(sbuf, msg.count, msg.type, 1, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
                MPI_Recv(rbuf, 0, MPI_CHAR, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            t_end = bench_now();
            bench_print_row(&o, size,
                            (double)size * window * iters / (t_end - t_start) / 1e6);
        } else {
            for (i = 0; i < warmup + iters; ++i) {
                for (w = 0; w < window; ++w)
                    MPI_Irecv(rbuf, msg.count, msg.type, 0, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
                MPI_Send(sbuf, 0, MPI_CHAR, 0, TAG_ACK, MPI_COMM_WORLD);
            }
        }
        bench_message_free(&msg);
    } while (bench_advance(&o, &size));

    bench_free(sbuf, place);
    bench_free(rbuf, place);
    return bench_finalize(&o, 0);
}
