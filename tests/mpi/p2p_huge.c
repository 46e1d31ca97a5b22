/*
 * A message of more than 4 GiB between two ranks of one node: cross-memory attach moves at
 * most MAX_RW_COUNT (just under 2 GiB) per system call, so both the receiver's read and the
 * sender's write of the other half must resume where the kernel stopped. Sent as 4097
 * elements of a 1 MiB contiguous type; every 8-byte word is checked.
 */
#include "common.h"

#define CHUNK ((size_t)1 << 20)
#define COUNT 4097

static uint64_t word_at(size_t i) { return (uint64_t)i * 0x9E3779B97F4A7C15ull + 0x5851F42D4C957F2Dull; }

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "p2p_huge");
    CHECK(t_size == 2, "needs exactly 2 ranks, not %d", t_size);
    const size_t bytes = CHUNK * COUNT, words = bytes / 8;
    uint64_t *buf = malloc(bytes);
    CHECK(buf != NULL, "no memory for %zu bytes", bytes);
    MPI_Datatype chunk;
    MPI_OK(MPI_Type_contiguous((int)CHUNK, MPI_BYTE, &chunk));
    MPI_OK(MPI_Type_commit(&chunk));
    if (t_rank == 0) {
        for (size_t i = 0; i < words; i++)
            buf[i] = word_at(i);
        MPI_OK(MPI_Send(buf, COUNT, chunk, 1, 7, MPI_COMM_WORLD));
    } else {
        memset(buf, 0, bytes);
        MPI_Status st;
        MPI_OK(MPI_Recv(buf, COUNT, chunk, 0, 7, MPI_COMM_WORLD, &st));
        int got = 0;
        MPI_OK(MPI_Get_count(&st, chunk, &got));
        CHECK_EQ_INT(got, COUNT, "elements received");
        for (size_t i = 0; i < words; i++)
            CHECK(buf[i] == word_at(i), "word %zu of %zu (byte %zu) is 0x%llx, not 0x%llx", i, words, i * 8,
                  (unsigned long long)buf[i], (unsigned long long)word_at(i));
    }
    MPI_OK(MPI_Type_free(&chunk));
    free(buf);
    t_done();
    return 0;
}
