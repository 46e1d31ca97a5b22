/* Collectives on intercommunicators, blocking, non-blocking and persistent: Barrier, Bcast,
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v,w), Reduce, Allreduce, Reduce_scatter(_block)
 * with MPI_ROOT / MPI_PROC_NULL in the root's group, on the intercommunicator of the two halves
 * of the world (uneven at odd sizes) and of rank 0 against the rest; every result is checked.
 * Scan and the neighbourhood collectives are refused with MPI_ERR_COMM. Needs 2 ranks or more. */
#include "common.h"

enum { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *mode_name[] = {"blocking", "non-blocking", "persistent"};

static MPI_Comm ic;
static int lrank, lsize, rsize, in_low, cut;

/* The world rank of remote rank r. */
static int remote_world(int r) { return in_low ? cut + r : r; }
static int my_value(int i) { return 1000 * t_rank + i; }

static void finish(int mode, MPI_Request *req)
{
    if (mode == BLOCKING) return;
    if (mode == PERSISTENT) {
        MPI_OK(MPI_Start(req));
        MPI_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Request_free(req));
    } else {
        MPI_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    }
}

#define RUN(mode, blocking_call, nb_call, init_call)                          \
    do {                                                                      \
        MPI_Request req_ = MPI_REQUEST_NULL;                                  \
        if ((mode) == BLOCKING) MPI_OK(blocking_call);                        \
        else if ((mode) == NONBLOCKING) MPI_OK(nb_call);                      \
        else MPI_OK(init_call);                                               \
        finish((mode), &req_);                                                \
    } while (0)

static void rooted(int mode, int root_side_low, int root_rank)
{
    enum { N = 3 };
    const int root_here = (in_low == root_side_low);
    const int root = root_here ? (lrank == root_rank ? MPI_ROOT : MPI_PROC_NULL) : root_rank;
    const int root_world = root_side_low ? root_rank : cut + root_rank;
    int buf[N], *many = calloc((size_t)N * (size_t)rsize + 1, sizeof(int));
    int *counts = calloc((size_t)rsize + 1, sizeof(int)), *displs = calloc((size_t)rsize + 1, sizeof(int));
    const char *m = mode_name[mode];

    /* Bcast */
    for (int i = 0; i < N; i++) buf[i] = root == MPI_ROOT ? my_value(i) : -1;
    RUN(mode, MPI_Bcast(buf, N, MPI_INT, root, ic), MPI_Ibcast(buf, N, MPI_INT, root, ic, &req_),
        MPI_Bcast_init(buf, N, MPI_INT, root, ic, MPI_INFO_NULL, &req_));
    if (!root_here)
        for (int i = 0; i < N; i++) CHECK_EQ_INT(buf[i], 1000 * root_world + i, m);

    /* Gather and Scatter */
    for (int i = 0; i < N; i++) buf[i] = my_value(i);
    RUN(mode, MPI_Gather(buf, N, MPI_INT, many, N, MPI_INT, root, ic),
        MPI_Igather(buf, N, MPI_INT, many, N, MPI_INT, root, ic, &req_),
        MPI_Gather_init(buf, N, MPI_INT, many, N, MPI_INT, root, ic, MPI_INFO_NULL, &req_));
    if (root == MPI_ROOT)
        for (int r = 0; r < rsize; r++)
            for (int i = 0; i < N; i++) CHECK_EQ_INT(many[r * N + i], 1000 * remote_world(r) + i, m);
    for (int k = 0; k < N * rsize; k++) many[k] = root == MPI_ROOT ? 7 * k + t_rank : -1;
    for (int i = 0; i < N; i++) buf[i] = -1;
    RUN(mode, MPI_Scatter(many, N, MPI_INT, buf, N, MPI_INT, root, ic),
        MPI_Iscatter(many, N, MPI_INT, buf, N, MPI_INT, root, ic, &req_),
        MPI_Scatter_init(many, N, MPI_INT, buf, N, MPI_INT, root, ic, MPI_INFO_NULL, &req_));
    if (!root_here)
        for (int i = 0; i < N; i++) CHECK_EQ_INT(buf[i], 7 * (lrank * N + i) + root_world, m);

    /* Gatherv and Scatterv: remote rank r has r % 3 elements, stored in reverse order */
    int total = 0;
    for (int r = rsize - 1; r >= 0; r--) {
        counts[r] = r % 3;
        displs[r] = total;
        total += counts[r];
    }
    const int mine = lrank % 3;
    for (int i = 0; i < N; i++) buf[i] = my_value(i);
    for (int k = 0; k < N * rsize; k++) many[k] = -1;
    RUN(mode, MPI_Gatherv(buf, mine, MPI_INT, many, counts, displs, MPI_INT, root, ic),
        MPI_Igatherv(buf, mine, MPI_INT, many, counts, displs, MPI_INT, root, ic, &req_),
        MPI_Gatherv_init(buf, mine, MPI_INT, many, counts, displs, MPI_INT, root, ic, MPI_INFO_NULL, &req_));
    if (root == MPI_ROOT)
        for (int r = 0; r < rsize; r++)
            for (int i = 0; i < counts[r]; i++) CHECK_EQ_INT(many[displs[r] + i], 1000 * remote_world(r) + i, m);
    for (int k = 0; k < N * rsize; k++) many[k] = root == MPI_ROOT ? 5 * k : -1;
    for (int i = 0; i < N; i++) buf[i] = -1;
    RUN(mode, MPI_Scatterv(many, counts, displs, MPI_INT, buf, mine, MPI_INT, root, ic),
        MPI_Iscatterv(many, counts, displs, MPI_INT, buf, mine, MPI_INT, root, ic, &req_),
        MPI_Scatterv_init(many, counts, displs, MPI_INT, buf, mine, MPI_INT, root, ic, MPI_INFO_NULL, &req_));
    if (!root_here) {
        /* The root side's displacement of this rank: ranks above it come first. */
        int at = 0;
        for (int r = lsize - 1; r > lrank; r--) at += r % 3;
        for (int i = 0; i < mine; i++) CHECK_EQ_INT(buf[i], 5 * (at + i), m);
    }

    /* Reduce: the root receives the sum over the other group. */
    int sum[N];
    for (int i = 0; i < N; i++) {
        buf[i] = my_value(i);
        sum[i] = -1;
    }
    RUN(mode, MPI_Reduce(buf, sum, N, MPI_INT, MPI_SUM, root, ic),
        MPI_Ireduce(buf, sum, N, MPI_INT, MPI_SUM, root, ic, &req_),
        MPI_Reduce_init(buf, sum, N, MPI_INT, MPI_SUM, root, ic, MPI_INFO_NULL, &req_));
    if (root == MPI_ROOT)
        for (int i = 0; i < N; i++) {
            int expect = 0;
            for (int r = 0; r < rsize; r++) expect += 1000 * remote_world(r) + i;
            CHECK_EQ_INT(sum[i], expect, m);
        }
    free(many);
    free(counts);
    free(displs);
}

static void all_to_all(int mode)
{
    enum { N = 2 };
    const char *m = mode_name[mode];
    int mine[N], *from = calloc((size_t)N * (size_t)rsize, sizeof(int)), *to = calloc((size_t)N * (size_t)rsize, sizeof(int));
    for (int i = 0; i < N; i++) mine[i] = my_value(i);

    RUN(mode, MPI_Barrier(ic), MPI_Ibarrier(ic, &req_), MPI_Barrier_init(ic, MPI_INFO_NULL, &req_));

    RUN(mode, MPI_Allgather(mine, N, MPI_INT, from, N, MPI_INT, ic),
        MPI_Iallgather(mine, N, MPI_INT, from, N, MPI_INT, ic, &req_),
        MPI_Allgather_init(mine, N, MPI_INT, from, N, MPI_INT, ic, MPI_INFO_NULL, &req_));
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < N; i++) CHECK_EQ_INT(from[r * N + i], 1000 * remote_world(r) + i, m);

    /* Allgatherv: remote rank r sends (r % 2) + 1 elements, placed in reverse order. */
    int *counts = calloc((size_t)rsize, sizeof(int)), *displs = calloc((size_t)rsize, sizeof(int)), at = 0;
    for (int r = rsize - 1; r >= 0; r--) {
        counts[r] = r % 2 + 1;
        displs[r] = at;
        at += counts[r];
    }
    for (int k = 0; k < N * rsize; k++) from[k] = -1;
    RUN(mode, MPI_Allgatherv(mine, lrank % 2 + 1, MPI_INT, from, counts, displs, MPI_INT, ic),
        MPI_Iallgatherv(mine, lrank % 2 + 1, MPI_INT, from, counts, displs, MPI_INT, ic, &req_),
        MPI_Allgatherv_init(mine, lrank % 2 + 1, MPI_INT, from, counts, displs, MPI_INT, ic, MPI_INFO_NULL, &req_));
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < counts[r]; i++) CHECK_EQ_INT(from[displs[r] + i], 1000 * remote_world(r) + i, m);

    /* Alltoall: element i of block r is 100 * (world rank) + 10 * r + i. */
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < N; i++) to[r * N + i] = 100 * t_rank + 10 * r + i;
    RUN(mode, MPI_Alltoall(to, N, MPI_INT, from, N, MPI_INT, ic),
        MPI_Ialltoall(to, N, MPI_INT, from, N, MPI_INT, ic, &req_),
        MPI_Alltoall_init(to, N, MPI_INT, from, N, MPI_INT, ic, MPI_INFO_NULL, &req_));
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < N; i++) CHECK_EQ_INT(from[r * N + i], 100 * remote_world(r) + 10 * lrank + i, m);

    /* Alltoallv and Alltoallw: one element to each remote rank, received in reverse order. */
    int *ones = calloc((size_t)rsize, sizeof(int)), *sd = calloc((size_t)rsize, sizeof(int)),
        *rd = calloc((size_t)rsize, sizeof(int)), *rbd = calloc((size_t)rsize, sizeof(int));
    MPI_Datatype *types = calloc((size_t)rsize, sizeof(MPI_Datatype));
    int *sbd = calloc((size_t)rsize, sizeof(int));
    for (int r = 0; r < rsize; r++) {
        ones[r] = 1;
        sd[r] = r;
        rd[r] = rsize - 1 - r;
        sbd[r] = r * (int)sizeof(int);
        rbd[r] = (rsize - 1 - r) * (int)sizeof(int);
        types[r] = MPI_INT;
        to[r] = 100 * t_rank + 10 * r;
        from[r] = -1;
    }
    RUN(mode, MPI_Alltoallv(to, ones, sd, MPI_INT, from, ones, rd, MPI_INT, ic),
        MPI_Ialltoallv(to, ones, sd, MPI_INT, from, ones, rd, MPI_INT, ic, &req_),
        MPI_Alltoallv_init(to, ones, sd, MPI_INT, from, ones, rd, MPI_INT, ic, MPI_INFO_NULL, &req_));
    for (int r = 0; r < rsize; r++) CHECK_EQ_INT(from[rsize - 1 - r], 100 * remote_world(r) + 10 * lrank, m);
    for (int r = 0; r < rsize; r++) from[r] = -1;
    RUN(mode, MPI_Alltoallw(to, ones, sbd, types, from, ones, rbd, types, ic),
        MPI_Ialltoallw(to, ones, sbd, types, from, ones, rbd, types, ic, &req_),
        MPI_Alltoallw_init(to, ones, sbd, types, from, ones, rbd, types, ic, MPI_INFO_NULL, &req_));
    for (int r = 0; r < rsize; r++) CHECK_EQ_INT(from[rsize - 1 - r], 100 * remote_world(r) + 10 * lrank, m);

    /* Allreduce: the sum over the other group; Reduce_scatter(_block): the other group's sums of
     * a vector of (local size) blocks, block k to local rank k. */
    int sums[N];
    RUN(mode, MPI_Allreduce(mine, sums, N, MPI_INT, MPI_SUM, ic),
        MPI_Iallreduce(mine, sums, N, MPI_INT, MPI_SUM, ic, &req_),
        MPI_Allreduce_init(mine, sums, N, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &req_));
    for (int i = 0; i < N; i++) {
        int expect = 0;
        for (int r = 0; r < rsize; r++) expect += 1000 * remote_world(r) + i;
        CHECK_EQ_INT(sums[i], expect, m);
    }
    /* Both groups' vectors have lsize * rsize * N elements (the same on both sides). */
    const int len = lsize * rsize * N;
    int *vec = calloc((size_t)len, sizeof(int)), *res = calloc((size_t)(rsize * N), sizeof(int));
    int *rcounts = calloc((size_t)lsize, sizeof(int));
    for (int k = 0; k < len; k++) vec[k] = t_rank * 3 + k;
    for (int k = 0; k < lsize; k++) rcounts[k] = rsize * N;
    RUN(mode, MPI_Reduce_scatter_block(vec, res, rsize * N, MPI_INT, MPI_SUM, ic),
        MPI_Ireduce_scatter_block(vec, res, rsize * N, MPI_INT, MPI_SUM, ic, &req_),
        MPI_Reduce_scatter_block_init(vec, res, rsize * N, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &req_));
    for (int i = 0; i < rsize * N; i++) {
        int expect = 0, k = lrank * rsize * N + i;
        for (int r = 0; r < rsize; r++) expect += remote_world(r) * 3 + k;
        CHECK_EQ_INT(res[i], expect, m);
    }
    for (int i = 0; i < rsize * N; i++) res[i] = -1;
    RUN(mode, MPI_Reduce_scatter(vec, res, rcounts, MPI_INT, MPI_SUM, ic),
        MPI_Ireduce_scatter(vec, res, rcounts, MPI_INT, MPI_SUM, ic, &req_),
        MPI_Reduce_scatter_init(vec, res, rcounts, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &req_));
    for (int i = 0; i < rsize * N; i++) {
        int expect = 0, k = lrank * rsize * N + i;
        for (int r = 0; r < rsize; r++) expect += remote_world(r) * 3 + k;
        CHECK_EQ_INT(res[i], expect, m);
    }
    free(vec);
    free(res);
    free(rcounts);
    free(from);
    free(to);
    free(counts);
    free(displs);
    free(ones);
    free(sd);
    free(rd);
    free(rbd);
    free(sbd);
    free(types);
}

static void with_cut(int c)
{
    cut = c;
    in_low = t_rank < cut;
    MPI_Comm local;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, in_low, t_rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_low ? cut : 0, 21, &ic));
    MPI_OK(MPI_Comm_rank(ic, &lrank));
    MPI_OK(MPI_Comm_size(ic, &lsize));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    for (int mode = BLOCKING; mode <= PERSISTENT; mode++) {
        all_to_all(mode);
        rooted(mode, 1, 0);
        rooted(mode, 0, (t_size - cut) - 1);
    }
    /* Not defined on intercommunicators. */
    MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    int x = 1, y = 0, cls = 0;
    int rc = MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK_EQ_INT(cls, MPI_ERR_COMM, "MPI_Scan on an intercommunicator");
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "intercomm_coll");
    if (t_size >= 2) {
        with_cut(t_size / 2);
        with_cut(1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) printf("intercomm_coll: OK\n");
    MPI_Finalize();
    return 0;
}
