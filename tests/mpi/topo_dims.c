/* MPI_Dims_create gives the most balanced grid: the smallest difference between its largest
 * and smallest dimension, then the largest smallest dimension, the largest second smallest, ...;
 * non-increasing; fixed entries kept. Checked against an exhaustive search. MPI_Cart_sub with no
 * dimension left: a zero-dimensional grid on rank 0 of the grid, MPI_COMM_NULL elsewhere. */
#include "common.h"

enum { MAXD = 6 };

static int best[MAXD], cur[MAXD], have;

/* Is cur (k entries, non-increasing) better than best? */
static int better(int k)
{
    if (!have)
        return 1;
    int sc = cur[0] - cur[k - 1], sb = best[0] - best[k - 1];
    if (sc != sb)
        return sc < sb;
    for (int i = k - 1; i >= 0; i--)
        if (cur[i] != best[i])
            return cur[i] > best[i];
    return 0;
}

/* Every non-increasing factorisation of n into k - slot factors of at most maxf. */
static void search(int n, int slot, int k, int maxf)
{
    if (slot == k - 1) {
        if (n > maxf)
            return;
        cur[slot] = n;
        if (better(k)) {
            memcpy(best, cur, sizeof(int) * (size_t)k);
            have = 1;
        }
        return;
    }
    for (int d = 1; d <= maxf && d <= n; d++)
        if (n % d == 0) {
            cur[slot] = d;
            search(n / d, slot + 1, k, d);
        }
}

static void check_dims(int n, int k)
{
    int dims[MAXD] = {0};
    MPI_OK(MPI_Dims_create(n, k, dims));
    have = 0;
    search(n, 0, k, n);
    for (int i = 0; i < k; i++)
        if (dims[i] != best[i])
            FAIL("MPI_Dims_create(%d, %d): dimension %d is %d, expected %d", n, k, i, dims[i], best[i]);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "topo_dims");
    /* Each rank checks a share of the sizes. */
    for (int n = 1 + t_rank; n <= 1500; n += t_size) {
        check_dims(n, 1);
        check_dims(n, 2);
        check_dims(n, 3);
        if (n % 7 == 0 || n < 200)
            check_dims(n, 4);
    }
    check_dims(72, 2); /* 9 x 8, not 12 x 6 */
    check_dims(2 * 2 * 2 * 3 * 3 * 5 * 7, 4);

    /* Fixed entries stay; the free ones are balanced and non-increasing. */
    int dims[4] = {0, 3, 0, 0};
    MPI_OK(MPI_Dims_create(3 * 72, 4, dims));
    CHECK(dims[1] == 3 && dims[0] == 6 && dims[2] == 4 && dims[3] == 3, "Dims_create(216, {0,3,0,0}): %d %d %d %d",
          dims[0], dims[1], dims[2], dims[3]);

    /* Cart_sub keeping no dimension. */
    MPI_Comm cart, sub;
    int d1 = t_size, p1 = 0;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 0, &cart));
    int remain = 0;
    MPI_OK(MPI_Cart_sub(cart, &remain, &sub));
    int crank;
    MPI_OK(MPI_Comm_rank(cart, &crank));
    if (crank == 0) {
        int size = -1, nd = -1, status = -1, result = -1;
        CHECK(sub != MPI_COMM_NULL, "rank 0 got MPI_COMM_NULL");
        MPI_OK(MPI_Comm_size(sub, &size));
        CHECK_EQ_INT(size, 1, "size of the zero-dimensional grid");
        MPI_OK(MPI_Topo_test(sub, &status));
        CHECK_EQ_INT(status, MPI_CART, "topology of the zero-dimensional grid");
        MPI_OK(MPI_Cartdim_get(sub, &nd));
        CHECK_EQ_INT(nd, 0, "dimensions of the zero-dimensional grid");
        MPI_OK(MPI_Comm_compare(MPI_COMM_SELF, sub, &result));
        CHECK_EQ_INT(result, MPI_CONGRUENT, "zero-dimensional grid against MPI_COMM_SELF");
        MPI_OK(MPI_Comm_free(&sub));
    } else {
        CHECK(sub == MPI_COMM_NULL, "rank %d got a communicator", crank);
    }
    MPI_OK(MPI_Comm_free(&cart));
    t_done();
    return 0;
}
