/* One-sided errors, each leaving memory untouched and the window usable:
 * - a dynamic window: an access at an address no region is attached to (just past an
 *   attached region, inside an unattached buffer, after a detach) is MPI_ERR_RMA_RANGE;
 *   detaching what was never attached is MPI_ERR_RMA_ATTACH;
 * - the request-based forms outside a passive-target epoch (in a fence epoch, in none) are
 *   MPI_ERR_RMA_SYNC, as are Put and Get outside every epoch and after MPI_Win_complete,
 *   MPI_Win_complete without MPI_Win_start and MPI_Win_wait without MPI_Win_post;
 * - MPI_Win_shared_query on a dynamic window is MPI_ERR_RMA_FLAVOR (on an allocated one it
 *   gives the own part), and
 *   MPI_Win_allocate_shared on a communicator spanning nodes MPI_ERR_RMA_SHARED;
 * - MPI_Compare_and_swap on a floating-point type is MPI_ERR_TYPE. */
#include "common.h"

enum { N = 16 };

static void expect_class(int rc, int want, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (cls != want) FAIL("%s: error class %d, expected %d", what, cls, want);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "rma_errors");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int right = (t_rank + 1) % t_size;

    /* Dynamic window: the first half of buf is attached, the second half is not. */
    int64_t buf[2 * N], other[N];
    for (int i = 0; i < 2 * N; i++) buf[i] = 1000 + i;
    for (int i = 0; i < N; i++) other[i] = 2000 + i;
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_attach(win, buf, N * sizeof(int64_t)));
    MPI_Aint mine[2], addr[2 * 64];
    MPI_OK(MPI_Get_address(buf, &mine[0]));
    MPI_OK(MPI_Get_address(other, &mine[1]));
    CHECK(t_size <= 64, "too many ranks");
    MPI_OK(MPI_Allgather(mine, 2, MPI_AINT, addr, 2, MPI_AINT, MPI_COMM_WORLD));
    const MPI_Aint rbuf = addr[2 * right], rother = addr[2 * right + 1];
    int64_t v[2] = {-7, -7}, got = 0;
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Put(v, 1, MPI_INT64_T, right, rbuf + (N - 1) * 8, 1, MPI_INT64_T, win));  /* last attached word */
    expect_class(MPI_Put(v, 2, MPI_INT64_T, right, rbuf + (N - 1) * 8, 2, MPI_INT64_T, win), MPI_ERR_RMA_RANGE,
                 "Put across the end of the attached region");
    expect_class(MPI_Put(v, 1, MPI_INT64_T, right, rbuf + N * 8, 1, MPI_INT64_T, win), MPI_ERR_RMA_RANGE,
                 "Put just past the attached region");
    expect_class(MPI_Get(&got, 1, MPI_INT64_T, right, rother, 1, MPI_INT64_T, win), MPI_ERR_RMA_RANGE,
                 "Get from an unattached buffer");
    expect_class(MPI_Accumulate(v, 1, MPI_INT64_T, right, rother, 1, MPI_INT64_T, MPI_SUM, win), MPI_ERR_RMA_RANGE,
                 "Accumulate into an unattached buffer");
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(buf[N - 1] == -7, "the in-range Put did not land: %lld", (long long)buf[N - 1]);
    for (int i = N; i < 2 * N; i++) CHECK(buf[i] == 1000 + i, "an out-of-range access wrote buf[%d]", i);
    for (int i = 0; i < N; i++) CHECK(other[i] == 2000 + i, "an out-of-range access wrote other[%d]", i);
    /* Detached: the origins' cached region must not let an access through once it misses. */
    MPI_OK(MPI_Win_detach(win, buf));
    expect_class(MPI_Win_detach(win, buf), MPI_ERR_RMA_ATTACH, "detaching a region twice");
    MPI_OK(MPI_Win_attach(win, other, N * sizeof(int64_t)));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, rother + 8, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_flush(right, win));
    CHECK(got == 2001, "Get from the newly attached region: %lld", (long long)got);
    expect_class(MPI_Get(&got, 1, MPI_INT64_T, right, rbuf + 4 * 8 + N * 8, 1, MPI_INT64_T, win), MPI_ERR_RMA_RANGE,
                 "Get from an unattached part after a reattach");
    MPI_OK(MPI_Win_unlock_all(win));
    /* Not a shared window. */
    MPI_Aint qs;
    int qu;
    void *qb;
    expect_class(MPI_Win_shared_query(win, 0, &qs, &qu, &qb), MPI_ERR_RMA_FLAVOR, "shared_query on a dynamic window");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* no origin still reads `other` when it goes */
    MPI_OK(MPI_Win_detach(win, other));
    MPI_OK(MPI_Win_free(&win));

    /* Sync errors on an allocated window. */
    int64_t *base = NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_OK(MPI_Win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < N; i++) base[i] = 3000 + i;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    expect_class(MPI_Put(v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win), MPI_ERR_RMA_SYNC, "Put outside every epoch");
    expect_class(MPI_Rput(v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win, &req), MPI_ERR_RMA_SYNC,
                 "Rput outside every epoch");
    MPI_OK(MPI_Win_fence(0, win));
    {
        double d[3] = {1.0, 1.0, 0.0};
        expect_class(MPI_Compare_and_swap(&d[0], &d[1], &d[2], MPI_DOUBLE, right, 0, win), MPI_ERR_TYPE,
                     "Compare_and_swap on a floating-point type");
    }
    expect_class(MPI_Rput(v, 1, MPI_INT64_T, right, 1, 1, MPI_INT64_T, win, &req), MPI_ERR_RMA_SYNC,
                 "Rput in a fence epoch");
    expect_class(MPI_Rget(&got, 1, MPI_INT64_T, right, 1, 1, MPI_INT64_T, win, &req), MPI_ERR_RMA_SYNC,
                 "Rget in a fence epoch");
    expect_class(MPI_Raccumulate(v, 1, MPI_INT64_T, right, 1, 1, MPI_INT64_T, MPI_SUM, win, &req), MPI_ERR_RMA_SYNC,
                 "Raccumulate in a fence epoch");
    expect_class(MPI_Rget_accumulate(v, 1, MPI_INT64_T, &got, 1, MPI_INT64_T, right, 1, 1, MPI_INT64_T, MPI_SUM, win,
                                     &req),
                 MPI_ERR_RMA_SYNC, "Rget_accumulate in a fence epoch");
    CHECK(req == MPI_REQUEST_NULL, "a failed request-based call returned a request");
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    expect_class(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "Win_complete without Win_start");
    expect_class(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "Win_wait without Win_post");
    /* A PSCW epoch with the neighbours, then a Get after it closed. */
    MPI_Group g, to_right, from_left;
    const int left = (t_rank + t_size - 1) % t_size;
    MPI_OK(MPI_Win_get_group(win, &g));
    MPI_OK(MPI_Group_incl(g, 1, &right, &to_right));
    MPI_OK(MPI_Group_incl(g, 1, &left, &from_left));
    MPI_OK(MPI_Win_post(from_left, 0, win));
    MPI_OK(MPI_Win_start(to_right, 0, win));
    expect_class(MPI_Rput(v, 1, MPI_INT64_T, right, 1, 1, MPI_INT64_T, win, &req), MPI_ERR_RMA_SYNC,
                 "Rput in a PSCW epoch");
    MPI_OK(MPI_Put(v, 1, MPI_INT64_T, right, 2, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_complete(win));
    int flag = 0;
    while (!flag) MPI_OK(MPI_Win_test(win, &flag));
    expect_class(MPI_Get(&got, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win), MPI_ERR_RMA_SYNC,
                 "Get after Win_complete");
    /* MPI-4.0: an allocated window may be queried; the own part is always there. */
    MPI_OK(MPI_Win_shared_query(win, t_rank, &qs, &qu, &qb));
    CHECK(qb == (void *)base && qs == (MPI_Aint)(N * sizeof(int64_t)) && qu == (int)sizeof(int64_t),
          "shared_query of the own part of an allocated window: %p size %lld unit %d", qb, (long long)qs, qu);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(base[i] == (i == 2 ? -7 : 3000 + i), "word %d is %lld after the failed calls", i, (long long)base[i]);
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&to_right));
    MPI_OK(MPI_Group_free(&from_left));
    MPI_OK(MPI_Win_free(&win));

    /* A shared window needs a node-local communicator. */
    MPI_Comm node;
    int node_size;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_size(node, &node_size));
    if (node_size < t_size) {
        expect_class(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_RMA_SHARED,
                     "allocate_shared on a communicator spanning nodes");
    } else {
        MPI_OK(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qs, &qu, &qb));
        CHECK(qs == 64 && qu == 1, "shared_query(MPI_PROC_NULL): size %lld, unit %d", (long long)qs, qu);
        MPI_OK(MPI_Win_free(&win));
    }
    MPI_OK(MPI_Comm_free(&node));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) printf("rma_errors: every check passed at np %d\n", t_size);
    MPI_Finalize();
    return 0;
}
