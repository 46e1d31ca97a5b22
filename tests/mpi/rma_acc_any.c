/* Accumulates on windows of user memory (MPI_Win_create) and dynamic windows, of any size and
 * predefined type: every rank adds concurrently into rank 0's windows of 1 byte (unsigned
 * char), 2 bytes (short) and a few doubles, with Accumulate, Get_accumulate, Fetch_and_op and
 * Compare_and_swap, and the sums come out whole. Long accumulates of ints race with
 * Fetch_and_op on their first element (no update lost). A dynamic window's access may span
 * two regions attached next to each other (put, get, accumulate, get_accumulate). Accumulates
 * that move no byte succeed whatever their types. MPI_Win_shared_query on a created window
 * gives the own part, on a shared window a part of 0 bytes as size 0 and NULL. */
#include "common.h"

enum { ITER = 50, ND = 7, NL = 8192, NR = 64 };

static void small_windows(void)
{
    unsigned char c = 0;
    short h = 0;
    MPI_Win wc, wh;
    MPI_OK(MPI_Win_create(&c, 1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wc));
    MPI_OK(MPI_Win_create(&h, 2, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &wh));
    MPI_OK(MPI_Win_lock_all(0, wc));
    MPI_OK(MPI_Win_lock_all(0, wh));
    const unsigned char one = 1;
    const short two = 2;
    for (int i = 0; i < ITER; i++) {
        unsigned char oldc;
        short oldh;
        MPI_OK(MPI_Accumulate(&one, 1, MPI_UNSIGNED_CHAR, 0, 0, 1, MPI_UNSIGNED_CHAR, MPI_SUM, wc));
        MPI_OK(MPI_Fetch_and_op(&one, &oldc, MPI_UNSIGNED_CHAR, 0, 0, MPI_SUM, wc));
        MPI_OK(MPI_Get_accumulate(&two, 1, MPI_SHORT, &oldh, 1, MPI_SHORT, 0, 0, 1, MPI_SHORT, MPI_SUM, wh));
        MPI_OK(MPI_Win_flush(0, wc));
        MPI_OK(MPI_Win_flush(0, wh));
    }
    MPI_OK(MPI_Win_unlock_all(wc));
    MPI_OK(MPI_Win_unlock_all(wh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) {
        CHECK_EQ_INT(c, (2 * ITER * t_size) % 256, "1-byte window after Accumulate and Fetch_and_op");
        CHECK_EQ_INT(h, 2 * ITER * t_size, "2-byte window after Get_accumulate");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Compare_and_swap on the 1-byte window: each rank in turn swaps in its mark. */
    if (t_rank == 0) c = 0;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int r = 0; r < t_size; r++) {
        if (t_rank == r) {
            const unsigned char want = (unsigned char)r, mark = (unsigned char)(r + 1);
            unsigned char got = 0xff;
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, wc));
            MPI_OK(MPI_Compare_and_swap(&mark, &want, &got, MPI_UNSIGNED_CHAR, 0, 0, wc));
            MPI_OK(MPI_Win_unlock(0, wc));
            CHECK_EQ_INT(got, r, "Compare_and_swap on a 1-byte window: the old value");
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (t_rank == 0) CHECK_EQ_INT(c, t_size, "1-byte window after the swaps");
    MPI_OK(MPI_Win_free(&wc));
    MPI_OK(MPI_Win_free(&wh));
}

static void doubles_and_long_runs(void)
{
    double d[ND];
    int *l = calloc(NL, sizeof(int));
    for (int i = 0; i < ND; i++) d[i] = 0.0;
    MPI_Win wd, wl;
    MPI_OK(MPI_Win_create(d, sizeof d, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &wd));
    MPI_OK(MPI_Win_create(l, NL * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wl));
    double add[ND], old[ND];
    int *ones = malloc(NL * sizeof(int));
    for (int i = 0; i < ND; i++) add[i] = t_rank + 1 + 0.5 * i;
    for (int i = 0; i < NL; i++) ones[i] = 1;
    MPI_OK(MPI_Win_lock_all(0, wd));
    MPI_OK(MPI_Win_lock_all(0, wl));
    for (int i = 0; i < ITER; i++) {
        MPI_OK(MPI_Get_accumulate(add, ND, MPI_DOUBLE, old, ND, MPI_DOUBLE, 0, 0, ND, MPI_DOUBLE, MPI_SUM, wd));
        MPI_OK(MPI_Win_flush(0, wd));
        /* Each old value holds at least every add of this rank before. */
        for (int k = 0; k < ND; k++)
            CHECK(old[k] >= i * add[k], "Get_accumulate: old value %d is %g after %d adds of %g", k, old[k], i, add[k]);
        /* Even ranks add a whole run, odd ranks one element with Fetch_and_op. */
        if (t_rank % 2 == 0) {
            MPI_OK(MPI_Accumulate(ones, NL, MPI_INT, 0, 0, NL, MPI_INT, MPI_SUM, wl));
        } else {
            int prev;
            MPI_OK(MPI_Fetch_and_op(&ones[0], &prev, MPI_INT, 0, 0, MPI_SUM, wl));
        }
        MPI_OK(MPI_Win_flush(0, wl));
    }
    MPI_OK(MPI_Win_unlock_all(wd));
    MPI_OK(MPI_Win_unlock_all(wl));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) {
        const int evens = (t_size + 1) / 2;
        for (int k = 0; k < ND; k++) {
            double want = 0;
            for (int r = 0; r < t_size; r++) want += ITER * (r + 1 + 0.5 * k);
            CHECK(d[k] == want, "double %d is %g, expected %g", k, d[k], want);
        }
        CHECK_EQ_INT(l[0], ITER * t_size, "first int, under runs and Fetch_and_op");
        for (int i = 1; i < NL; i++)
            if (l[i] != ITER * evens) FAIL("int %d is %d, expected %d", i, l[i], ITER * evens);
    }
    /* The own part of a created window. */
    MPI_Aint qs;
    int qu;
    void *qb;
    MPI_OK(MPI_Win_shared_query(wd, t_rank, &qs, &qu, &qb));
    CHECK(qb == (void *)d && qs == (MPI_Aint)sizeof d && qu == (int)sizeof(double),
          "shared_query of the own part: %p size %lld unit %d", qb, (long long)qs, qu);
    MPI_OK(MPI_Win_free(&wd));
    MPI_OK(MPI_Win_free(&wl));
    free(l);
    free(ones);
}

static void dynamic_spanning(void)
{
    int *mem = calloc(2 * NR, sizeof(int));
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_attach(win, mem, NR * sizeof(int)));
    MPI_OK(MPI_Win_attach(win, mem + NR, NR * sizeof(int)));
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    MPI_Aint mine, theirs;
    MPI_OK(MPI_Get_address(mem, &mine));
    MPI_OK(MPI_Sendrecv(&mine, 1, MPI_AINT, left, 0, &theirs, 1, MPI_AINT, right, 0, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    int src[NR], got[NR], old[NR];
    for (int i = 0; i < NR; i++) src[i] = 100 * t_rank + i;
    const MPI_Aint at = MPI_Aint_add(theirs, (NR / 2) * sizeof(int)); /* second half of one, first of the next */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Put(src, NR, MPI_INT, right, at, NR, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Get(got, NR, MPI_INT, right, at, NR, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    for (int i = 0; i < NR; i++) CHECK_EQ_INT(got[i], src[i], "Get across two attached regions");
    MPI_OK(MPI_Accumulate(src, NR, MPI_INT, right, at, NR, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(src, NR, MPI_INT, old, NR, MPI_INT, right, at, NR, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(right, win));
    for (int i = 0; i < NR; i++) CHECK_EQ_INT(old[i], 2 * src[i], "Get_accumulate across two attached regions");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 2 * NR; i++) {
        const int k = i - NR / 2;
        const int want = (k >= 0 && k < NR) ? 3 * (100 * left + k) : 0;
        CHECK_EQ_INT(mem[i], want, "target memory after the accesses across regions");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_detach(win, mem));
    MPI_OK(MPI_Win_detach(win, mem + NR));
    MPI_OK(MPI_Win_free(&win));
    free(mem);
}

static void zero_bytes(void)
{
    int buf[4] = {7, 7, 7, 7}, res[4] = {0, 0, 0, 0};
    MPI_Datatype empty;
    MPI_OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPI_OK(MPI_Type_commit(&empty));
    MPI_Win win;
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_fence(0, win));
    const int right = (t_rank + 1) % t_size;
    MPI_OK(MPI_Accumulate(res, 0, MPI_DOUBLE, right, 0, 0, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(res, 1, empty, right, 0, 0, MPI_DOUBLE, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, res, 1, empty, right, 0, 1, empty, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(NULL, 2, empty, NULL, 0, MPI_DOUBLE, right, 0, 0, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(buf[i], 7, "window after accumulates of no bytes");
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Type_free(&empty));
}

/* A shared window whose odd ranks have no memory: their parts query as size 0 and NULL. */
static void shared_empty_parts(void)
{
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank, MPI_INFO_NULL, &node));
    int nr, nn;
    MPI_OK(MPI_Comm_rank(node, &nr));
    MPI_OK(MPI_Comm_size(node, &nn));
    int *mine = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_shared(nr % 2 == 0 ? 4 * sizeof(int) : 0, sizeof(int), MPI_INFO_NULL, node, &mine, &win));
    if (nr % 2 == 0)
        for (int i = 0; i < 4; i++) mine[i] = 10 * nr + i;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    for (int q = 0; q < nn; q++) {
        MPI_Aint qs;
        int qu;
        int *qb;
        MPI_OK(MPI_Win_shared_query(win, q, &qs, &qu, &qb));
        if (q % 2 == 1) {
            CHECK(qs == 0 && qb == NULL, "part of rank %d: size %lld base %p, expected 0 and NULL", q, (long long)qs, (void *)qb);
        } else {
            CHECK(qs == 4 * sizeof(int) && qb != NULL, "part of rank %d: size %lld", q, (long long)qs);
            for (int i = 0; i < 4 && qb; i++) CHECK_EQ_INT(qb[i], 10 * q + i, "shared part read through the query");
        }
    }
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free(&node));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "rma_acc_any");
    small_windows();
    doubles_and_long_runs();
    dynamic_spanning();
    zero_bytes();
    shared_empty_parts();
    if (t_rank == 0) printf("rma_acc_any: ok (%d ranks)\n", t_size);
    MPI_Finalize();
    return 0;
}
