/* Info objects: Info_create / set (incl. overwrite) / get (incl. a buffer
 * too short: truncation) / get_nkeys / get_nthkey (a permutation of the
 * keys set) / get_valuelen / get_string (MPI 4.0; not in Open MPI 4.1) /
 * delete / dup (independent copy) / free; 100 keys at once; MPI_INFO_ENV
 * readable; errors under MPI_ERRORS_RETURN: a key longer than
 * MPI_MAX_INFO_KEY -> MPI_ERR_INFO_KEY, deleting a missing key ->
 * MPI_ERR_INFO_NOKEY. Local objects: every rank runs the same checks. */
#include "common.h"

static void expect_value(MPI_Info info, const char *key, const char *exp, const char *what)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = -1, len = -1;
    memset(v, 'Z', sizeof v);
    MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    if (exp == NULL) {
        if (flag)
            FAIL("%s: key '%s' expected absent, found '%s'", what, key, v);
        MPI_OK(MPI_Info_get_valuelen(info, key, &len, &flag));
        if (flag)
            FAIL("%s: Info_get_valuelen of absent key '%s' gave flag 1", what, key);
        return;
    }
    if (!flag || strcmp(v, exp) != 0)
        FAIL("%s: key '%s' expected '%s', got flag %d value '%.64s'", what, key, exp, flag,
             flag ? v : "");
    MPI_OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    if (!flag || len != (int)strlen(exp))
        FAIL("%s: Info_get_valuelen('%s') expected %d, got flag %d len %d", what, key,
             (int)strlen(exp), flag, len);
}

static void expect_keys(MPI_Info info, int n, const char *const *keys, const char *what)
{
    int nk = -1;
    MPI_OK(MPI_Info_get_nkeys(info, &nk));
    if (nk != n)
        FAIL("%s: Info_get_nkeys expected %d, got %d", what, n, nk);
    int *seen = calloc((size_t)n + 1, sizeof(int));
    CHECK(seen, "out of memory");
    for (int i = 0; i < n; i++) {
        char k[MPI_MAX_INFO_KEY + 1];
        k[0] = 0;
        MPI_OK(MPI_Info_get_nthkey(info, i, k));
        int found = -1;
        for (int j = 0; j < n; j++)
            if (strcmp(keys[j], k) == 0)
                found = j;
        if (found < 0)
            FAIL("%s: Info_get_nthkey(%d) = '%s', not a key that was set", what, i, k);
        if (seen[found]++)
            FAIL("%s: Info_get_nthkey returned '%s' twice", what, k);
    }
    free(seen);
}

static void expect_class(int rc, int want, const char *what)
{
    int cls = -1;
    if (rc == MPI_SUCCESS)
        FAIL("%s: returned MPI_SUCCESS, expected error class %d", what, want);
    MPI_OK(MPI_Error_class(rc, &cls));
    if (cls != want)
        FAIL("%s: error class expected %d, got %d", what, want, cls);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "info");
    MPI_Info info = MPI_INFO_NULL, dup = MPI_INFO_NULL;

    MPI_OK(MPI_Info_create(&info));
    CHECK(info != MPI_INFO_NULL, "Info_create gave MPI_INFO_NULL");
    expect_keys(info, 0, NULL, "new info");
    expect_value(info, "nothing", NULL, "new info");

    MPI_OK(MPI_Info_set(info, "alpha", "one"));
    MPI_OK(MPI_Info_set(info, "beta", "a somewhat longer value with spaces"));
    MPI_OK(MPI_Info_set(info, "gamma", "3"));
    {
        const char *k3[3] = {"alpha", "beta", "gamma"};
        expect_keys(info, 3, k3, "three keys");
    }
    expect_value(info, "alpha", "one", "three keys");
    expect_value(info, "beta", "a somewhat longer value with spaces", "three keys");
    expect_value(info, "gamma", "3", "three keys");
    expect_value(info, "delta", NULL, "three keys");

    /* overwrite */
    MPI_OK(MPI_Info_set(info, "alpha", "uno, replaced"));
    expect_value(info, "alpha", "uno, replaced", "overwrite");
    {
        const char *k3[3] = {"alpha", "beta", "gamma"};
        expect_keys(info, 3, k3, "after overwrite");
    }


#if !defined(OPEN_MPI) || MPI_VERSION >= 4
    /* MPI_Info_get_string (MPI 4.0) */
    {
        char v[64];
        int flag = -1, buflen = 0;
        MPI_OK(MPI_Info_get_string(info, "beta", &buflen, v, &flag));
        if (!flag || buflen != (int)strlen("a somewhat longer value with spaces") + 1)
            FAIL("Info_get_string size query: flag %d buflen %d, expected 1 and %d", flag, buflen,
                 (int)strlen("a somewhat longer value with spaces") + 1);
        buflen = (int)sizeof v;
        MPI_OK(MPI_Info_get_string(info, "beta", &buflen, v, &flag));
        if (!flag || strcmp(v, "a somewhat longer value with spaces") != 0 ||
            buflen != (int)strlen(v) + 1)
            FAIL("Info_get_string: flag %d buflen %d value '%s'", flag, buflen, v);
        memset(v, 'Z', sizeof v);
        buflen = 5;
        MPI_OK(MPI_Info_get_string(info, "beta", &buflen, v, &flag));
        if (!flag || strcmp(v, "a so") != 0 ||
            buflen != (int)strlen("a somewhat longer value with spaces") + 1)
            FAIL("Info_get_string truncated: flag %d buflen %d value '%.8s', expected 'a so'",
                 flag, buflen, v);
        buflen = (int)sizeof v;
        MPI_OK(MPI_Info_get_string(info, "missing", &buflen, v, &flag));
        CHECK(!flag, "Info_get_string of a missing key gave flag 1");
        buflen = 2;
        MPI_OK(MPI_Info_get_string(info, "gamma", &buflen, v, &flag));
        CHECK(flag && strcmp(v, "3") == 0 && buflen == 2,
              "Info_get_string of a one-character value: flag %d buflen %d", flag, buflen);
    }
#else
    if (t_rank == 0)
        fprintf(stderr, "info: MPI_Info_get_string not available (Open MPI < 5), skipped\n");
#endif

    /* dup is an independent copy */
    MPI_OK(MPI_Info_dup(info, &dup));
    CHECK(dup != MPI_INFO_NULL && dup != info, "Info_dup gave a bad handle");
    {
        const char *k3[3] = {"alpha", "beta", "gamma"};
        expect_keys(dup, 3, k3, "dup");
    }
    expect_value(dup, "alpha", "uno, replaced", "dup");
    MPI_OK(MPI_Info_set(dup, "alpha", "changed in the dup"));
    MPI_OK(MPI_Info_set(dup, "epsilon", "only in the dup"));
    expect_value(info, "alpha", "uno, replaced", "original after changing the dup");
    expect_value(info, "epsilon", NULL, "original after changing the dup");
    expect_value(dup, "alpha", "changed in the dup", "dup after change");

    /* delete */
    MPI_OK(MPI_Info_delete(info, "beta"));
    {
        const char *k2[2] = {"alpha", "gamma"};
        expect_keys(info, 2, k2, "after delete");
    }
    expect_value(info, "beta", NULL, "after delete");
    expect_value(dup, "beta", "a somewhat longer value with spaces", "dup after delete in original");

    /* 100 keys */
    {
        MPI_Info big;
        char keys[100][16], vals[100][24];
        const char *kp[100];
        MPI_OK(MPI_Info_create(&big));
        for (int i = 0; i < 100; i++) {
            snprintf(keys[i], sizeof keys[i], "key_%03d", (i * 37) % 100);
            snprintf(vals[i], sizeof vals[i], "value %d of %d", i, t_rank);
            kp[i] = keys[i];
            MPI_OK(MPI_Info_set(big, keys[i], vals[i]));
        }
        expect_keys(big, 100, kp, "100 keys");
        for (int i = 0; i < 100; i++)
            expect_value(big, keys[i], vals[i], "100 keys");
        for (int i = 0; i < 100; i += 2)
            MPI_OK(MPI_Info_delete(big, keys[i]));
        {
            const char *odd[50];
            for (int i = 0; i < 50; i++)
                odd[i] = keys[2 * i + 1];
            expect_keys(big, 50, odd, "50 keys after deleting half");
        }
        MPI_OK(MPI_Info_free(&big));
        CHECK(big == MPI_INFO_NULL, "Info_free did not set MPI_INFO_NULL");
    }

    /* MPI_INFO_ENV is readable */
    {
        int nk = -1;
        MPI_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nk));
        CHECK(nk >= 0, "Info_get_nkeys(MPI_INFO_ENV) = %d", nk);
        for (int i = 0; i < nk; i++) {
            char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
            int flag = 0, len = -1;
            MPI_OK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, k));
            CHECK(k[0] != 0, "MPI_INFO_ENV key %d is empty", i);
            MPI_OK(MPI_Info_get_valuelen(MPI_INFO_ENV, k, &len, &flag));
            CHECK(flag && len >= 0 && len <= MPI_MAX_INFO_VAL,
                  "MPI_INFO_ENV '%s': valuelen flag %d len %d", k, flag, len);
            MPI_OK(MPI_Info_get(MPI_INFO_ENV, k, MPI_MAX_INFO_VAL, v, &flag));
            CHECK(flag && (int)strlen(v) == len, "MPI_INFO_ENV '%s': value '%s', valuelen %d", k,
                  v, len);
        }
        /* a dup of MPI_INFO_ENV is an ordinary info object */
        MPI_Info e;
        MPI_OK(MPI_Info_dup(MPI_INFO_ENV, &e));
        int nk2 = -1;
        MPI_OK(MPI_Info_get_nkeys(e, &nk2));
        CHECK_EQ_INT(nk2, nk, "keys of a dup of MPI_INFO_ENV");
        MPI_OK(MPI_Info_set(e, "weft_test", "x"));
        MPI_OK(MPI_Info_free(&e));
    }

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    {
        char longkey[MPI_MAX_INFO_KEY + 64];
        memset(longkey, 'k', sizeof longkey - 1);
        longkey[sizeof longkey - 1] = 0;
        expect_class(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY, "Info_set with a too long key");
        expect_class(MPI_Info_delete(info, "not-there"), MPI_ERR_INFO_NOKEY,
                     "Info_delete of a missing key");
        expect_class(MPI_Info_delete(info, "beta"), MPI_ERR_INFO_NOKEY,
                     "Info_delete of a deleted key");
        /* valuelen shorter than the value: truncated (MPICH also reports
         * MPI_ERR_INFO_VALUE, which is accepted) */
        {
            char v[16];
            int flag = 0, rc, cls = -1;
            memset(v, 'Z', sizeof v);
            rc = MPI_Info_set(info, "beta", "a somewhat longer value");
            CHECK(rc == MPI_SUCCESS, "Info_set of beta again failed");
            rc = MPI_Info_get(info, "beta", 6, v, &flag);
            if (rc != MPI_SUCCESS) {
                MPI_OK(MPI_Error_class(rc, &cls));
                CHECK(cls == MPI_ERR_INFO_VALUE, "Info_get with a short valuelen: class %d", cls);
            } else if (!flag || strncmp(v, "a some", 6) != 0 || v[6] != 0) {
                FAIL("Info_get with valuelen 6: expected 'a some', got flag %d '%.15s'", flag, v);
            }
            MPI_OK(MPI_Info_delete(info, "beta"));
        }
        char k[MPI_MAX_INFO_KEY + 1];
        int rc = MPI_Info_get_nthkey(info, 7, k);
        CHECK(rc != MPI_SUCCESS, "Info_get_nthkey beyond the number of keys succeeded");
        /* nothing changed */
        const char *k2[2] = {"alpha", "gamma"};
        expect_keys(info, 2, k2, "after the errors");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Info_free(&dup));
    CHECK(info == MPI_INFO_NULL && dup == MPI_INFO_NULL, "Info_free did not set MPI_INFO_NULL");
    t_done();
    return 0;
}
