/* Every small size, 0 to 64 bytes and a few above, to the next rank and from the previous one:
 * once into a receive posted before the message arrives and once as an unexpected message,
 * with predefined types of 1, 4 and 8 bytes (an MPI_Isend and a blocking MPI_Send each). The
 * data, the status and the guard bytes after the receive buffer's message are checked: small
 * payloads are copied in pieces that overlap. */
#include "common.h"

#define GUARD 24
#define GUARD_BYTE 0xA5

static void check_received(const unsigned char *buf, size_t n, size_t room, uint32_t from, uint32_t round,
                           const MPI_Status *st, MPI_Datatype type, int elem)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != t_pat(from, round, (uint32_t)n, i))
            FAIL("round %u size %zu byte %zu: expected %u, got %u", round, n, i, t_pat(from, round, (uint32_t)n, i),
                 buf[i]);
    for (size_t i = n; i < room + GUARD; i++)
        if (buf[i] != GUARD_BYTE) FAIL("round %u size %zu: byte %zu past the message was written", round, n, i);
    int count = -1;
    MPI_OK(MPI_Get_count(st, type, &count));
    CHECK_EQ_INT(count, (int)(n / (size_t)elem), "received count");
    CHECK_EQ_INT(st->MPI_SOURCE, (int)from, "status source");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "small_sizes");
    const int next = (t_rank + 1) % t_size, prev = (t_rank + t_size - 1) % t_size;
    const MPI_Datatype types[] = {MPI_BYTE, MPI_INT, MPI_DOUBLE};
    const int elems[] = {1, 4, 8};
    size_t sizes[80];
    int nsizes = 0;
    for (size_t n = 0; n <= 64; n++) sizes[nsizes++] = n;
    const size_t more[] = {72, 96, 100, 128, 200, 256};
    for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) sizes[nsizes++] = more[i];
    unsigned char sbuf[256], rbuf[256 + 64 + GUARD];
    uint32_t round = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (int si = 0; si < nsizes; si++) {
            const size_t n = sizes[si];
            if (n % (size_t)elems[ti]) continue;
            const int count = (int)(n / (size_t)elems[ti]);
            for (int posted_first = 0; posted_first < 2; posted_first++) {
                for (int blocking = 0; blocking < 2; blocking++, round++) {
                    /* The receive has room for more than the message: only n bytes may change. */
                    const size_t room = n + 64;
                    memset(rbuf, GUARD_BYTE, sizeof(rbuf));
                    t_fill(sbuf, n, (uint32_t)t_rank, round, (uint32_t)n);
                    MPI_Request rr, sr = MPI_REQUEST_NULL;
                    MPI_Status st;
                    const int room_count = (int)(room / (size_t)elems[ti]);
                    if (posted_first) {
                        MPI_OK(MPI_Irecv(rbuf, room_count, types[ti], prev, (int)round, MPI_COMM_WORLD, &rr));
                        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                    }
                    if (blocking)
                        MPI_OK(MPI_Send(sbuf, count, types[ti], next, (int)round, MPI_COMM_WORLD));
                    else
                        MPI_OK(MPI_Isend(sbuf, count, types[ti], next, (int)round, MPI_COMM_WORLD, &sr));
                    if (posted_first) {
                        MPI_OK(MPI_Wait(&rr, &st));
                    } else {
                        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));  /* the message is in flight or arrived */
                        MPI_OK(MPI_Recv(rbuf, room_count, types[ti], prev, (int)round, MPI_COMM_WORLD, &st));
                    }
                    MPI_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
                    check_received(rbuf, n, room, (uint32_t)prev, round, &st, types[ti], elems[ti]);
                }
            }
        }
    }
    /* A window of them at once, received with MPI_ANY_SOURCE and MPI_ANY_TAG into posted
     * receives: the status says which message each one was. */
    enum { WINDOW = 32 };
    unsigned char wsend[WINDOW][16], wrecv[WINDOW][16 + GUARD];
    MPI_Request reqs[2 * WINDOW];
    MPI_Status sts[2 * WINDOW];
    memset(wrecv, GUARD_BYTE, sizeof(wrecv));
    for (int k = 0; k < WINDOW; k++) {
        t_fill(wsend[k], (size_t)(k % 16) + 1, (uint32_t)t_rank, 5000u + (uint32_t)k, (uint32_t)(k % 16) + 1);
        MPI_OK(MPI_Irecv(wrecv[k], 16, MPI_BYTE, t_size == 1 ? 0 : MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                         &reqs[k]));
    }
    for (int k = 0; k < WINDOW; k++)
        MPI_OK(MPI_Isend(wsend[k], k % 16 + 1, MPI_BYTE, next, k, MPI_COMM_WORLD, &reqs[WINDOW + k]));
    MPI_OK(MPI_Waitall(2 * WINDOW, reqs, sts));
    for (int k = 0; k < WINDOW; k++) {
        /* Messages from one sender match receives in order: receive k holds message k. */
        CHECK_EQ_INT(sts[k].MPI_TAG, k, "window tag");
        CHECK_EQ_INT(sts[k].MPI_SOURCE, prev, "window source");
        const size_t n = (size_t)(k % 16) + 1;
        for (size_t i = 0; i < n; i++)
            if (wrecv[k][i] != t_pat((uint32_t)prev, 5000u + (uint32_t)k, (uint32_t)n, i))
                FAIL("window message %d byte %zu differs", k, i);
        for (size_t i = n; i < 16 + GUARD; i++)
            if (wrecv[k][i] != GUARD_BYTE) FAIL("window message %d: byte %zu past it was written", k, i);
    }
    if (t_rank == 0) printf("small_sizes: OK (np %d, %u rounds)\n", t_size, round);
    MPI_Finalize();
    return 0;
}
