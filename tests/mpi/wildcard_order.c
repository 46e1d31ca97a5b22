/* Wildcard receives against receives posted after them, when the sender is on another node
 * (run with WEFT_FAKE_NODES, where a wildcard watches shared memory and the network):
 *  A. a wildcard posted before a receive naming the sender takes the sender's first message;
 *  B. a pending wildcard does not hold back a later receive whose message it cannot take. */
#include "common.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "wildcard_order");
    const int last = t_size - 1;
    if (t_size > 1) {
        /* A */
        if (t_rank == 0) {
            int first = -1, second = -1;
            MPI_Request r[2];
            MPI_Status st[2];
            MPI_Irecv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r[0]);
            MPI_Irecv(&second, 1, MPI_INT, last, 5, MPI_COMM_WORLD, &r[1]);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Waitall(2, r, st);
            CHECK(first == 1 && second == 2, "wildcard got %d, the later receive %d (want 1, 2)", first, second);
            CHECK(st[0].MPI_SOURCE == last, "wildcard matched rank %d", st[0].MPI_SOURCE);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            if (t_rank == last) {
                int one = 1, two = 2;
                MPI_Send(&one, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
                MPI_Send(&two, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
            }
        }
        /* B */
        if (t_rank == 0) {
            int late = -1, now = -1, reply = 3;
            MPI_Request w;
            MPI_Irecv(&late, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &w);
            MPI_Recv(&now, 1, MPI_INT, last, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&reply, 1, MPI_INT, last, 9, MPI_COMM_WORLD);
            MPI_Wait(&w, MPI_STATUS_IGNORE);
            CHECK(now == 8 && late == 7, "got %d and %d (want 8, 7)", now, late);
        } else if (t_rank == last) {
            int eight = 8, seven = 7, reply = -1;
            MPI_Send(&eight, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
            MPI_Recv(&reply, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(reply == 3, "reply %d", reply);
            MPI_Send(&seven, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        }
    }
    t_done();
    return 0;
}
