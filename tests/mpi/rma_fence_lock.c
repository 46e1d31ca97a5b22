/* A fence that no access follows starts no epoch (MPI-4.0 12.5.1), so MPI_Win_lock and
 * MPI_Win_lock_all may follow it, at every window size including one rank; the data moved in
 * each epoch arrives. A fence followed by an access does open an epoch, and a lock inside it
 * is MPI_ERR_RMA_SYNC. */
#include "common.h"

enum { N = 8 };

static int64_t read_own(MPI_Win win, const int64_t *base, int i)
{
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t_rank, 0, win));
    const int64_t v = base[i];
    MPI_OK(MPI_Win_unlock(t_rank, win));
    return v;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "rma_fence_lock");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    int64_t *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < N; i++) base[i] = -1;

    /* fence, put, fence: the second fence's epoch has no access yet, so a lock may follow. */
    MPI_OK(MPI_Win_fence(0, win));
    int64_t v = 1000 + t_rank;
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK_EQ_INT(base[0], 1000 + left, "put in a fence epoch");
    int64_t w = 2000 + t_rank;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Put(&w, 1, MPI_INT64_T, right, 1, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_EQ_INT(read_own(win, base, 1), 2000 + left, "put under a lock after a fence");

    /* A fence, then a lock_all epoch. */
    MPI_OK(MPI_Win_fence(0, win));
    int64_t x = 3000 + t_rank;
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Put(&x, 1, MPI_INT64_T, right, 2, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_EQ_INT(read_own(win, base, 2), 3000 + left, "put under lock_all after a fence");

    /* A fence followed by an access opens its epoch: a lock inside it is refused, the epoch
     * goes on and its access arrives. */
    MPI_OK(MPI_Win_fence(0, win));
    int64_t y = 4000 + t_rank;
    MPI_OK(MPI_Put(&y, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, win));
    int rc = MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    CHECK_EQ_INT(cls, MPI_ERR_RMA_SYNC, "lock inside a fence epoch with an access");
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_EQ_INT(base[3], 4000 + left, "put in the fence epoch the lock was refused in");
    for (int i = 4; i < N; i++) CHECK_EQ_INT(base[i], -1, "untouched element");

    MPI_OK(MPI_Win_free(&win));
    if (t_rank == 0) printf("rma_fence_lock: ok (%d ranks)\n", t_size);
    MPI_Finalize();
    return 0;
}
