/* Groups, checked against sets computed locally (arrays of world ranks).
 *   Group_size / rank / incl / excl / range_incl / range_excl (strides,
 *   negative strides), union / intersection / difference (order rules of
 *   the standard), compare (IDENT / SIMILAR / UNEQUAL), translate_ranks
 *   (MPI_PROC_NULL -> MPI_PROC_NULL, absent -> MPI_UNDEFINED), Group_free,
 *   MPI_GROUP_EMPTY. Deterministic random subsets on top of fixed cases.
 * Groups are local objects; a communicator from one of them is still built
 * at the end to show that the group is usable. Works at any size. */
#include "common.h"

static MPI_Group wg;
static int n;

/* Open MPI 4.1 answers MPI_UNDEFINED for every rank (MPI_PROC_NULL
 * included) in Group_translate_ranks when the target group is empty.
 * Tolerated there (reported once), an error anywhere else. */
static void procnull_to_empty(int got, const char *what)
{
    static int warned = 0;
    if (got == MPI_PROC_NULL)
        return;
    if (t_is_openmpi() && got == MPI_UNDEFINED) {
        if (!warned)
            KNOWN_BUG_OR_FAIL(1, "%s: translate_ranks of MPI_PROC_NULL into an empty group gave "
                              "MPI_UNDEFINED (reported once)", what);
        warned = 1;
        return;
    }
    FAIL("%s: translate_ranks of MPI_PROC_NULL into an empty group: expected %d, got %d", what,
         MPI_PROC_NULL, got);
}

static int index_of(const int *a, int k, int v)
{
    for (int i = 0; i < k; i++)
        if (a[i] == v)
            return i;
    return -1;
}

/* g must hold exactly the world ranks exp[0..k-1] in this order */
static void check_group(MPI_Group g, const int *exp, int k, const char *what)
{
    int sz = -1, r = -2;
    MPI_OK(MPI_Group_size(g, &sz));
    if (sz != k)
        FAIL("%s: Group_size expected %d, got %d", what, k, sz);
    MPI_OK(MPI_Group_rank(g, &r));
    int myidx = index_of(exp, k, t_rank);
    if (r != (myidx < 0 ? MPI_UNDEFINED : myidx))
        FAIL("%s: Group_rank expected %d, got %d", what, myidx < 0 ? MPI_UNDEFINED : myidx, r);
    int *in = malloc(sizeof(int) * (size_t)(k + n + 1)), *out = malloc(sizeof(int) * (size_t)(k + n + 1));
    CHECK(in && out, "out of memory");
    if (k > 0) {
        for (int i = 0; i < k; i++) {
            in[i] = k - 1 - i;
            out[i] = -7;
        }
        MPI_OK(MPI_Group_translate_ranks(g, k, in, wg, out));
        for (int i = 0; i < k; i++)
            if (out[i] != exp[k - 1 - i])
                FAIL("%s: translate_ranks(g -> world) of %d: expected %d, got %d", what,
                     k - 1 - i, exp[k - 1 - i], out[i]);
    }
    /* world -> g, with MPI_PROC_NULL mixed in */
    for (int i = 0; i <= n; i++) {
        in[i] = i == n ? MPI_PROC_NULL : i;
        out[i] = -7;
    }
    MPI_OK(MPI_Group_translate_ranks(wg, n + 1, in, g, out));
    for (int i = 0; i <= n; i++) {
        int e = MPI_PROC_NULL;
        if (i < n) {
            e = index_of(exp, k, i);
            if (e < 0)
                e = MPI_UNDEFINED;
        }
        if (k == 0 && in[i] == MPI_PROC_NULL)
            procnull_to_empty(out[i], what);
        else if (out[i] != e)
            FAIL("%s: translate_ranks(world -> g) of %d: expected %d, got %d", what, in[i], e,
                 out[i]);
    }
    free(in);
    free(out);
}

static void expect_compare(MPI_Group a, MPI_Group b, int exp, const char *what)
{
    int res = -1;
    MPI_OK(MPI_Group_compare(a, b, &res));
    if (res != exp)
        FAIL("Group_compare(%s): expected %d, got %d (IDENT %d SIMILAR %d UNEQUAL %d)", what, exp,
             res, MPI_IDENT, MPI_SIMILAR, MPI_UNEQUAL);
}

static int local_compare(const int *a, int ka, const int *b, int kb)
{
    if (ka != kb)
        return MPI_UNEQUAL;
    int same = 1;
    for (int i = 0; i < ka; i++) {
        if (a[i] != b[i])
            same = 0;
        if (index_of(b, kb, a[i]) < 0)
            return MPI_UNEQUAL;
    }
    return same ? MPI_IDENT : MPI_SIMILAR;
}

static void gfree(MPI_Group *g)
{
    MPI_OK(MPI_Group_free(g));
    CHECK(*g == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");
}

/* a random subset of the world of size k in random order (as world ranks) */
static int rand_subset(uint64_t *s, int *a)
{
    int perm[64], k = (int)(t_rand(s) % (uint64_t)(n + 1));
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(t_rand(s) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < k; i++)
        a[i] = perm[i];
    return k;
}

static void set_ops(const int *a, int ka, const int *b, int kb, const char *what)
{
    int u[64], x[64], d[64], ku = 0, kx = 0, kd = 0;
    char w[128];
    for (int i = 0; i < ka; i++)
        u[ku++] = a[i];
    for (int i = 0; i < kb; i++)
        if (index_of(a, ka, b[i]) < 0)
            u[ku++] = b[i];
    for (int i = 0; i < ka; i++) {
        if (index_of(b, kb, a[i]) >= 0)
            x[kx++] = a[i];
        else
            d[kd++] = a[i];
    }
    MPI_Group ga, gb, gu, gx, gd;
    MPI_OK(MPI_Group_incl(wg, ka, a, &ga));
    MPI_OK(MPI_Group_incl(wg, kb, b, &gb));
    snprintf(w, sizeof w, "%s: incl a", what);
    check_group(ga, a, ka, w);
    snprintf(w, sizeof w, "%s: incl b", what);
    check_group(gb, b, kb, w);
    MPI_OK(MPI_Group_union(ga, gb, &gu));
    MPI_OK(MPI_Group_intersection(ga, gb, &gx));
    MPI_OK(MPI_Group_difference(ga, gb, &gd));
    snprintf(w, sizeof w, "%s: union", what);
    check_group(gu, u, ku, w);
    snprintf(w, sizeof w, "%s: intersection", what);
    check_group(gx, x, kx, w);
    snprintf(w, sizeof w, "%s: difference", what);
    check_group(gd, d, kd, w);
    snprintf(w, sizeof w, "%s: compare a b", what);
    expect_compare(ga, gb, local_compare(a, ka, b, kb), w);
    snprintf(w, sizeof w, "%s: compare a union", what);
    expect_compare(ga, gu, local_compare(a, ka, u, ku), w);
    gfree(&ga);
    gfree(&gb);
    gfree(&gu);
    gfree(&gx);
    gfree(&gd);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "group");
    n = t_size;
    CHECK(n <= 64, "this test supports at most 64 ranks");
    int all[64], e[64], k;
    for (int i = 0; i < n; i++)
        all[i] = i;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    check_group(wg, all, n, "world group");
    expect_compare(wg, wg, MPI_IDENT, "world, world");
    {
        MPI_Group sg;
        MPI_OK(MPI_Comm_group(MPI_COMM_SELF, &sg));
        int me = t_rank;
        check_group(sg, &me, 1, "self group");
        expect_compare(sg, wg, n == 1 ? MPI_IDENT : MPI_UNEQUAL, "self, world");
        gfree(&sg);
    }

    /* incl: reversed world -> SIMILAR */
    {
        MPI_Group g;
        for (int i = 0; i < n; i++)
            e[i] = n - 1 - i;
        MPI_OK(MPI_Group_incl(wg, n, e, &g));
        check_group(g, e, n, "incl reversed");
        expect_compare(g, wg, n == 1 ? MPI_IDENT : MPI_SIMILAR, "reversed, world");
        /* translate between two non-world groups */
        MPI_Group h;
        int odd[32], ko = 0;
        for (int i = 1; i < n; i += 2)
            odd[ko++] = i;
        MPI_OK(MPI_Group_incl(wg, ko, odd, &h));
        check_group(h, odd, ko, "incl odds");
        {
            int in[66], out[66];
            for (int i = 0; i < n; i++)
                in[i] = i;
            in[n] = MPI_PROC_NULL;
            MPI_OK(MPI_Group_translate_ranks(g, n + 1, in, h, out));
            for (int i = 0; i <= n; i++) {
                int ex = MPI_PROC_NULL;
                if (i < n) {
                    ex = index_of(odd, ko, n - 1 - i);
                    if (ex < 0)
                        ex = MPI_UNDEFINED;
                }
                if (ko == 0 && i == n)
                    procnull_to_empty(out[i], "translate reversed -> odds");
                else if (out[i] != ex)
                    FAIL("translate reversed -> odds of %d: expected %d, got %d", in[i], ex, out[i]);
            }
        }
        gfree(&h);
        gfree(&g);
    }

    /* excl */
    {
        MPI_Group g;
        int ex[64], kx = 0;
        for (int i = n - 1; i >= 0; i -= 3)
            ex[kx++] = i;
        k = 0;
        for (int i = 0; i < n; i++)
            if (index_of(ex, kx, i) < 0)
                e[k++] = i;
        MPI_OK(MPI_Group_excl(wg, kx, ex, &g));
        check_group(g, e, k, "excl every third from the top");
        gfree(&g);
        MPI_OK(MPI_Group_excl(wg, 0, ex, &g));
        check_group(g, all, n, "excl nothing");
        expect_compare(g, wg, MPI_IDENT, "excl nothing, world");
        gfree(&g);
        MPI_OK(MPI_Group_excl(wg, n, all, &g));
        check_group(g, e, 0, "excl everything");
        expect_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "excl everything, MPI_GROUP_EMPTY");
        gfree(&g);
    }

    /* range_incl: evens ascending, then odds descending (negative stride) */
    {
        MPI_Group g;
        int ranges[2][3], nr = 0;
        k = 0;
        ranges[nr][0] = 0;
        ranges[nr][1] = n - 1;
        ranges[nr][2] = 2;
        nr++;
        for (int i = 0; i < n; i += 2)
            e[k++] = i;
        if (n >= 2) {
            int lastodd = (n - 1) % 2 ? n - 1 : n - 2;
            ranges[nr][0] = lastodd;
            ranges[nr][1] = 0; /* last need not be hit exactly */
            ranges[nr][2] = -2;
            nr++;
            for (int i = lastodd; i >= 0; i -= 2)
                e[k++] = i;
        }
        MPI_OK(MPI_Group_range_incl(wg, nr, ranges, &g));
        check_group(g, e, k, "range_incl evens up, odds down");
        expect_compare(g, wg, n <= 2 ? MPI_IDENT : MPI_SIMILAR, "range_incl, world");
        gfree(&g);
        /* one range, stride larger than the span */
        ranges[0][0] = n - 1;
        ranges[0][1] = 0;
        ranges[0][2] = -(n + 5);
        MPI_OK(MPI_Group_range_incl(wg, 1, ranges, &g));
        e[0] = n - 1;
        check_group(g, e, 1, "range_incl big negative stride");
        gfree(&g);
        /* full reverse range, stride -1 */
        ranges[0][0] = n - 1;
        ranges[0][1] = 0;
        ranges[0][2] = -1;
        MPI_OK(MPI_Group_range_incl(wg, 1, ranges, &g));
        for (int i = 0; i < n; i++)
            e[i] = n - 1 - i;
        check_group(g, e, n, "range_incl stride -1");
        gfree(&g);
        /* stride 3 ascending + a singleton range */
        nr = 0;
        k = 0;
        ranges[nr][0] = 0;
        ranges[nr][1] = n - 1;
        ranges[nr][2] = 3;
        nr++;
        for (int i = 0; i < n; i += 3)
            e[k++] = i;
        if (n >= 3) {
            /* the top rank that is not a multiple of 3 */
            ranges[nr][0] = ranges[nr][1] = (n - 1) % 3 == 0 ? n - 2 : n - 1;
            ranges[nr][2] = 1;
            e[k++] = ranges[nr][0];
            nr++;
        }
        MPI_OK(MPI_Group_range_incl(wg, nr, ranges, &g));
        check_group(g, e, k, "range_incl stride 3 + singleton");
        gfree(&g);
    }

    /* range_excl */
    {
        MPI_Group g;
        int ranges[2][3];
        ranges[0][0] = n - 1;
        ranges[0][1] = 0;
        ranges[0][2] = -2; /* n-1, n-3, ... */
        k = 0;
        for (int i = 0; i < n; i++)
            if ((n - 1 - i) % 2 != 0)
                e[k++] = i;
        MPI_OK(MPI_Group_range_excl(wg, 1, ranges, &g));
        check_group(g, e, k, "range_excl n-1 down by 2");
        gfree(&g);
        if (n >= 4) {
            ranges[0][0] = 1;
            ranges[0][1] = 2;
            ranges[0][2] = 1;
            ranges[1][0] = n - 1;
            ranges[1][1] = n - 1;
            ranges[1][2] = 5;
            k = 0;
            for (int i = 0; i < n; i++)
                if (i != 1 && i != 2 && i != n - 1)
                    e[k++] = i;
            MPI_OK(MPI_Group_range_excl(wg, 2, ranges, &g));
            check_group(g, e, k, "range_excl two ranges");
            gfree(&g);
        }
    }

    /* MPI_GROUP_EMPTY */
    {
        int sz = -1, r = -1;
        MPI_Group g;
        MPI_OK(MPI_Group_size(MPI_GROUP_EMPTY, &sz));
        MPI_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
        CHECK(sz == 0 && r == MPI_UNDEFINED, "MPI_GROUP_EMPTY: size %d rank %d", sz, r);
        MPI_OK(MPI_Group_union(MPI_GROUP_EMPTY, wg, &g));
        check_group(g, all, n, "union(empty, world)");
        expect_compare(g, wg, MPI_IDENT, "union(empty, world), world");
        gfree(&g);
        MPI_OK(MPI_Group_intersection(wg, MPI_GROUP_EMPTY, &g));
        check_group(g, e, 0, "intersection(world, empty)");
        expect_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "intersection(world, empty), empty");
        gfree(&g);
        MPI_OK(MPI_Group_difference(wg, wg, &g));
        check_group(g, e, 0, "difference(world, world)");
        gfree(&g);
        MPI_OK(MPI_Group_difference(MPI_GROUP_EMPTY, wg, &g));
        check_group(g, e, 0, "difference(empty, world)");
        gfree(&g);
        MPI_OK(MPI_Group_incl(wg, 0, e, &g));
        check_group(g, e, 0, "incl of nothing");
        gfree(&g);
        expect_compare(MPI_GROUP_EMPTY, wg, MPI_UNEQUAL, "empty, world");
        {
            int in[2] = {0, MPI_PROC_NULL}, out[2] = {-7, -7};
            MPI_OK(MPI_Group_translate_ranks(wg, 2, in, MPI_GROUP_EMPTY, out));
            CHECK(out[0] == MPI_UNDEFINED, "translate world -> empty of 0: got %d, expected %d",
                  out[0], MPI_UNDEFINED);
            procnull_to_empty(out[1], "translate world -> MPI_GROUP_EMPTY");
        }
    }

    /* fixed set operations with order rules */
    {
        int a[64], b[64], ka = 0, kb = 0;
        for (int i = n - 1; i >= 0; i -= 2)
            a[ka++] = i;
        for (int i = 0; i < n; i += 3)
            b[kb++] = i;
        set_ops(a, ka, b, kb, "fixed a/b");
        set_ops(b, kb, a, ka, "fixed b/a");
        set_ops(a, ka, a, ka, "fixed a/a");
        set_ops(all, n, a, ka, "fixed world/a");
    }
    /* random */
    {
        uint64_t s = 0x1234567ull + (uint64_t)n;
        for (int it = 0; it < 200; it++) {
            int a[64], b[64];
            int ka = rand_subset(&s, a), kb = rand_subset(&s, b);
            char w[64];
            snprintf(w, sizeof w, "random case %d", it);
            set_ops(a, ka, b, kb, w);
        }
    }

    /* a group from the operations still builds a working communicator */
    {
        MPI_Group g;
        MPI_Comm c;
        int ranges[1][3] = {{n - 1, 0, -1}};
        MPI_OK(MPI_Group_range_incl(wg, 1, ranges, &g));
        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
        int r = -1, v = t_rank, sum = -1;
        MPI_OK(MPI_Comm_rank(c, &r));
        CHECK_EQ_INT(r, n - 1 - t_rank, "rank in the communicator of a reversed group");
        MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK_EQ_INT(sum, n * (n - 1) / 2, "Allreduce on the reversed communicator");
        MPI_OK(MPI_Comm_free(&c));
        gfree(&g);
    }
    gfree(&wg);
    t_done();
    return 0;
}
