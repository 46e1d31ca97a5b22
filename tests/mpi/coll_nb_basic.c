/* Non-blocking (Ibarrier, Ibcast, Ireduce, Iallreduce) and persistent (Barrier_init,
 * Bcast_init, Reduce_init, Allreduce_init) forms of the implemented collectives, overlapped
 * with point-to-point traffic and with each other; every result checked. */
#include "common.h"

#define N 5000

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_nb_basic");
    const int me = t_rank, p = t_size, right = (me + 1) % p, left = (me - 1 + p) % p;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    static int a[N], b[N], c[N];
    for (int root = 0; root < p; root++) {
        for (int i = 0; i < N; i++) { a[i] = me * 3 + i; b[i] = -1; c[i] = (me == root) ? 7 * i + root : -1; }
        MPI_Request r[6];
        MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
        MPI_Ibcast(c, N, MPI_INT, root, dup, &r[1]);  /* a second collective in flight */
        int tok = me, got = -1;
        MPI_Irecv(&got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &r[2]);
        MPI_Isend(&tok, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &r[3]);
        MPI_Ibarrier(MPI_COMM_WORLD, &r[4]);
        int red[4] = {me, 1, 2, 3}, red_out[4] = {-1, -1, -1, -1};
        MPI_Ireduce(red, red_out, 4, MPI_INT, MPI_MAX, root, dup, &r[5]);
        MPI_Waitall(6, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++) {
            long long e = 3LL * p * (p - 1) / 2 + (long long)p * i;
            if (b[i] != e) FAIL("Iallreduce root-loop %d index %d: %d, expected %lld", root, i, b[i], e);
            if (c[i] != 7 * i + root) FAIL("Ibcast root %d index %d: %d", root, i, c[i]);
        }
        if (got != left) FAIL("ring token %d, expected %d", got, left);
        if (me == root && (red_out[0] != p - 1 || red_out[3] != 3)) FAIL("Ireduce root %d: %d %d", root, red_out[0], red_out[3]);
    }
    /* persistent: built once, started 100 times, data changed each time */
    int x[64], y[64], z[64], w[2], wout[2];
    MPI_Request pr[4];
    MPI_Allreduce_init(x, y, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[0]);
    MPI_Bcast_init(z, 64, MPI_INT, p - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[1]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &pr[2]);
    MPI_Reduce_init(w, wout, 2, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[3]);
    for (int it = 0; it < 100; it++) {
        for (int i = 0; i < 64; i++) { x[i] = it + me + i; y[i] = -1; z[i] = me == p - 1 ? it * 100 + i : -1; }
        w[0] = it + me; w[1] = -it - me;
        MPI_Startall(4, pr);
        MPI_Waitall(4, pr, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 64; i++) {
            int e = p * (it + i) + p * (p - 1) / 2;
            if (y[i] != e) FAIL("Allreduce_init start %d index %d: %d, expected %d", it, i, y[i], e);
            if (z[i] != it * 100 + i) FAIL("Bcast_init start %d index %d: %d", it, i, z[i]);
        }
        if (me == 0 && (wout[0] != it || wout[1] != -it - (p - 1))) FAIL("Reduce_init start %d: %d %d", it, wout[0], wout[1]);
    }
    for (int i = 0; i < 4; i++) MPI_Request_free(&pr[i]);
    MPI_Comm_free(&dup);
    t_done();
    return 0;
}
