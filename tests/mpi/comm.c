/* Communicator management.
 *   - Comm_dup, Comm_idup (+Wait), Comm_dup_with_info, Comm_split (several
 *     colours, MPI_UNDEFINED -> MPI_COMM_NULL, keys reversing the order),
 *     Comm_split_type(MPI_COMM_TYPE_SHARED) (one-node job: everyone
 *     together), Comm_create, Comm_create_group (subset, with a tag),
 *     Comm_free (handle becomes MPI_COMM_NULL);
 *   - Comm_compare: IDENT, CONGRUENT (dup), SIMILAR (reversed keys over the
 *     same group), UNEQUAL; Comm_group; Comm_test_inter; names; info;
 *   - on every new communicator: a ring with Sendrecv, Allreduce (which
 *     also checks the rank -> world rank map), Bcast and Barrier, all with
 *     data checked; a message sent on the child is never seen on the parent
 *     (and vice versa) even with the same tag and ANY_SOURCE/ANY_TAG.
 * Works at any size, including 1. */
#include "common.h"

static int crank(MPI_Comm c)
{
    int r = -1;
    MPI_OK(MPI_Comm_rank(c, &r));
    return r;
}

/* members[i] = world rank of rank i of c; n = expected size of c. */
static void exercise(MPI_Comm c, const char *what, int salt, const int *members, int n)
{
    int r = -1, sz = -1, myidx = -1, flag = 1;
    MPI_OK(MPI_Comm_size(c, &sz));
    MPI_OK(MPI_Comm_rank(c, &r));
    for (int i = 0; i < n; i++)
        if (members[i] == t_rank)
            myidx = i;
    if (sz != n)
        FAIL("%s: Comm_size expected %d, got %d", what, n, sz);
    if (r != myidx)
        FAIL("%s: Comm_rank expected %d, got %d", what, myidx, r);
    MPI_OK(MPI_Comm_test_inter(c, &flag));
    if (flag != 0)
        FAIL("%s: Comm_test_inter expected 0, got %d", what, flag);

    /* ring */
    {
        int right = (r + 1) % n, left = (r + n - 1) % n;
        int out[3] = {salt, r, r * r + salt}, in[3] = {-1, -1, -1}, cnt = -1;
        MPI_Status st;
        MPI_OK(MPI_Sendrecv(out, 3, MPI_INT, right, 11, in, 3, MPI_INT, left, 11, c, &st));
        MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
        if (cnt != 3 || st.MPI_SOURCE != left || st.MPI_TAG != 11)
            FAIL("%s: ring status: expected count 3 source %d tag 11, got %d %d %d", what, left,
                 cnt, st.MPI_SOURCE, st.MPI_TAG);
        if (in[0] != salt || in[1] != left || in[2] != left * left + salt)
            FAIL("%s: ring data: expected {%d,%d,%d}, got {%d,%d,%d}", what, salt, left,
                 left * left + salt, in[0], in[1], in[2]);
    }
    /* Allreduce: sum, and the map comm rank -> world rank */
    {
        long long v = (long long)r + salt, sum = -1;
        MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG_LONG, MPI_SUM, c));
        long long exp = (long long)n * salt + (long long)n * (n - 1) / 2;
        if (sum != exp)
            FAIL("%s: Allreduce sum expected %lld, got %lld", what, exp, sum);
        int *map = calloc((size_t)t_size, sizeof(int)), *res = calloc((size_t)t_size, sizeof(int));
        CHECK(map && res, "out of memory");
        map[t_rank] = r + 1;
        MPI_OK(MPI_Allreduce(map, res, t_size, MPI_INT, MPI_SUM, c));
        for (int w = 0; w < t_size; w++) {
            int exp_w = 0;
            for (int i = 0; i < n; i++)
                if (members[i] == w)
                    exp_w = i + 1;
            if (res[w] != exp_w)
                FAIL("%s: Allreduce membership map at world rank %d: expected %d, got %d", what,
                     w, exp_w, res[w]);
        }
        free(map);
        free(res);
    }
    /* Bcast from the last rank */
    {
        int buf[100];
        for (int i = 0; i < 100; i++)
            buf[i] = r == n - 1 ? salt * 1000 + i : -1;
        MPI_OK(MPI_Bcast(buf, 100, MPI_INT, n - 1, c));
        for (int i = 0; i < 100; i++)
            if (buf[i] != salt * 1000 + i)
                FAIL("%s: Bcast index %d: expected %d, got %d", what, i, salt * 1000 + i, buf[i]);
    }
    MPI_OK(MPI_Barrier(c));
}

/* Messages on child (a communicator derived from parent, containing this
 * rank) must not be matched on parent and vice versa. Collective over
 * parent (non-members of child pass MPI_COMM_NULL). */
static void no_crossmatch(MPI_Comm parent, MPI_Comm child, const char *what)
{
    const int tag = 5;
    MPI_Status st;
    int flag = -1;
    MPI_OK(MPI_Barrier(parent));
    if (child != MPI_COMM_NULL) {
        int r, n, out = 4242 + t_rank, in = -1;
        MPI_Request rq;
        MPI_OK(MPI_Comm_rank(child, &r));
        MPI_OK(MPI_Comm_size(child, &n));
        MPI_OK(MPI_Isend(&out, 1, MPI_INT, (r + 1) % n, tag, child, &rq));
        MPI_OK(MPI_Probe(MPI_ANY_SOURCE, tag, child, &st)); /* it has arrived on child */
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, parent, &flag, &st));
        if (flag)
            FAIL("%s: a message sent on the child communicator is visible on the parent "
                 "(source %d tag %d)", what, st.MPI_SOURCE, st.MPI_TAG);
        MPI_OK(MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, child, &st));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (st.MPI_SOURCE != (r + n - 1) % n || st.MPI_TAG != tag)
            FAIL("%s: child message status: expected source %d tag %d, got %d %d", what,
                 (r + n - 1) % n, tag, st.MPI_SOURCE, st.MPI_TAG);
        (void)in;
        /* and the other way: a parent message to myself is not seen on child */
        MPI_OK(MPI_Isend(&out, 1, MPI_INT, crank(parent), tag, parent, &rq));
        MPI_OK(MPI_Probe(MPI_ANY_SOURCE, tag, parent, &st));
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, child, &flag, &st));
        if (flag)
            FAIL("%s: a message sent on the parent communicator is visible on the child "
                 "(source %d tag %d)", what, st.MPI_SOURCE, st.MPI_TAG);
        MPI_OK(MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, parent, &st));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (in != out)
            FAIL("%s: parent self message: expected %d, got %d", what, out, in);
    }
    MPI_OK(MPI_Barrier(parent));
}

static void expect_compare(MPI_Comm a, MPI_Comm b, int exp, const char *what)
{
    int res = -1;
    MPI_OK(MPI_Comm_compare(a, b, &res));
    if (res != exp)
        FAIL("Comm_compare(%s): expected %d, got %d (IDENT %d CONGRUENT %d SIMILAR %d UNEQUAL %d)",
             what, exp, res, MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL);
}

static void expect_group_compare(MPI_Comm c, MPI_Group g, int exp, const char *what)
{
    MPI_Group cg = MPI_GROUP_NULL;
    int res = -1;
    MPI_OK(MPI_Comm_group(c, &cg));
    MPI_OK(MPI_Group_compare(cg, g, &res));
    if (res != exp)
        FAIL("Group_compare(%s): expected %d, got %d", what, exp, res);
    MPI_OK(MPI_Group_free(&cg));
    CHECK(cg == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");
}

static void free_comm(MPI_Comm *c, const char *what)
{
    MPI_OK(MPI_Comm_free(c));
    if (*c != MPI_COMM_NULL)
        FAIL("%s: Comm_free did not set the handle to MPI_COMM_NULL", what);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "comm");
    const int n = t_size;
    int *all = malloc(sizeof(int) * (size_t)n), *m = malloc(sizeof(int) * (size_t)n);
    CHECK(all && m, "out of memory");
    for (int i = 0; i < n; i++)
        all[i] = i;
    MPI_Group wgroup = MPI_GROUP_NULL;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wgroup));

    /* world itself */
    exercise(MPI_COMM_WORLD, "world", 1, all, n);
    expect_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, "world, world");
    expect_compare(MPI_COMM_SELF, MPI_COMM_SELF, MPI_IDENT, "self, self");
    expect_compare(MPI_COMM_WORLD, MPI_COMM_SELF, n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL,
                   "world, self");
    {
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
        if (strcmp(name, "MPI_COMM_WORLD") != 0 || len != (int)strlen(name))
            FAIL("Comm_get_name(MPI_COMM_WORLD): expected 'MPI_COMM_WORLD', got '%s' (len %d)",
                 name, len);
        MPI_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
        if (strcmp(name, "MPI_COMM_SELF") != 0 || len != (int)strlen(name))
            FAIL("Comm_get_name(MPI_COMM_SELF): expected 'MPI_COMM_SELF', got '%s' (len %d)",
                 name, len);
    }

    /* Comm_dup */
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD, "Comm_dup returned a bad handle");
    exercise(dup, "dup", 2, all, n);
    no_crossmatch(MPI_COMM_WORLD, dup, "dup vs world");
    expect_compare(dup, MPI_COMM_WORLD, MPI_CONGRUENT, "dup, world");
    expect_compare(dup, dup, MPI_IDENT, "dup, dup");
    expect_group_compare(dup, wgroup, MPI_IDENT, "group of dup vs world group");

    /* names */
    {
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        name[0] = 'x';
        name[1] = 0;
        MPI_OK(MPI_Comm_get_name(dup, name, &len));
        if (name[0] != 0 || len != 0)
            FAIL("Comm_get_name of a new dup: expected '' (len 0), got '%s' (len %d)", name, len);
        MPI_OK(MPI_Comm_set_name(dup, "weft dup communicator"));
        MPI_OK(MPI_Comm_get_name(dup, name, &len));
        if (strcmp(name, "weft dup communicator") != 0 || len != (int)strlen(name))
            FAIL("Comm_get_name after set: expected 'weft dup communicator', got '%s' (len %d)",
                 name, len);
        MPI_OK(MPI_Comm_set_name(dup, "renamed"));
        MPI_OK(MPI_Comm_get_name(dup, name, &len));
        if (strcmp(name, "renamed") != 0 || len != 7)
            FAIL("Comm_get_name after rename: expected 'renamed', got '%s' (len %d)", name, len);
        /* the name of the parent is unchanged */
        MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
        CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "world renamed to '%s'", name);
    }

    /* Comm_set_info / Comm_get_info */
    {
        MPI_Info in = MPI_INFO_NULL, out = MPI_INFO_NULL;
        int nkeys = -1;
        MPI_OK(MPI_Info_create(&in));
        MPI_OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "false"));
        MPI_OK(MPI_Comm_set_info(dup, in));
        MPI_OK(MPI_Info_free(&in));
        MPI_OK(MPI_Comm_get_info(dup, &out));
        CHECK(out != MPI_INFO_NULL, "Comm_get_info returned MPI_INFO_NULL");
        MPI_OK(MPI_Info_get_nkeys(out, &nkeys));
        CHECK(nkeys >= 0, "Info_get_nkeys of Comm_get_info result: %d", nkeys);
        {
            char v[MPI_MAX_INFO_VAL + 1];
            int flag = 0;
            MPI_OK(MPI_Info_get(out, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, v, &flag));
            if (flag && strcmp(v, "false") != 0)
                FAIL("Comm_get_info: mpi_assert_no_any_tag expected 'false', got '%s'", v);
        }
        MPI_OK(MPI_Info_free(&out));
        exercise(dup, "dup after set_info", 3, all, n);
    }

    /* Comm_idup */
    {
        MPI_Comm idup = MPI_COMM_NULL;
        MPI_Request rq = MPI_REQUEST_NULL;
        MPI_OK(MPI_Comm_idup(dup, &idup, &rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(rq == MPI_REQUEST_NULL, "Wait did not free the Comm_idup request");
        exercise(idup, "idup", 4, all, n);
        no_crossmatch(dup, idup, "idup vs dup");
        expect_compare(idup, dup, MPI_CONGRUENT, "idup, dup");
        free_comm(&idup, "idup");
    }

    /* Comm_dup_with_info */
    {
        MPI_Comm c = MPI_COMM_NULL;
        MPI_Info info = MPI_INFO_NULL;
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "mpi_assert_exact_length", "false"));
        MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
        MPI_OK(MPI_Info_free(&info));
        exercise(c, "dup_with_info", 5, all, n);
        no_crossmatch(MPI_COMM_WORLD, c, "dup_with_info vs world");
        expect_compare(c, MPI_COMM_WORLD, MPI_CONGRUENT, "dup_with_info, world");
        expect_compare(c, dup, MPI_CONGRUENT, "dup_with_info, dup");
        free_comm(&c, "dup_with_info");
    }

    /* Comm_split: colour rank % 3, last rank (when n > 2) MPI_UNDEFINED, key -rank */
    {
        MPI_Comm c = MPI_COMM_NULL;
        int undef = n > 2 && t_rank == n - 1;
        int color = undef ? MPI_UNDEFINED : t_rank % 3;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, -t_rank, &c));
        if (undef) {
            if (c != MPI_COMM_NULL)
                FAIL("Comm_split with MPI_UNDEFINED: expected MPI_COMM_NULL");
        } else {
            int k = 0;
            for (int w = n - 1; w >= 0; w--) /* reversed order */
                if (w % 3 == color && !(n > 2 && w == n - 1))
                    m[k++] = w;
            CHECK(c != MPI_COMM_NULL, "Comm_split returned MPI_COMM_NULL for colour %d", color);
            exercise(c, "split mod 3", 6, m, k);
        }
        no_crossmatch(MPI_COMM_WORLD, c, "split mod 3 vs world");
        if (c != MPI_COMM_NULL) {
            int res = -1;
            MPI_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
            int csz;
            MPI_OK(MPI_Comm_size(c, &csz));
            int exp = csz == n ? (n == 1 ? MPI_CONGRUENT : MPI_SIMILAR) : MPI_UNEQUAL;
            if (res != exp)
                FAIL("Comm_compare(split mod 3, world): expected %d, got %d", exp, res);
            free_comm(&c, "split mod 3");
        }
    }

    /* Comm_split, one colour, keys reversing the order: SIMILAR to world */
    {
        MPI_Comm rev = MPI_COMM_NULL;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 7, n - 1 - t_rank, &rev));
        for (int i = 0; i < n; i++)
            m[i] = n - 1 - i;
        exercise(rev, "split reversed", 7, m, n);
        no_crossmatch(MPI_COMM_WORLD, rev, "split reversed vs world");
        expect_compare(rev, MPI_COMM_WORLD, n == 1 ? MPI_CONGRUENT : MPI_SIMILAR,
                       "split reversed, world");
        expect_group_compare(rev, wgroup, n == 1 ? MPI_IDENT : MPI_SIMILAR,
                             "group of split reversed vs world group");
        /* equal keys keep the parent order */
        MPI_Comm same = MPI_COMM_NULL;
        MPI_OK(MPI_Comm_split(rev, 0, 0, &same));
        exercise(same, "split equal keys of reversed", 8, m, n);
        expect_compare(same, rev, MPI_CONGRUENT, "split equal keys, reversed");
        free_comm(&same, "split equal keys");
        free_comm(&rev, "split reversed");
    }

    /* UNEQUAL: different groups */
    if (n >= 2) {
        MPI_Comm half = MPI_COMM_NULL;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &half));
        expect_compare(half, MPI_COMM_WORLD, MPI_UNEQUAL, "parity split, world");
        expect_compare(half, MPI_COMM_SELF, n == 2 ? MPI_CONGRUENT : (n == 3 && t_rank == 1)
                                                                       ? MPI_CONGRUENT
                                                                       : MPI_UNEQUAL,
                       "parity split, self");
        free_comm(&half, "parity split");
    }

    /* Comm_split_type(SHARED): a one-node job lands in one communicator */
    {
        MPI_Comm shm = MPI_COMM_NULL;
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank, MPI_INFO_NULL,
                                   &shm));
        CHECK(shm != MPI_COMM_NULL, "Comm_split_type(SHARED) returned MPI_COMM_NULL");
        exercise(shm, "split_type shared", 9, all, n);
        no_crossmatch(MPI_COMM_WORLD, shm, "split_type vs world");
        expect_compare(shm, MPI_COMM_WORLD, MPI_CONGRUENT, "split_type shared, world");
        free_comm(&shm, "split_type shared");
        /* MPI_UNDEFINED split type */
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &shm));
        CHECK(shm == MPI_COMM_NULL, "Comm_split_type(MPI_UNDEFINED) did not give MPI_COMM_NULL");
    }

    /* Comm_create: even ranks, in reversed order */
    {
        MPI_Group g = MPI_GROUP_NULL;
        MPI_Comm c = MPI_COMM_NULL;
        int k = 0;
        for (int w = n - 1; w >= 0; w--)
            if (w % 2 == 0)
                m[k++] = w;
        MPI_OK(MPI_Group_incl(wgroup, k, m, &g));
        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
        if (t_rank % 2 == 0) {
            CHECK(c != MPI_COMM_NULL, "Comm_create: member got MPI_COMM_NULL");
            exercise(c, "create evens", 10, m, k);
            expect_group_compare(c, g, MPI_IDENT, "group of create evens");
        } else {
            CHECK(c == MPI_COMM_NULL, "Comm_create: non-member did not get MPI_COMM_NULL");
        }
        no_crossmatch(MPI_COMM_WORLD, c, "create evens vs world");
        if (c != MPI_COMM_NULL) {
            /* a dup of a created communicator */
            MPI_Comm d = MPI_COMM_NULL;
            MPI_OK(MPI_Comm_dup(c, &d));
            exercise(d, "dup of create evens", 11, m, k);
            no_crossmatch(c, d, "dup of create vs create");
            free_comm(&d, "dup of create evens");
            free_comm(&c, "create evens");
        }
        MPI_OK(MPI_Group_free(&g));
        /* Comm_create with the whole group and with the empty group */
        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, wgroup, &c));
        exercise(c, "create world group", 12, all, n);
        expect_compare(c, MPI_COMM_WORLD, MPI_CONGRUENT, "create world group, world");
        free_comm(&c, "create world group");
        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
        CHECK(c == MPI_COMM_NULL, "Comm_create(MPI_GROUP_EMPTY) did not give MPI_COMM_NULL");
    }

    /* Comm_create_group: only the members call; first (n+1)/2 ranks, reversed */
    {
        int k = (n + 1) / 2;
        for (int i = 0; i < k; i++)
            m[i] = k - 1 - i;
        MPI_Comm c = MPI_COMM_NULL;
        if (t_rank < k) {
            MPI_Group g = MPI_GROUP_NULL;
            MPI_OK(MPI_Group_incl(wgroup, k, m, &g));
            MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 1234, &c));
            CHECK(c != MPI_COMM_NULL, "Comm_create_group gave MPI_COMM_NULL to a member");
            exercise(c, "create_group", 13, m, k);
            expect_group_compare(c, g, MPI_IDENT, "group of create_group");
            MPI_OK(MPI_Group_free(&g));
        }
        /* meanwhile the others use world */
        no_crossmatch(MPI_COMM_WORLD, c, "create_group vs world");
        if (c != MPI_COMM_NULL)
            free_comm(&c, "create_group");
        /* create_group on dup with a self group */
        MPI_Group sg = MPI_GROUP_NULL;
        MPI_OK(MPI_Comm_group(MPI_COMM_SELF, &sg));
        MPI_OK(MPI_Comm_create_group(dup, sg, 99, &c));
        m[0] = t_rank;
        exercise(c, "create_group self", 14, m, 1);
        expect_compare(c, MPI_COMM_SELF, MPI_CONGRUENT, "create_group self, self");
        free_comm(&c, "create_group self");
        MPI_OK(MPI_Group_free(&sg));
    }

    /* after all the frees, the dup still works and matches */
    exercise(dup, "dup at the end", 15, all, n);
    no_crossmatch(MPI_COMM_WORLD, dup, "dup vs world at the end");
    free_comm(&dup, "dup");
    MPI_OK(MPI_Group_free(&wgroup));
    exercise(MPI_COMM_WORLD, "world at the end", 16, all, n);
    free(all);
    free(m);
    t_done();
    return 0;
}
