/* Communicator attributes.
 *   - Comm_create_keyval with copy / delete callbacks that count their
 *     calls and check the values and extra_state they are given;
 *   - Comm_set_attr / get_attr / delete_attr (delete callback on delete and
 *     on overwrite);
 *   - Comm_dup copies through the copy callback: a custom one (value
 *     changed, or flag 0 = not copied), MPI_COMM_DUP_FN (same value),
 *     MPI_COMM_NULL_COPY_FN (not copied);
 *   - Comm_free calls the delete callback of every attribute (exact count),
 *     also after Comm_free_keyval of a keyval still in use;
 *   - predefined attributes of MPI_COMM_WORLD: MPI_TAG_UB (present, >= 32767),
 *     MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_APPNUM
 *     (optional ones may be absent, but a present value must be sensible).
 * Works at any size, including 1. */
#include "common.h"

enum { K_CUSTOM, K_DUPFN, K_NULLCOPY, K_NOCOPY, NK };

struct counts {
    int magic;
    int copies;
    int deletes;
    intptr_t last_deleted;
    intptr_t deleted_sum;
};

static struct counts cnt[NK];

static int custom_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct counts *c = extra;
    (void)oldcomm;
    (void)keyval;
    if (c != &cnt[K_CUSTOM] || c->magic != 0x5eed)
        FAIL("custom copy callback: wrong extra_state %p (expected %p)", extra,
             (void *)&cnt[K_CUSTOM]);
    c->copies++;
    *(void **)out = (void *)((intptr_t)in + 1000);
    *flag = 1;
    return MPI_SUCCESS;
}

static int nocopy_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct counts *c = extra;
    (void)oldcomm;
    (void)keyval;
    (void)in;
    (void)out;
    if (c != &cnt[K_NOCOPY])
        FAIL("no-copy callback: wrong extra_state");
    c->copies++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    struct counts *c = extra;
    (void)comm;
    (void)keyval;
    if (c < &cnt[0] || c >= &cnt[NK] || c->magic != 0x5eed)
        FAIL("delete callback: wrong extra_state %p", extra);
    c->deletes++;
    c->last_deleted = (intptr_t)val;
    c->deleted_sum += (intptr_t)val;
    return MPI_SUCCESS;
}

static void expect_attr(MPI_Comm comm, int kv, int exp_flag, intptr_t exp_val, const char *what)
{
    void *v = (void *)(intptr_t)-12345;
    int flag = -1;
    MPI_OK(MPI_Comm_get_attr(comm, kv, &v, &flag));
    if (!!flag != exp_flag)
        FAIL("%s: Comm_get_attr flag expected %d, got %d", what, exp_flag, flag);
    if (exp_flag && (intptr_t)v != exp_val)
        FAIL("%s: Comm_get_attr value expected %ld, got %ld", what, (long)exp_val, (long)(intptr_t)v);
}

static void expect_counts(int k, int copies, int deletes, const char *what)
{
    if (cnt[k].copies != copies || cnt[k].deletes != deletes)
        FAIL("%s: keyval %d: expected %d copies and %d deletes, got %d and %d", what, k, copies,
             deletes, cnt[k].copies, cnt[k].deletes);
}

static void predefined(void)
{
    void *v = NULL;
    int flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag, "MPI_TAG_UB attribute missing");
    CHECK(*(int *)v >= 32767, "MPI_TAG_UB = %d < 32767", *(int *)v);
    {
        /* the largest tag is usable */
        int tub = *(int *)v, out = 17, in = -1;
        MPI_Status st;
        MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, t_rank, tub, &in, 1, MPI_INT, t_rank, tub,
                            MPI_COMM_WORLD, &st));
        CHECK(in == 17 && st.MPI_TAG == tub, "message with tag MPI_TAG_UB: got %d tag %d", in,
              st.MPI_TAG);
    }
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    if (flag) {
        int h = *(int *)v;
        CHECK(h == MPI_PROC_NULL || (h >= 0 && h < t_size), "MPI_HOST = %d", h);
    }
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    if (flag) {
        int io = *(int *)v;
        CHECK(io == MPI_PROC_NULL || io == MPI_ANY_SOURCE || (io >= 0 && io < t_size), "MPI_IO = %d",
              io);
    }
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    if (flag) {
        int g = *(int *)v;
        CHECK(g == 0 || g == 1, "MPI_WTIME_IS_GLOBAL = %d", g);
    }
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    if (flag) {
        int u = *(int *)v;
        CHECK(u >= 1, "MPI_UNIVERSE_SIZE = %d", u);
    }
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    if (flag) {
        int a = *(int *)v;
        CHECK(a == 0, "MPI_APPNUM = %d in a single-program job", a);
    }
    /* predefined attributes are there on a dup too (TAG_UB at least) */
    {
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MPI_OK(MPI_Comm_get_attr(d, MPI_TAG_UB, &v, &flag));
        CHECK(flag && *(int *)v >= 32767, "MPI_TAG_UB missing or small on a dup of world");
        MPI_OK(MPI_Comm_free(&d));
    }
}

int main(int argc, char **argv)
{
    int kv[NK];
    t_init(&argc, &argv, "attr");
    for (int k = 0; k < NK; k++)
        cnt[k].magic = 0x5eed;

    MPI_OK(MPI_Comm_create_keyval(custom_copy, count_delete, &kv[K_CUSTOM], &cnt[K_CUSTOM]));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &kv[K_DUPFN], &cnt[K_DUPFN]));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kv[K_NULLCOPY],
                                  &cnt[K_NULLCOPY]));
    MPI_OK(MPI_Comm_create_keyval(nocopy_copy, count_delete, &kv[K_NOCOPY], &cnt[K_NOCOPY]));
    for (int a = 0; a < NK; a++)
        for (int b = a + 1; b < NK; b++)
            CHECK(kv[a] != kv[b], "keyvals %d and %d are equal (%d)", a, b, kv[a]);
    int kplain = MPI_KEYVAL_INVALID;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kplain, NULL));

    MPI_Comm c = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    for (int k = 0; k < NK; k++)
        expect_attr(c, kv[k], 0, 0, "fresh dup, nothing set");
    MPI_OK(MPI_Comm_set_attr(c, kv[K_CUSTOM], (void *)(intptr_t)10));
    MPI_OK(MPI_Comm_set_attr(c, kv[K_DUPFN], (void *)(intptr_t)20));
    MPI_OK(MPI_Comm_set_attr(c, kv[K_NULLCOPY], (void *)(intptr_t)30));
    MPI_OK(MPI_Comm_set_attr(c, kv[K_NOCOPY], (void *)(intptr_t)40));
    expect_attr(c, kv[K_CUSTOM], 1, 10, "custom after set");
    expect_attr(c, kv[K_DUPFN], 1, 20, "dupfn after set");
    expect_attr(c, kv[K_NULLCOPY], 1, 30, "nullcopy after set");
    expect_attr(c, kv[K_NOCOPY], 1, 40, "nocopy after set");
    expect_attr(MPI_COMM_WORLD, kv[K_CUSTOM], 0, 0, "world does not get the attribute of a dup");
    for (int k = 0; k < NK; k++)
        expect_counts(k, 0, 0, "after set");

    /* a pointer value comes back unchanged */
    {
        static double payload[3] = {1.5, 2.5, 3.5};
        void *v = NULL;
        int flag = 0;
        MPI_OK(MPI_Comm_set_attr(c, kplain, payload));
        MPI_OK(MPI_Comm_get_attr(c, kplain, &v, &flag));
        CHECK(flag && v == (void *)payload && ((double *)v)[2] == 3.5,
              "pointer attribute: got %p, expected %p", v, (void *)payload);
    }

    /* overwrite calls the delete callback on the old value */
    MPI_OK(MPI_Comm_set_attr(c, kv[K_CUSTOM], (void *)(intptr_t)11));
    expect_counts(K_CUSTOM, 0, 1, "after overwrite");
    CHECK_EQ_INT(cnt[K_CUSTOM].last_deleted, 10, "value given to delete on overwrite");
    expect_attr(c, kv[K_CUSTOM], 1, 11, "custom after overwrite");

    /* delete_attr */
    MPI_OK(MPI_Comm_delete_attr(c, kv[K_NULLCOPY]));
    expect_counts(K_NULLCOPY, 0, 1, "after delete_attr");
    CHECK_EQ_INT(cnt[K_NULLCOPY].last_deleted, 30, "value given to delete by delete_attr");
    expect_attr(c, kv[K_NULLCOPY], 0, 0, "nullcopy after delete_attr");
    MPI_OK(MPI_Comm_set_attr(c, kv[K_NULLCOPY], (void *)(intptr_t)31));
    expect_counts(K_NULLCOPY, 0, 1, "after set again");

    /* dup: copy callbacks */
    MPI_Comm d = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_dup(c, &d));
    expect_counts(K_CUSTOM, 1, 1, "after dup");
    expect_counts(K_DUPFN, 0, 0, "after dup");
    expect_counts(K_NULLCOPY, 0, 1, "after dup");
    expect_counts(K_NOCOPY, 1, 0, "after dup");
    expect_attr(d, kv[K_CUSTOM], 1, 1011, "custom copied through the callback");
    expect_attr(d, kv[K_DUPFN], 1, 20, "MPI_COMM_DUP_FN copy");
    expect_attr(d, kv[K_NULLCOPY], 0, 0, "MPI_COMM_NULL_COPY_FN does not copy");
    expect_attr(d, kv[K_NOCOPY], 0, 0, "copy callback returning flag 0 does not copy");
    expect_attr(d, kplain, 0, 0, "plain keyval not copied");
    expect_attr(c, kv[K_CUSTOM], 1, 11, "original after dup");
    /* the dup's attributes are independent of the original's */
    MPI_OK(MPI_Comm_set_attr(d, kv[K_DUPFN], (void *)(intptr_t)21));
    expect_counts(K_DUPFN, 0, 1, "overwrite on dup");
    CHECK_EQ_INT(cnt[K_DUPFN].last_deleted, 20, "old value deleted on dup");
    expect_attr(c, kv[K_DUPFN], 1, 20, "original keeps its value");
    expect_attr(d, kv[K_DUPFN], 1, 21, "dup has the new value");

    /* a dup of the dup: custom copies again (1011 -> 2011) */
    MPI_Comm e = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_dup(d, &e));
    expect_counts(K_CUSTOM, 2, 1, "dup of dup");
    expect_attr(e, kv[K_CUSTOM], 1, 2011, "custom copied twice");
    expect_attr(e, kv[K_DUPFN], 1, 21, "DUP_FN copied twice");

    /* free e: delete for custom (2011) and dupfn (21) */
    cnt[K_CUSTOM].deleted_sum = 0;
    cnt[K_DUPFN].deleted_sum = 0;
    MPI_OK(MPI_Comm_free(&e));
    expect_counts(K_CUSTOM, 2, 2, "free of the dup of dup");
    expect_counts(K_DUPFN, 0, 2, "free of the dup of dup");
    expect_counts(K_NULLCOPY, 0, 1, "free of the dup of dup");
    expect_counts(K_NOCOPY, 1, 0, "free of the dup of dup");
    CHECK_EQ_INT(cnt[K_CUSTOM].deleted_sum, 2011, "custom value deleted by free");
    CHECK_EQ_INT(cnt[K_DUPFN].deleted_sum, 21, "dupfn value deleted by free");

    /* free_keyval of a keyval still attached: the attribute stays until free */
    MPI_OK(MPI_Comm_free_keyval(&kv[K_CUSTOM]));
    CHECK(kv[K_CUSTOM] == MPI_KEYVAL_INVALID, "Comm_free_keyval did not set MPI_KEYVAL_INVALID");
    expect_counts(K_CUSTOM, 2, 2, "free_keyval does not delete");

    /* free d (custom 1011, dupfn 21) and c (custom 11, dupfn 20, nullcopy 31, nocopy 40) */
    for (int k = 0; k < NK; k++)
        cnt[k].deleted_sum = 0;
    MPI_OK(MPI_Comm_free(&d));
    expect_counts(K_CUSTOM, 2, 3, "free d");
    expect_counts(K_DUPFN, 0, 3, "free d");
    expect_counts(K_NULLCOPY, 0, 1, "free d");
    expect_counts(K_NOCOPY, 1, 0, "free d");
    MPI_OK(MPI_Comm_free(&c));
    expect_counts(K_CUSTOM, 2, 4, "free c");
    expect_counts(K_DUPFN, 0, 4, "free c");
    expect_counts(K_NULLCOPY, 0, 2, "free c");
    expect_counts(K_NOCOPY, 1, 1, "free c");
    CHECK_EQ_INT(cnt[K_CUSTOM].deleted_sum, 1011 + 11, "custom values deleted by the frees");
    CHECK_EQ_INT(cnt[K_DUPFN].deleted_sum, 21 + 20, "dupfn values deleted by the frees");
    CHECK_EQ_INT(cnt[K_NULLCOPY].deleted_sum, 31, "nullcopy value deleted by free");
    CHECK_EQ_INT(cnt[K_NOCOPY].deleted_sum, 40, "nocopy value deleted by free");

    /* attributes on MPI_COMM_WORLD and MPI_COMM_SELF; dup of world copies them */
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kv[K_DUPFN], (void *)(intptr_t)(100 + t_rank)));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kv[K_DUPFN], (void *)(intptr_t)(200 + t_rank)));
    expect_attr(MPI_COMM_WORLD, kv[K_DUPFN], 1, 100 + t_rank, "attribute on world");
    expect_attr(MPI_COMM_SELF, kv[K_DUPFN], 1, 200 + t_rank, "attribute on self");
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    expect_attr(c, kv[K_DUPFN], 1, 100 + t_rank, "world attribute copied to a dup");
    MPI_OK(MPI_Comm_free(&c));
    expect_counts(K_DUPFN, 0, 5, "free of a dup of world");
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kv[K_DUPFN]));
    expect_counts(K_DUPFN, 0, 6, "delete_attr on world");
    CHECK_EQ_INT(cnt[K_DUPFN].last_deleted, 100 + t_rank, "value deleted from world");
    expect_attr(MPI_COMM_WORLD, kv[K_DUPFN], 0, 0, "world after delete_attr");
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_SELF, kv[K_DUPFN]));
    expect_counts(K_DUPFN, 0, 7, "delete_attr on self");

    /* the attribute machinery is per process: check that all ranks agree */
    {
        int mine[2] = {cnt[K_DUPFN].deletes, cnt[K_CUSTOM].copies}, mx[2], mn[2];
        MPI_OK(MPI_Allreduce(mine, mx, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        MPI_OK(MPI_Allreduce(mine, mn, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        CHECK(mx[0] == mn[0] && mx[1] == mn[1], "callback counts differ between ranks");
    }

    for (int k = 0; k < NK; k++)
        if (kv[k] != MPI_KEYVAL_INVALID)
            MPI_OK(MPI_Comm_free_keyval(&kv[k]));
    MPI_OK(MPI_Comm_free_keyval(&kplain));
    CHECK(kplain == MPI_KEYVAL_INVALID, "Comm_free_keyval did not set MPI_KEYVAL_INVALID");

    predefined();
    t_done();
    return 0;
}
