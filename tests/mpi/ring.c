/* Token ring: several laps around MPI_COMM_WORLD with message sizes of
 * 0 B, 1 B, 4 KiB and 1 MiB. Every hop checks the content and re-fills the
 * buffer with the pattern of its own hop. Also a simultaneous shift where
 * every rank sends right and receives from the left at once.
 * Works at any size, including 1 (the token travels rank 0 -> rank 0). */
#include "common.h"

#define LAPS 4

int main(int argc, char **argv)
{
    static const size_t sizes[] = {0, 1, 4096, 1u << 20};
    t_init(&argc, &argv, "ring");
    const int right = (t_rank + 1) % t_size;
    const int left = (t_rank + t_size - 1) % t_size;
    unsigned char *buf = malloc((1u << 20) + 64);
    unsigned char *sbuf = malloc((1u << 20) + 64);
    CHECK(buf && sbuf, "out of memory");

    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const size_t n = sizes[si];
        const int tag = 100 + (int)si;
        for (int lap = 0; lap < LAPS; lap++) {
            MPI_Status st;
            int cnt = -1;
            /* hop h carries pattern (lap, n, h); rank r sends hop r+1 */
            if (t_rank == 0) {
                MPI_Request rq;
                t_fill(sbuf, n, (uint32_t)lap, (uint32_t)n, 1);
                memset(buf, 0xEE, n + 64);
                MPI_Irecv(buf, (int)n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rq);
                MPI_Send(sbuf, (int)n, MPI_BYTE, right, tag, MPI_COMM_WORLD);
                MPI_Wait(&rq, &st);
            } else {
                memset(buf, 0xEE, n + 64);
                MPI_Recv(buf, (int)n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st);
            }
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK_EQ_INT(cnt, n, "ring: received count");
            CHECK_EQ_INT(st.MPI_SOURCE, left, "ring: status source");
            CHECK_EQ_INT(st.MPI_TAG, tag, "ring: status tag");
            {
                char what[96];
                uint32_t hop = t_rank == 0 ? (uint32_t)t_size : (uint32_t)t_rank;
                snprintf(what, sizeof what, "ring size %zu lap %d hop %u", n, lap, hop);
                CHECK_PAT(buf, n, (uint32_t)lap, (uint32_t)n, hop, what);
                for (size_t i = n; i < n + 64; i++)
                    if (buf[i] != 0xEE)
                        FAIL("%s: byte %zu past the message was overwritten (0x%02x)", what, i, buf[i]);
            }
            if (t_rank != 0) {
                t_fill(sbuf, n, (uint32_t)lap, (uint32_t)n, (uint32_t)t_rank + 1);
                MPI_Send(sbuf, (int)n, MPI_BYTE, right, tag, MPI_COMM_WORLD);
            }
        }
    }

    /* Simultaneous shift: everyone sends right and receives from left. */
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const size_t n = sizes[si];
        for (int lap = 0; lap < LAPS; lap++) {
            MPI_Request rq[2];
            MPI_Status st[2];
            int cnt = -1;
            char what[96];
            t_fill(sbuf, n, 1000u + (uint32_t)lap, (uint32_t)n, (uint32_t)t_rank);
            memset(buf, 0xEE, n);
            MPI_Irecv(buf, (int)n, MPI_BYTE, left, 7, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(sbuf, (int)n, MPI_BYTE, right, 7, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, st);
            MPI_Get_count(&st[0], MPI_BYTE, &cnt);
            CHECK_EQ_INT(cnt, n, "shift: received count");
            CHECK_EQ_INT(st[0].MPI_SOURCE, left, "shift: status source");
            snprintf(what, sizeof what, "shift size %zu lap %d from %d", n, lap, left);
            CHECK_PAT(buf, n, 1000u + (uint32_t)lap, (uint32_t)n, (uint32_t)left, what);
        }
    }

    free(buf);
    free(sbuf);
    t_done();
    return 0;
}
