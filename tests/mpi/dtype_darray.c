/* MPI_Type_create_darray: for block, cyclic(k) and undistributed dimensions, default and
 * explicit dargs, C and Fortran order, every process of a grid. A global array whose elements
 * are their own linear index is packed with each process's darray type and compared with the
 * elements a direct computation says the process owns, in array order; the processes' parts
 * cover the array exactly once; size, extent, envelope and contents are checked, and the type
 * carries data through MPI_Sendrecv. Each rank checks a share of the cases. */
#include "common.h"

enum { MAXD = 4 };

typedef struct {
    int ndims, gsizes[MAXD], distribs[MAXD], dargs[MAXD], psizes[MAXD], order;
} dcase;

/* Whether index g of a dimension belongs to coordinate c, by the standard's definitions. */
static int owns(const dcase *k, int d, int c, int g)
{
    int p = k->psizes[d], n = k->gsizes[d], a = k->dargs[d];
    switch (k->distribs[d]) {
    case MPI_DISTRIBUTE_NONE:
        return 1;
    case MPI_DISTRIBUTE_BLOCK: {
        int b = a == MPI_DISTRIBUTE_DFLT_DARG ? (n + p - 1) / p : a;
        return g / b == c;
    }
    default: {
        int b = a == MPI_DISTRIBUTE_DFLT_DARG ? 1 : a;
        return (g / b) % p == c;
    }
    }
}

/* The elements rank r owns, as linear indices in array order; returns how many. */
static int expected(const dcase *k, int r, int *out)
{
    int coords[MAXD], procs = 1, total = 1, n = 0;
    for (int d = 0; d < k->ndims; d++)
        procs *= k->psizes[d], total *= k->gsizes[d];
    for (int d = 0, rem = r; d < k->ndims; d++) { /* row-major process grid */
        procs /= k->psizes[d];
        coords[d] = rem / procs;
        rem %= procs;
    }
    for (int lin = 0; lin < total; lin++) {
        int rest = lin, mine = 1;
        /* Storage order: the last dimension varies fastest in C order, the first in Fortran. */
        for (int j = 0; j < k->ndims; j++) {
            int d = k->order == MPI_ORDER_C ? k->ndims - 1 - j : j;
            int g = rest % k->gsizes[d];
            rest /= k->gsizes[d];
            mine = mine && owns(k, d, coords[d], g);
        }
        if (mine)
            out[n++] = lin;
    }
    return n;
}

static void check_case(const dcase *k, int index)
{
    int procs = 1, total = 1;
    for (int d = 0; d < k->ndims; d++)
        procs *= k->psizes[d], total *= k->gsizes[d];
    int *global = malloc(sizeof(int) * (size_t)total), *want = malloc(sizeof(int) * (size_t)total);
    int *got = malloc(sizeof(int) * (size_t)total + 1), *seen = calloc((size_t)total, sizeof(int));
    for (int i = 0; i < total; i++)
        global[i] = i;
    for (int r = 0; r < procs; r++) {
        MPI_Datatype t;
        MPI_OK(MPI_Type_create_darray(procs, r, k->ndims, k->gsizes, k->distribs, k->dargs, k->psizes, k->order,
                                      MPI_INT, &t));
        MPI_OK(MPI_Type_commit(&t));
        int n = expected(k, r, want), size, pos = 0;
        MPI_Aint lb, extent;
        MPI_OK(MPI_Type_size(t, &size));
        MPI_OK(MPI_Type_get_extent(t, &lb, &extent));
        CHECK(size == n * (int)sizeof(int), "case %d rank %d: size %d, expected %d ints", index, r, size, n);
        CHECK(lb == 0 && extent == (MPI_Aint)total * (MPI_Aint)sizeof(int),
              "case %d rank %d: lb %ld extent %ld, expected 0 and %d ints", index, r, (long)lb, (long)extent, total);
        MPI_OK(MPI_Pack(global, 1, t, got, (int)sizeof(int) * total + 4, &pos, MPI_COMM_SELF));
        CHECK(pos == size, "case %d rank %d: packed %d bytes", index, r, pos);
        for (int i = 0; i < n; i++) {
            CHECK(got[i] == want[i], "case %d rank %d: element %d is %d, expected %d", index, r, i, got[i],
                  want[i]);
            seen[got[i]]++;
        }
        /* Through a message: the darray elements into a contiguous buffer and back. */
        int *local = malloc(sizeof(int) * (size_t)(n + 1)), *back = malloc(sizeof(int) * (size_t)total);
        for (int i = 0; i < total; i++)
            back[i] = -1;
        MPI_OK(MPI_Sendrecv(global, 1, t, 0, 7, local, n, MPI_INT, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Sendrecv(local, n, MPI_INT, 0, 8, back, 1, t, 0, 8, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        for (int i = 0, j = 0; i < total; i++) {
            int owned = j < n && want[j] == i;
            CHECK(back[i] == (owned ? i : -1), "case %d rank %d: element %d after the round trip is %d", index, r,
                  i, back[i]);
            j += owned;
        }
        free(local);
        free(back);
        /* Envelope and contents: the arguments as given. */
        int ni, na, nt, combiner;
        MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &combiner));
        CHECK(combiner == MPI_COMBINER_DARRAY && ni == 4 * k->ndims + 4 && na == 0 && nt == 1,
              "case %d: envelope combiner %d, %d ints, %d addresses, %d types", index, combiner, ni, na, nt);
        int ints[4 * MAXD + 4];
        MPI_Datatype old;
        MPI_OK(MPI_Type_get_contents(t, ni, 0, 1, ints, NULL, &old));
        CHECK(ints[0] == procs && ints[1] == r && ints[2] == k->ndims && ints[ni - 1] == k->order && old == MPI_INT,
              "case %d: contents head %d %d %d, order %d", index, ints[0], ints[1], ints[2], ints[ni - 1]);
        for (int d = 0; d < k->ndims; d++)
            CHECK(ints[3 + d] == k->gsizes[d] && ints[3 + k->ndims + d] == k->distribs[d] &&
                      ints[3 + 2 * k->ndims + d] == k->dargs[d] && ints[3 + 3 * k->ndims + d] == k->psizes[d],
                  "case %d: contents of dimension %d", index, d);
        MPI_OK(MPI_Type_free(&t));
    }
    for (int i = 0; i < total; i++)
        CHECK(seen[i] == 1, "case %d: element %d is held %d times", index, i, seen[i]);
    free(global);
    free(want);
    free(got);
    free(seen);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "dtype_darray");
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
    const int D = MPI_DISTRIBUTE_DFLT_DARG;
    const dcase cases[] = {
        {1, {10}, {B}, {D}, {3}, MPI_ORDER_C},
        {1, {10}, {B}, {4}, {3}, MPI_ORDER_C},
        {1, {11}, {C}, {D}, {4}, MPI_ORDER_C},
        {1, {11}, {C}, {3}, {2}, MPI_ORDER_FORTRAN},
        {1, {7}, {B}, {D}, {9}, MPI_ORDER_C}, /* processes that hold nothing */
        {2, {9, 6}, {B, B}, {D, D}, {3, 3}, MPI_ORDER_C},
        {2, {9, 6}, {B, B}, {D, D}, {3, 2}, MPI_ORDER_FORTRAN},
        {2, {8, 7}, {C, B}, {2, D}, {3, 2}, MPI_ORDER_C},
        {2, {8, 7}, {C, C}, {3, 2}, {2, 3}, MPI_ORDER_FORTRAN},
        {2, {5, 4}, {N, C}, {D, D}, {1, 3}, MPI_ORDER_C},
        {3, {4, 5, 6}, {B, N, C}, {D, D, 2}, {2, 1, 3}, MPI_ORDER_C},
        {3, {4, 5, 6}, {C, B, N}, {D, 2, D}, {3, 3, 1}, MPI_ORDER_FORTRAN},
        {4, {3, 4, 2, 5}, {B, C, N, B}, {D, D, D, 2}, {2, 2, 1, 3}, MPI_ORDER_C},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int i = t_rank; i < ncases; i += t_size)
        check_case(&cases[i], i);

    /* An oldtype with a lower bound of its own: the darray's bounds are still 0 and the whole
     * array, and element j of the array is the int at j * 8. */
    {
        MPI_Datatype slot, t2;
        MPI_Aint lb, extent;
        int gs6[1] = {6}, blk[1] = {MPI_DISTRIBUTE_BLOCK}, dflt[1] = {MPI_DISTRIBUTE_DFLT_DARG}, two[1] = {2};
        int slots[12], got[4] = {0, 0, 0, 0}, pos = 0;
        for (int i = 0; i < 12; i++)
            slots[i] = i % 2 ? -1 : 100 + i / 2;
        MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 8, &slot));
        MPI_OK(MPI_Type_create_darray(2, 1, 1, gs6, blk, dflt, two, MPI_ORDER_C, slot, &t2));
        MPI_OK(MPI_Type_commit(&t2));
        MPI_OK(MPI_Type_get_extent(t2, &lb, &extent));
        CHECK(lb == 0 && extent == 48, "darray of a resized int: lb %ld extent %ld, expected 0 and 48", (long)lb,
              (long)extent);
        MPI_OK(MPI_Pack(slots, 1, t2, got, (int)sizeof got, &pos, MPI_COMM_SELF));
        CHECK(pos == 12 && got[0] == 103 && got[1] == 104 && got[2] == 105,
              "darray of a resized int packed %d bytes: %d %d %d", pos, got[0], got[1], got[2]);
        MPI_OK(MPI_Type_free(&t2));
        MPI_OK(MPI_Type_free(&slot));
    }

    /* The large-count form: the same type from MPI_Count global sizes; one that does not fit an
     * int is refused (MPI_ERR_COUNT). */
    {
        MPI_Datatype a, b;
        int gs2[2] = {9, 6}, dist2[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
        int darg2[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps2[2] = {2, 3};
        MPI_Count gsc[2] = {9, 6}, huge[2] = {(MPI_Count)1 << 33, 6};
        int src[54], pa[54], pb[54], sa = 0, sb = 0;
        for (int i = 0; i < 54; i++)
            src[i] = 7 * i + 1;
        MPI_OK(MPI_Type_create_darray(6, 4, 2, gs2, dist2, darg2, ps2, MPI_ORDER_FORTRAN, MPI_INT, &a));
        MPI_OK(MPI_Type_create_darray_c(6, 4, 2, gsc, dist2, darg2, ps2, MPI_ORDER_FORTRAN, MPI_INT, &b));
        MPI_OK(MPI_Type_commit(&a));
        MPI_OK(MPI_Type_commit(&b));
        MPI_OK(MPI_Pack(src, 1, a, pa, (int)sizeof pa, &sa, MPI_COMM_SELF));
        MPI_OK(MPI_Pack(src, 1, b, pb, (int)sizeof pb, &sb, MPI_COMM_SELF));
        CHECK(sa == sb && sa > 0 && memcmp(pa, pb, (size_t)sa) == 0,
              "MPI_Type_create_darray_c packs %d bytes, the int form %d", sb, sa);
        MPI_OK(MPI_Type_free(&a));
        MPI_OK(MPI_Type_free(&b));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Type_create_darray_c(6, 4, 2, huge, dist2, darg2, ps2, MPI_ORDER_C, MPI_INT, &b), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_COUNT, "a global size of 2^33 gave error class %d, expected MPI_ERR_COUNT", cls);
    }

    /* Arguments MPI does not allow. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t;
    int gs[1] = {10}, dist[1] = {B}, small[1] = {3}, ps[1] = {3}, none[1] = {N};
    CHECK(MPI_Type_create_darray(3, 0, 1, gs, dist, small, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS,
          "a block darg that does not cover the dimension was accepted");
    CHECK(MPI_Type_create_darray(3, 0, 1, gs, none, small, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS,
          "MPI_DISTRIBUTE_NONE over 3 processes was accepted");
    CHECK(MPI_Type_create_darray(4, 0, 1, gs, dist, small, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS,
          "a grid of 3 processes for size 4 was accepted");
    CHECK(MPI_Type_create_darray(3, 3, 1, gs, dist, small, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS,
          "rank 3 of 3 was accepted");

    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("dtype_darray: OK (%d cases, np %d)\n", ncases, t_size);
    MPI_Finalize();
    return 0;
}
