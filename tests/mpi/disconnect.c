/* MPI_Comm_disconnect on ordinary communicators: it returns once the communicator's pending
 * operations (point-to-point and non-blocking collectives) have completed, leaves inactive
 * persistent requests alone, frees the communicator (MPI_COMM_NULL) and refuses the predefined
 * communicators with MPI_ERR_COMM. */
#include <unistd.h>

#include "common.h"

enum { N = 1 << 18 };

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "disconnect");
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    int *sendbuf = malloc(N * sizeof(int)), *recvbuf = malloc(N * sizeof(int));
    CHECK(sendbuf && recvbuf, "out of memory");

    for (int round = 0; round < 4; round++) {
        MPI_Comm comm;
        MPI_Request reqs[3], idle;
        int sum = -1, one = 1;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        for (int i = 0; i < N; i++) {
            sendbuf[i] = t_rank * 1000003 + i + round;
            recvbuf[i] = -1;
        }
        MPI_OK(MPI_Recv_init(recvbuf, N, MPI_INT, left, 9, comm, &idle)); /* never started */
        MPI_OK(MPI_Irecv(recvbuf, N, MPI_INT, left, round, comm, &reqs[0]));
        if (t_rank % 2 == round % 2)
            usleep(100000); /* half the ranks send late: the others must wait in disconnect */
        MPI_OK(MPI_Isend(sendbuf, N, MPI_INT, right, round, comm, &reqs[1]));
        MPI_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm, &reqs[2]));
        MPI_OK(MPI_Comm_disconnect(&comm));
        CHECK(comm == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle");
        /* Everything arrived before disconnect returned: checked before any other MPI call. */
        CHECK_EQ_INT(sum, t_size, "Iallreduce's result after disconnect");
        for (int i = 0; i < N; i++)
            if (recvbuf[i] != left * 1000003 + i + round)
                FAIL("element %d after disconnect: expected %d, got %d", i, left * 1000003 + i + round,
                     recvbuf[i]);
        int flag = 0;
        MPI_OK(MPI_Testall(3, reqs, &flag, MPI_STATUSES_IGNORE));
        CHECK_EQ_INT(flag, 1, "requests complete after disconnect");
        MPI_OK(MPI_Request_free(&idle));
    }

    /* Nothing pending: it is MPI_Comm_free. */
    MPI_Comm comm;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &comm));
    MPI_OK(MPI_Comm_disconnect(&comm));
    CHECK(comm == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    comm = MPI_COMM_WORLD;
    int rc = MPI_Comm_disconnect(&comm), cls = -1;
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK_EQ_INT(cls, MPI_ERR_COMM, "MPI_Comm_disconnect(MPI_COMM_WORLD)");
    comm = MPI_COMM_NULL;
    rc = MPI_Comm_disconnect(&comm);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK_EQ_INT(cls, MPI_ERR_COMM, "MPI_Comm_disconnect(MPI_COMM_NULL)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    free(sendbuf);
    free(recvbuf);
    t_done();
    return 0;
}
