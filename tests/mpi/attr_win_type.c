/* Attributes of windows and datatypes, and the rules all attributes share:
 *   - Win_create_keyval / Win_set_attr / Win_get_attr / Win_delete_attr, with
 *     the predefined window attributes (MPI_WIN_BASE, SIZE, DISP_UNIT,
 *     CREATE_FLAVOR, MODEL) beside the user's; Win_free calls the delete
 *     callback of each attribute left, the last set first;
 *   - Type_create_keyval / Type_set_attr / Type_get_attr / Type_delete_attr on
 *     derived and predefined types; Type_dup copies through the copy callback
 *     (MPI_TYPE_DUP_FN, MPI_TYPE_NULL_COPY_FN, a custom one); Type_free deletes;
 *   - an error returned by a delete callback is the error of the call and keeps
 *     the value; one returned by a copy callback fails the dup, whose result is
 *     MPI_DATATYPE_NULL / MPI_COMM_NULL;
 *   - freeing a keyval again (from a delete callback too) while attributes use
 *     it changes nothing;
 *   - MPI_LASTUSEDCODE is at least MPI_ERR_LASTCODE and at least every added code,
 *     and an added class without a string has the empty one;
 *   - the attributes of MPI_COMM_SELF are deleted at the start of MPI_Finalize,
 *     the last set first, MPI still initialised. */
#include "common.h"

#define NLOG 64
static int order_log[NLOG], n_log; /* values of the deletes, in call order */
static int fail_deletes, fail_copies;

static int log_delete(int obj, int keyval, void *val, void *extra)
{
    (void)obj;
    (void)keyval;
    (void)extra;
    if (fail_deletes)
        return MPI_ERR_OTHER;
    if (n_log < NLOG)
        order_log[n_log++] = (int)(intptr_t)val;
    return MPI_SUCCESS;
}

static int plus_copy(int obj, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)obj;
    (void)keyval;
    (void)extra;
    if (fail_copies)
        return MPI_ERR_OTHER;
    *(void **)out = (void *)((intptr_t)in + 100);
    *flag = 1;
    return MPI_SUCCESS;
}

static int type_delete(MPI_Datatype t, int k, void *v, void *e) { return log_delete((int)t, k, v, e); }
static int type_copy(MPI_Datatype t, int k, void *e, void *in, void *out, int *f) { return plus_copy((int)t, k, e, in, out, f); }
static int win_delete(MPI_Win w, int k, void *v, void *e) { return log_delete((int)w, k, v, e); }
static int comm_delete(MPI_Comm c, int k, void *v, void *e) { return log_delete((int)c, k, v, e); }
static int comm_copy(MPI_Comm c, int k, void *e, void *in, void *out, int *f) { return plus_copy((int)c, k, e, in, out, f); }

static int freeing_win_delete(MPI_Win w, int keyval, void *v, void *e)
{
    (void)w;
    (void)v;
    (void)e;
    MPI_OK(MPI_Win_free_keyval(&keyval)); /* a copy of the handle: frees "again" */
    return MPI_SUCCESS;
}

static void expect_log(const int *want, int n, const char *what)
{
    CHECK_EQ_INT(n_log, n, what);
    for (int i = 0; i < n; i++)
        if (order_log[i] != want[i])
            FAIL("%s: delete %d had value %d, expected %d", what, i, order_log[i], want[i]);
    n_log = 0;
}

static intptr_t get_attr_type(MPI_Datatype t, int k, int *flag)
{
    void *v = NULL;
    MPI_OK(MPI_Type_get_attr(t, k, &v, flag));
    return (intptr_t)v;
}

static int error_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static void windows(void)
{
    int mem[4], k1, k2, flag;
    void *v;
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete, &k1, NULL));
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, win_delete, &k2, NULL));
    MPI_OK(MPI_Win_get_attr(win, k1, &v, &flag));
    CHECK(!flag, "window attribute present before it was set");
    MPI_OK(MPI_Win_set_attr(win, k1, (void *)(intptr_t)11));
    MPI_OK(MPI_Win_set_attr(win, k2, (void *)(intptr_t)12));
    MPI_OK(MPI_Win_set_attr(win, k1, (void *)(intptr_t)13)); /* replaces 11: deleted */
    expect_log((int[]){11}, 1, "Win_set_attr over a value");
    MPI_OK(MPI_Win_get_attr(win, k1, &v, &flag));
    CHECK(flag && (intptr_t)v == 13, "window attribute k1: flag %d value %ld", flag, (long)(intptr_t)v);
    /* the predefined attributes are still there */
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
    CHECK(flag && v == (void *)mem, "MPI_WIN_BASE %p, expected %p", v, (void *)mem);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag));
    CHECK(flag && *(MPI_Aint *)v == (MPI_Aint)sizeof mem, "MPI_WIN_SIZE");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
    CHECK(flag && *(int *)v == (int)sizeof(int), "MPI_WIN_DISP_UNIT");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    CHECK(flag && *(int *)v == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
    CHECK(flag && *(int *)v == MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_EQ_INT(error_class(MPI_Win_set_attr(win, MPI_WIN_BASE, NULL)), MPI_ERR_KEYVAL, "setting MPI_WIN_BASE");
    /* a window keyval is no datatype keyval */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ_INT(error_class(MPI_Type_set_attr(MPI_INT, k1, NULL)), MPI_ERR_KEYVAL, "window keyval on a datatype");
    MPI_OK(MPI_Win_delete_attr(win, k2));
    expect_log((int[]){12}, 1, "Win_delete_attr");
    MPI_OK(MPI_Win_get_attr(win, k2, &v, &flag));
    CHECK(!flag, "deleted window attribute still present");
    MPI_OK(MPI_Win_set_attr(win, k2, (void *)(intptr_t)14));
    MPI_OK(MPI_Win_free_keyval(&k1)); /* still used: the free deletes through it */
    CHECK_EQ_INT(k1, MPI_KEYVAL_INVALID, "freed keyval handle");
    MPI_OK(MPI_Win_free(&win));
    expect_log((int[]){14, 13}, 2, "Win_free (last set first)");
    MPI_OK(MPI_Win_free_keyval(&k2));

    /* a delete callback that frees its keyval: the keyval is freed several times */
    int k, copy;
    MPI_Win w2[2];
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, freeing_win_delete, &k, NULL));
    copy = k;
    for (int i = 0; i < 2; i++) {
        MPI_OK(MPI_Win_create(mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w2[i]));
        MPI_OK(MPI_Win_set_attr(w2[i], k, NULL));
    }
    MPI_OK(MPI_Win_free(&w2[0]));
    MPI_OK(MPI_Win_free_keyval(&k));
    MPI_OK(MPI_Win_free_keyval(&copy));
    MPI_OK(MPI_Win_free(&w2[1]));
}

static void datatypes(void)
{
    int kc, kd, kn, flag;
    MPI_Datatype t, d, d2;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_OK(MPI_Type_create_keyval(type_copy, type_delete, &kc, NULL));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &kd, NULL));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &kn, NULL));
    MPI_OK(MPI_Type_set_attr(t, kn, (void *)(intptr_t)3));
    MPI_OK(MPI_Type_set_attr(t, kc, (void *)(intptr_t)1));
    MPI_OK(MPI_Type_set_attr(t, kd, (void *)(intptr_t)2));
    CHECK(get_attr_type(t, kc, &flag) == 1 && flag, "Type_get_attr kc");
    MPI_OK(MPI_Type_dup(t, &d));
    CHECK(get_attr_type(d, kc, &flag) == 101 && flag, "dup: custom copy gives in + 100");
    CHECK(get_attr_type(d, kd, &flag) == 2 && flag, "dup: MPI_TYPE_DUP_FN gives the same value");
    get_attr_type(d, kn, &flag);
    CHECK(!flag, "dup: MPI_TYPE_NULL_COPY_FN copies nothing");
    CHECK(get_attr_type(t, kc, &flag) == 1 && flag, "the original keeps its value");
    {
        int size = 0;
        MPI_OK(MPI_Type_size(d, &size));
        CHECK_EQ_INT(size, 3 * (int)sizeof(int), "size of the dup");
    }
    MPI_OK(MPI_Type_free(&d));
    expect_log((int[]){2, 101}, 2, "Type_free of the dup (last set first)");
    MPI_OK(MPI_Type_delete_attr(t, kn));
    expect_log((int[]){3}, 1, "Type_delete_attr");
    /* errors of the callbacks */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    fail_deletes = 1;
    CHECK_EQ_INT(error_class(MPI_Type_set_attr(t, kc, (void *)(intptr_t)5)), MPI_ERR_OTHER, "set over a failing delete");
    CHECK(get_attr_type(t, kc, &flag) == 1 && flag, "a failed replace keeps the old value");
    CHECK_EQ_INT(error_class(MPI_Type_delete_attr(t, kc)), MPI_ERR_OTHER, "delete with a failing callback");
    CHECK(get_attr_type(t, kc, &flag) == 1 && flag, "a failed delete keeps the value");
    fail_deletes = 0;
    fail_copies = 1;
    d2 = MPI_INT;
    CHECK_EQ_INT(error_class(MPI_Type_dup(t, &d2)), MPI_ERR_OTHER, "dup with a failing copy");
    CHECK(d2 == MPI_DATATYPE_NULL, "failed dup gives MPI_DATATYPE_NULL");
    fail_copies = 0;
    n_log = 0;
    /* attributes on a predefined type */
    MPI_OK(MPI_Type_set_attr(MPI_DOUBLE, kn, (void *)(intptr_t)7));
    CHECK(get_attr_type(MPI_DOUBLE, kn, &flag) == 7 && flag, "attribute on MPI_DOUBLE");
    get_attr_type(MPI_FLOAT, kn, &flag);
    CHECK(!flag, "MPI_FLOAT has no attribute");
    MPI_OK(MPI_Type_delete_attr(MPI_DOUBLE, kn));
    expect_log((int[]){7}, 1, "delete on MPI_DOUBLE");
    MPI_OK(MPI_Type_free_keyval(&kc)); /* t still uses it */
    MPI_OK(MPI_Type_free(&t));
    expect_log((int[]){2, 1}, 2, "Type_free after the keyval was freed");
    MPI_OK(MPI_Type_free_keyval(&kd));
    MPI_OK(MPI_Type_free_keyval(&kn));
    CHECK_EQ_INT(error_class(MPI_Type_free_keyval(&kn)), MPI_ERR_KEYVAL, "freeing MPI_KEYVAL_INVALID");
}

static void communicators(void)
{
    int k, flag;
    void *v;
    MPI_Comm c, d = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_OK(MPI_Comm_create_keyval(comm_copy, comm_delete, &k, NULL));
    MPI_OK(MPI_Comm_set_attr(c, k, (void *)(intptr_t)21));
    fail_copies = 1;
    CHECK_EQ_INT(error_class(MPI_Comm_dup(c, &d)), MPI_ERR_OTHER, "Comm_dup with a failing copy");
    CHECK(d == MPI_COMM_NULL, "failed Comm_dup gives MPI_COMM_NULL");
    fail_copies = 0;
    MPI_OK(MPI_Comm_get_attr(c, k, &v, &flag));
    CHECK(flag && (intptr_t)v == 21, "the original keeps its attribute");
    MPI_OK(MPI_Comm_free_keyval(&k));
    MPI_OK(MPI_Comm_free(&c));
    expect_log((int[]){21}, 1, "Comm_free");
    /* MPI_LASTUSEDCODE */
    int cls, code, *last;
    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_code(cls, &code));
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= MPI_ERR_LASTCODE && *last >= code, "MPI_LASTUSEDCODE %d (code %d)", *last, code);
    /* an added class without a string has the empty one */
    char str[MPI_MAX_ERROR_STRING] = "x";
    int len = -1;
    MPI_OK(MPI_Error_string(cls, str, &len));
    CHECK(len == 0 && str[0] == 0, "string of an added class: '%s' (%d)", str, len);
}

static int finalize_deletes[3], n_finalize;

static int at_finalize(MPI_Comm c, int keyval, void *val, void *extra)
{
    int fin = 1;
    (void)c;
    (void)keyval;
    (void)extra;
    MPI_Finalized(&fin);
    if (fin)
        return MPI_ERR_OTHER;
    if (n_finalize < 3)
        finalize_deletes[n_finalize] = (int)(intptr_t)val;
    n_finalize++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "attr_win_type");
    windows();
    datatypes();
    communicators();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int k[3];
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &k[i], NULL));
        MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k[i], (void *)(intptr_t)(i + 1)));
        MPI_OK(MPI_Comm_free_keyval(&k[i]));
    }
    t_done();
    if (n_finalize != 3 || finalize_deletes[0] != 3 || finalize_deletes[1] != 2 || finalize_deletes[2] != 1) {
        fprintf(stderr, "[attr_win_type rank %d] MPI_COMM_SELF deletes at MPI_Finalize: %d calls (%d %d %d), "
                "expected 3 (3 2 1)\n", t_rank, n_finalize, finalize_deletes[0], finalize_deletes[1],
                finalize_deletes[2]);
        return 1;
    }
    return 0;
}
