/* Windows of many non-blocking messages in both directions at once, eager and large, to every
 * peer; each window is checked and then the program finalizes at once, with no barrier, so
 * the last finish/acknowledgement cells must still reach their peers. */
#include "common.h"

#define WINDOW 48

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "bursts");
    /* Repeated rounds reuse ring cells and request slots while earlier messages' finish cells
     * may still be in flight: each round's content differs, so a stale reuse shows. */
    const size_t sizes[] = {8, 4000, 4100, 65536, 300000, 1 << 19};
    const int rounds = 3;
    for (size_t si = 0; si < (size_t)rounds * (sizeof(sizes) / sizeof(sizes[0])); si++) {
        size_t n = sizes[si % (sizeof(sizes) / sizeof(sizes[0]))];
        uint32_t salt = (uint32_t)(si / (sizeof(sizes) / sizeof(sizes[0])));
        int peers = t_size;  /* every rank, itself included */
        unsigned char *sbuf = malloc(n * WINDOW), *rbuf = malloc(n * WINDOW * (size_t)peers);
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * WINDOW * (size_t)peers);
        CHECK(sbuf && rbuf && reqs, "out of memory");
        for (int k = 0; k < WINDOW; k++)
            t_fill(sbuf + (size_t)k * n, n, (uint32_t)t_rank, (uint32_t)k + 1000 * salt, (uint32_t)n);
        int q = 0;
        for (int p = 0; p < peers; p++)
            for (int k = 0; k < WINDOW; k++)
                MPI_Irecv(rbuf + ((size_t)p * WINDOW + (size_t)k) * n, (int)n, MPI_BYTE, p, k,
                          MPI_COMM_WORLD, &reqs[q++]);
        for (int p = 0; p < peers; p++)
            for (int k = 0; k < WINDOW; k++)
                MPI_Isend(sbuf + (size_t)k * n, (int)n, MPI_BYTE, p, k, MPI_COMM_WORLD, &reqs[q++]);
        MPI_Waitall(q, reqs, MPI_STATUSES_IGNORE);
        for (int p = 0; p < peers; p++)
            for (int k = 0; k < WINDOW; k++) {
                const unsigned char *b = rbuf + ((size_t)p * WINDOW + (size_t)k) * n;
                for (size_t i = 0; i < n; i++)
                    if (b[i] != t_pat((uint32_t)p, (uint32_t)k + 1000 * salt, (uint32_t)n, i))
                        FAIL("round %u size %zu from %d message %d byte %zu: expected %u, got %u",
                             salt, n, p, k, i,
                             t_pat((uint32_t)p, (uint32_t)k + 1000 * salt, (uint32_t)n, i), b[i]);
            }
        free(sbuf);
        free(rbuf);
        free(reqs);
    }
    if (t_rank == 0)
        printf("bursts: OK (np %d)\n", t_size);
    MPI_Finalize();
    return 0;
}
