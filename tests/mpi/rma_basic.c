/* MPI one-sided communication: windows (MPI_Win_create with a displacement unit, and
 * MPI_Win_allocate), their attributes and names; Put and Get under fences; a counter at rank 0
 * read and written under exclusive locks (mutual exclusion: no increment is lost); Get under
 * lock_all; Fetch_and_op contention (every rank adds 1 N times: the total is exact, and every
 * fetched value is distinct); Compare_and_swap (one winner); Accumulate (sum, bxor, replace)
 * on int64 arrays, and from every rank at once sum on chars and shorts, max on doubles, prod
 * on floats (compare-and-swap on the word holding each element); Get_accumulate; and the errors: an access outside any epoch is MPI_ERR_RMA_SYNC, one outside
 * the target's window MPI_ERR_RMA_RANGE, and neither touches the target's memory.
 * Every value is checked against a locally computed reference. */
#include "common.h"

enum { N = 64, COUNTS = 2000, LOCK_ROUNDS = 20 };

static int64_t pat(int rank, int i) { return (int64_t)rank * 1000003 + i * 7 + 1; }

static void expect_class(int rc, int want, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (cls != want) FAIL("%s: error class %d, expected %d", what, cls, want);
}

static void attributes(MPI_Win win, void *base, MPI_Aint size, int disp_unit, int flavor)
{
    void *v;
    int flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
    CHECK(flag && v == base, "MPI_WIN_BASE %p, expected %p", v, base);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag));
    CHECK(flag && *(MPI_Aint *)v == size, "MPI_WIN_SIZE %lld", (long long)*(MPI_Aint *)v);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
    CHECK(flag && *(int *)v == disp_unit, "MPI_WIN_DISP_UNIT %d", *(int *)v);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    CHECK(flag && *(int *)v == flavor, "MPI_WIN_CREATE_FLAVOR %d", *(int *)v);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
    CHECK(flag && *(int *)v == MPI_WIN_UNIFIED, "MPI_WIN_MODEL %d", *(int *)v);
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Win_set_name(win, "rma window"));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 10 && !strcmp(name, "rma window"), "window name '%s'", name);
    MPI_Group g;
    int gsize = 0;
    MPI_OK(MPI_Win_get_group(win, &g));
    MPI_OK(MPI_Group_size(g, &gsize));
    CHECK(gsize == t_size, "window group of %d ranks", gsize);
    MPI_OK(MPI_Group_free(&g));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "rma_basic");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;

    /* 1. MPI_Win_create over a user array of int64, displacement unit 8: put my pattern into
     * the right neighbour's second half, get the left neighbour's first half. */
    int64_t *mem = malloc(2 * N * sizeof(int64_t));
    for (int i = 0; i < 2 * N; i++) mem[i] = i < N ? pat(t_rank, i) : -1;
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, 2 * N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    attributes(win, mem, 2 * N * sizeof(int64_t), sizeof(int64_t), MPI_WIN_FLAVOR_CREATE);
    int64_t mine[N], got[N];
    for (int i = 0; i < N; i++) mine[i] = pat(t_rank, i) + 5;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(mine, N, MPI_INT64_T, right, N, N, MPI_INT64_T, win));
    MPI_OK(MPI_Get(got, N, MPI_INT64_T, left, 0, N, MPI_INT64_T, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        if (got[i] != pat(left, i)) FAIL("Get under fence: element %d is %lld", i, (long long)got[i]);
        if (mem[N + i] != pat(left, i) + 5) FAIL("Put under fence: element %d is %lld", i, (long long)mem[N + i]);
    }

    /* 2. Errors (the window's communicator returns them): outside an epoch, then out of range. */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    expect_class(MPI_Put(mine, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win), MPI_ERR_RMA_SYNC,
                 "Put outside an epoch");
    MPI_OK(MPI_Win_fence(0, win));
    expect_class(MPI_Put(mine, 2, MPI_INT64_T, right, 2 * N - 1, 2, MPI_INT64_T, win), MPI_ERR_RMA_RANGE,
                 "Put past the end of the window");
    expect_class(MPI_Get(got, 1, MPI_INT64_T, right, -1, 1, MPI_INT64_T, win), MPI_ERR_RMA_RANGE,
                 "Get at a negative displacement");
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[2 * N - 1] == pat(left, N - 1) + 5, "the out-of-range Put touched the window: %lld",
          (long long)mem[2 * N - 1]);

    /* 3. Accumulate under fence onto rank 0: sum of (rank + 1) * i, then bxor, then replace. */
    MPI_OK(MPI_Win_fence(0, win));
    if (t_rank == 0) for (int i = 0; i < 2 * N; i++) mem[i] = 0;
    MPI_OK(MPI_Win_fence(0, win));
    int64_t add[N], x[N];
    for (int i = 0; i < N; i++) add[i] = (int64_t)(t_rank + 1) * i, x[i] = (int64_t)1 << (t_rank % 60);
    MPI_OK(MPI_Accumulate(add, N, MPI_INT64_T, 0, 0, N, MPI_INT64_T, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(x, N, MPI_INT64_T, 0, N, N, MPI_INT64_T, MPI_BXOR, win));
    MPI_OK(MPI_Win_fence(0, win));
    if (t_rank == 0) {
        int64_t xr = 0;
        for (int q = 0; q < t_size; q++) xr ^= (int64_t)1 << (q % 60);
        for (int i = 0; i < N; i++) {
            const int64_t want = (int64_t)t_size * (t_size + 1) / 2 * i;
            if (mem[i] != want) FAIL("Accumulate sum: element %d is %lld, expected %lld", i, (long long)mem[i], (long long)want);
            if (mem[N + i] != xr) FAIL("Accumulate bxor: element %d is %lld", i, (long long)mem[N + i]);
        }
    }
    MPI_OK(MPI_Win_fence(0, win));
    if (t_rank == t_size - 1) MPI_OK(MPI_Accumulate(mine, N, MPI_INT64_T, 0, 0, N, MPI_INT64_T, MPI_REPLACE, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    if (t_rank == 0)
        for (int i = 0; i < N; i++)
            if (mem[i] != pat(t_size - 1, i) + 5) FAIL("Accumulate replace: element %d is %lld", i, (long long)mem[i]);

    /* 3b. Accumulates without a UCX atomic (compare-and-swap on the word holding each element),
     * from every rank at once onto rank 0: sum on chars and shorts (neighbours share a word),
     * max on doubles, prod on floats, and Get_accumulate's fetched values. */
    MPI_OK(MPI_Win_fence(0, win));
    if (t_rank == 0) memset(mem, 0, 2 * N * sizeof(int64_t));
    MPI_OK(MPI_Win_fence(0, win));
    signed char ones[N];
    short twos[N];
    double level[N / 8];
    float factor[N / 8];
    for (int i = 0; i < N; i++) ones[i] = 1, twos[i] = (short)(2 + i);
    for (int i = 0; i < N / 8; i++) level[i] = t_rank + 0.5 + i, factor[i] = 2.0f;
    MPI_OK(MPI_Accumulate(ones, N, MPI_SIGNED_CHAR, 0, 0, N, MPI_SIGNED_CHAR, MPI_SUM, win));          /* bytes 0..N-1 */
    MPI_OK(MPI_Accumulate(twos, N, MPI_SHORT, 0, N / 8, N, MPI_SHORT, MPI_SUM, win));                 /* bytes N..3N-1 */
    MPI_OK(MPI_Accumulate(level, N / 8, MPI_DOUBLE, 0, N / 2, N / 8, MPI_DOUBLE, MPI_MAX, win));      /* bytes 4N.. */
    MPI_OK(MPI_Win_fence(0, win));
    if (t_rank == 0) {
        const float one = 1.0f;
        for (int i = 0; i < N / 8; i++) memcpy((char *)mem + 5 * N + 4 * i, &one, 4);
    }
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Accumulate(factor, N / 8, MPI_FLOAT, 0, 5 * N / 8, N / 8, MPI_FLOAT, MPI_PROD, win));   /* bytes 5N.. */
    MPI_OK(MPI_Win_fence(0, win));
    if (t_rank == 0) {
        const signed char *c = (const signed char *)mem;
        const short *sh = (const short *)((char *)mem + N);
        const double *dm = (const double *)((char *)mem + 4 * N);
        const float *fp = (const float *)((char *)mem + 5 * N);
        for (int i = 0; i < N; i++) {
            if (c[i] != t_size) FAIL("Accumulate sum on chars: byte %d is %d, expected %d", i, c[i], t_size);
            if (sh[i] != (short)(t_size * (2 + i))) FAIL("Accumulate sum on shorts: element %d is %d", i, sh[i]);
        }
        for (int i = 0; i < N / 8; i++) {
            if (dm[i] != t_size - 0.5 + i) FAIL("Accumulate max on doubles: element %d is %g", i, dm[i]);
            if (fp[i] != (float)(1 << t_size)) FAIL("Accumulate prod on floats: element %d is %g", i, fp[i]);
        }
    }
    /* Get_accumulate: every rank adds (rank + 1) to int word 6N/4 of rank 0 and fetches; the
     * fetched values plus the own addition are partial sums, the final value the total. */
    MPI_OK(MPI_Win_fence(0, win));
    int add_me = t_rank + 1, fetched = -1;
    MPI_OK(MPI_Get_accumulate(&add_me, 1, MPI_INT, &fetched, 1, MPI_INT, 0, 6 * N / 8, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(fetched >= 0 && fetched <= t_size * (t_size + 1) / 2 - add_me, "Get_accumulate fetched %d", fetched);
    int total = -1;
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, &total, 1, MPI_INT, 0, 6 * N / 8, 1, MPI_INT, MPI_NO_OP, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(total == t_size * (t_size + 1) / 2, "Get_accumulate(NO_OP) read %d, expected %d", total,
          t_size * (t_size + 1) / 2);

    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
    free(mem);

    /* 4. MPI_Win_allocate; passive target. */
    int64_t *base = NULL;
    MPI_OK(MPI_Win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    attributes(win, base, 4 * sizeof(int64_t), sizeof(int64_t), MPI_WIN_FLAVOR_ALLOCATE);
    for (int i = 0; i < 4; i++) base[i] = i == 2 ? -1 : 0;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* A counter in word 0 of rank 0, read and written back under an exclusive lock. */
    for (int r = 0; r < LOCK_ROUNDS; r++) {
        int64_t v = 0;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_OK(MPI_Get(&v, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_flush(0, win));
        v++;
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_unlock(0, win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MPI_OK(MPI_Win_unlock(0, win));
        CHECK(base[0] == (int64_t)LOCK_ROUNDS * t_size, "exclusive-lock counter %lld, expected %d (a lost update)",
              (long long)base[0], LOCK_ROUNDS * t_size);
    }

    /* Fetch_and_op contention on word 1 of rank 0 under lock_all; every fetched value must be
     * distinct: each rank checks its own are increasing, rank 0 the total. */
    MPI_OK(MPI_Win_lock_all(0, win));
    const int64_t one = 1;
    int64_t prev = -1;
    for (int k = 0; k < COUNTS; k++) {
        int64_t old = -1;
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 1, MPI_SUM, win));
        if (old <= prev) FAIL("Fetch_and_op: fetched %lld after %lld", (long long)old, (long long)prev);
        prev = old;
    }
    MPI_OK(MPI_Win_flush_all(win));
    /* Compare_and_swap on word 2 (starts at -1): exactly one rank wins. */
    const int64_t minus_one = -1, me = t_rank;
    int64_t seen = 0;
    MPI_OK(MPI_Compare_and_swap(&me, &minus_one, &seen, MPI_INT64_T, 0, 2, win));
    int won = seen == -1, winners = 0;
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(winners == 1, "%d ranks won the compare-and-swap", winners);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) {
        CHECK(base[1] == (int64_t)COUNTS * t_size, "Fetch_and_op total %lld, expected %d", (long long)base[1],
              COUNTS * t_size);
        CHECK(base[2] >= 0 && base[2] < t_size, "compare-and-swap left %lld", (long long)base[2]);
    }
    /* Get under lock_all from every rank; MPI_NO_OP fetches without changing. */
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int q = 0; q < t_size; q++) {
        int64_t v = -5, f = -5;
        MPI_OK(MPI_Get(&v, 1, MPI_INT64_T, q, 3, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_flush(q, win));
        MPI_OK(MPI_Fetch_and_op(NULL, &f, MPI_INT64_T, q, 3, MPI_NO_OP, win));
        CHECK(v == 0 && f == 0, "word 3 of rank %d: Get %lld, Fetch_and_op(NO_OP) %lld", q, (long long)v, (long long)f);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    expect_class(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC, "Win_unlock without a lock");
    MPI_OK(MPI_Win_free(&win));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) printf("rma_basic: every check passed at np %d\n", t_size);
    MPI_Finalize();
    return 0;
}
