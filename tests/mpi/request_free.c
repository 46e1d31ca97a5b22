/* Requests freed in flight (MPI_Request_free) complete by MPI_Finalize. Rank 1 posts a
 * receive for a large message from rank 0 and frees it at once, then finalizes; rank 0 sends
 * the message only after rank 1 has freed its receive (and, later, an Issend it frees too),
 * then waits for it. Rank 1's freed receive must still take the message (rank 0's wait returns)
 * and its buffer holds the data once MPI_Finalize has returned. */
#include "common.h"

#define N (1 << 20)

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "request_free");
    CHECK(t_size >= 2, "needs 2 ranks");
    unsigned char *buf = calloc(1, N);
    int small = 0;
    MPI_Request req;
    if (t_rank == 1) {
        MPI_OK(MPI_Irecv(buf, N, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Request_free(&req));
        CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
        MPI_OK(MPI_Irecv(&small, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Request_free(&req));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    } else if (t_rank == 0) {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        int v = 4242;
        MPI_OK(MPI_Issend(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Request_free(&req));
        t_fill(buf, N, 0, 1, 2);
        MPI_OK(MPI_Send(buf, N, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_Finalize();
    if (t_rank == 1) {
        for (size_t i = 0; i < N; i++)
            if (buf[i] != t_pat(0, 1, 2, i)) {
                fprintf(stderr, "[request_free rank 1] FAIL: byte %zu of a freed receive is wrong\n", i);
                return 1;
            }
        if (small != 4242) {
            fprintf(stderr, "[request_free rank 1] FAIL: freed receive of a freed Issend got %d\n", small);
            return 1;
        }
    }
    if (t_rank == 0) printf("request_free: OK (np %d)\n", t_size);
    free(buf);
    return 0;
}
