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

int main(int argc, char **argv)
{
    bench_opts o;
    bench_placement place;
    char *sbuf, *rbuf;
    size_t size;

    bench_init(&argc, &argv, BENCH_LATENCY, &o);
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
        double t_start = 0.0, t_end;
        int i;

        bench_message_make(&o, size, &msg);
        bench_touch(sbuf, msg.span, 'a', place);
        bench_touch(rbuf, msg.span, 'b', place);
        MPI_Barrier(MPI_COMM_WORLD);

        if (o.rank == 0) {
            for (i = 0; i < warmup + iters; ++i) {
                if (i == warmup)
                    t_start = bench_now();
                MPI_Send(sbuf, msg.count, msg.type, 1, TAG_PING, MPI_COMM_WORLD);
                MPI_Recv(rbuf, msg.count, msg.type, 1, TAG_PONG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            }
            t_end = bench_now();
            bench_print_row(&o, size, (t_end - t_start) * 1e6 / (2.0 * iters));
        } else {
            for (i = 0; i < warmup + iters; ++i) {
                MPI_Recv(rbuf, msg.count, msg.type, 0, TAG_PING, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(sbuf, msg.count, msg.type, 0, TAG_PONG, MPI_COMM_WORLD);
            }
        }
        bench_message_free(&msg);
    } while (bench_advance(&o, &size));

    bench_free(sbuf, place);
    bench_free(rbuf, place);
    return bench_finalize(&o, 0);
}
