/* The MPI tool information interface: every control variable is enumerated and read (and its
 * value checked against the environment this program sets), writable ones are written, the
 * categories cover every variable once, and the performance variables move by exactly what the
 * job does: messages and bytes per path, the unexpected queue, collective calls per algorithm.
 * Error classes for bad indices, names, handles and sessions, and the interface before MPI_Init
 * and after MPI_Finalize. */
#include "common.h"

#define T_OK(call)                                                                  \
    do {                                                                            \
        int t_rc_ = (call);                                                         \
        if (t_rc_ != MPI_SUCCESS) FAIL("%s returned %d", #call, t_rc_);             \
    } while (0)
#define T_ERR(call, expected)                                                       \
    do {                                                                            \
        int t_rc_ = (call);                                                         \
        if (t_rc_ != (expected)) FAIL("%s returned %d, expected %s (%d)", #call, t_rc_, #expected, (expected)); \
    } while (0)

/* The settings this program gives itself before the interface reads the environment. */
static const char *const kSet[][2] = {
    {"WEFT_SPIN_COUNT", "1234"},           /* integer */
    {"WEFT_SHM_SPLIT_MIN", "96k"},         /* size */
    {"WEFT_DEBUG_SUBSYS", "pt2pt,coll"},   /* string */
    {"WEFT_REQUIRE_FAST_PATH", "no"},      /* boolean */
    {"WEFT_WAIT_POLICY", "AUTO"},          /* choice, in another case than listed */
};

static int cvar_index(const char *name)
{
    int idx = -1;
    T_OK(MPI_T_cvar_get_index(name, &idx));
    return idx;
}

static int pvar_index(const char *name, int var_class)
{
    int idx = -1;
    T_OK(MPI_T_pvar_get_index(name, var_class, &idx));
    return idx;
}

/* Reads a control variable whose value fits in 1024 bytes. */
static void cvar_read(int idx, void *buf)
{
    MPI_T_cvar_handle h;
    int count = 0;
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    CHECK(count >= 1 && count <= 1024, "cvar %d: count %d", idx, count);
    T_OK(MPI_T_cvar_read(h, buf));
    T_OK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset by free");
}

static int cvar_write(int idx, const void *buf)
{
    MPI_T_cvar_handle h;
    int count = 0;
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    int rc = MPI_T_cvar_write(h, buf);
    T_OK(MPI_T_cvar_handle_free(&h));
    return rc;
}

/* The item name of enumeration value v. */
static void enum_name(MPI_T_enum e, int v, char *out, int len)
{
    int num = 0, value = -1, name_len = 0;
    T_OK(MPI_T_enum_get_info(e, &num, NULL, &name_len));
    CHECK(v >= 0 && v < num, "value %d outside the enumeration (%d items)", v, num);
    T_OK(MPI_T_enum_get_item(e, v, &value, out, &len));
    CHECK(value == v, "item %d has value %d", v, value);
}

/* Every control variable: info, a read, and, for the ones this program set, the value. */
static int check_cvars(void)
{
    int num = 0;
    T_OK(MPI_T_cvar_get_num(&num));
    CHECK(num >= 40, "only %d control variables", num);
    int matched = 0;
    for (int i = 0; i < num; ++i) {
        char name[256], desc[2048];
        int name_len = 0, desc_len = (int)sizeof desc, verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        /* Length first, as tools do. */
        T_OK(MPI_T_cvar_get_info(i, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(name_len > 1 && name_len <= (int)sizeof name, "cvar %d: name length %d", i, name_len);
        T_OK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &en, desc, &desc_len, &bind, &scope));
        CHECK(name_len == (int)strlen(name) + 1, "cvar %s: name_len %d", name, name_len);
        CHECK(strncmp(name, "WEFT_", 5) == 0 && desc_len > 1, "cvar %d: name '%s', desc '%s'", i, name, desc);
        CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL, "cvar %s: verbosity %d", name, verbosity);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "cvar %s: bind %d", name, bind);
        CHECK(scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_LOCAL, "cvar %s: scope %d", name, scope);
        CHECK(cvar_index(name) == i, "cvar %s: index by name differs", name);
        union { char s[1024]; MPI_Count count; unsigned long long ull; int i; } v;
        memset(&v, 0x5a, sizeof v);
        cvar_read(i, &v);
        if (dt == MPI_CHAR) CHECK(memchr(v.s, '\0', sizeof v.s) != NULL, "cvar %s: string not terminated", name);
        else if (en != MPI_T_ENUM_NULL) {
            CHECK(dt == MPI_INT, "cvar %s: an enumeration of another type than int", name);
            char item[64];
            enum_name(en, v.i, item, (int)sizeof item);
        } else CHECK(dt == MPI_INT || dt == MPI_COUNT || dt == MPI_UNSIGNED_LONG_LONG, "cvar %s: datatype", name);

        const char *set = NULL;
        for (size_t k = 0; k < sizeof kSet / sizeof kSet[0]; ++k)
            if (strcmp(kSet[k][0], name) == 0) set = kSet[k][1];
        if (!set) continue;
        ++matched;
        if (strcmp(name, "WEFT_SPIN_COUNT") == 0)
            CHECK(dt == MPI_COUNT && v.count == 1234, "WEFT_SPIN_COUNT read %ld", (long)v.count);
        else if (strcmp(name, "WEFT_SHM_SPLIT_MIN") == 0)
            CHECK(dt == MPI_UNSIGNED_LONG_LONG && v.ull == 96 * 1024, "WEFT_SHM_SPLIT_MIN read %llu", v.ull);
        else if (strcmp(name, "WEFT_DEBUG_SUBSYS") == 0)
            CHECK(dt == MPI_CHAR && strcmp(v.s, "pt2pt,coll") == 0, "WEFT_DEBUG_SUBSYS read '%s'", v.s);
        else if (strcmp(name, "WEFT_REQUIRE_FAST_PATH") == 0)
            CHECK(dt == MPI_INT && v.i == 0, "WEFT_REQUIRE_FAST_PATH read %d", v.i);
        else if (strcmp(name, "WEFT_WAIT_POLICY") == 0) {
            char item[64];
            enum_name(en, v.i, item, (int)sizeof item);
            CHECK(strcmp(item, "auto") == 0, "WEFT_WAIT_POLICY read item '%s'", item);
        }
    }
    CHECK(matched == (int)(sizeof kSet / sizeof kSet[0]), "found %d of the variables set", matched);
    return num;
}

/* Every category lists its variables; together they list each variable exactly once. */
static int check_categories(int num_cvar, int num_pvar)
{
    int num = 0;
    T_OK(MPI_T_category_get_num(&num));
    CHECK(num >= 4, "%d categories", num);
    char *cseen = calloc((size_t)num_cvar, 1), *pseen = calloc((size_t)num_pvar, 1);
    for (int c = 0; c < num; ++c) {
        char name[128], desc[512];
        int name_len = sizeof name, desc_len = sizeof desc, nc, np, ncat, idx = -1;
        T_OK(MPI_T_category_get_info(c, name, &name_len, desc, &desc_len, &nc, &np, &ncat));
        T_OK(MPI_T_category_get_index(name, &idx));
        CHECK(idx == c, "category %s: index %d by name", name, idx);
        int *ids = malloc(sizeof(int) * (size_t)(nc + np + 1));
        T_OK(MPI_T_category_get_cvars(c, nc, ids));
        for (int k = 0; k < nc; ++k) {
            CHECK(ids[k] >= 0 && ids[k] < num_cvar && !cseen[ids[k]], "category %s: cvar %d", name, ids[k]);
            cseen[ids[k]] = 1;
        }
        T_OK(MPI_T_category_get_pvars(c, np, ids));
        for (int k = 0; k < np; ++k) {
            CHECK(ids[k] >= 0 && ids[k] < num_pvar && !pseen[ids[k]], "category %s: pvar %d", name, ids[k]);
            pseen[ids[k]] = 1;
        }
        free(ids);
    }
    for (int i = 0; i < num_cvar; ++i) CHECK(cseen[i], "cvar %d in no category", i);
    for (int i = 0; i < num_pvar; ++i) CHECK(pseen[i], "pvar %d in no category", i);
    free(cseen);
    free(pseen);
    int changed = -1;
    T_OK(MPI_T_category_changed(&changed));
    return num;
}

/* Every performance variable: info, a handle and a read. */
static int check_pvar_info(MPI_T_pvar_session s)
{
    int num = 0;
    T_OK(MPI_T_pvar_get_num(&num));
    CHECK(num >= 10, "only %d performance variables", num);
    for (int i = 0; i < num; ++i) {
        char name[256];
        int name_len = sizeof name, verbosity, var_class, bind, readonly, continuous, atomic, count;
        MPI_Datatype dt;
        MPI_T_enum en;
        T_OK(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &dt, &en, NULL, NULL, &bind,
                                 &readonly, &continuous, &atomic));
        CHECK(dt == MPI_UNSIGNED_LONG_LONG && en == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT, "pvar %s", name);
        CHECK(var_class == MPI_T_PVAR_CLASS_COUNTER || var_class == MPI_T_PVAR_CLASS_LEVEL, "pvar %s: class %d", name, var_class);
        CHECK(pvar_index(name, var_class) == i, "pvar %s: index by name differs", name);
        MPI_T_pvar_handle h;
        T_OK(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count));
        CHECK(count == 1, "pvar %s: count %d", name, count);
        unsigned long long v = ~0ull;
        T_OK(MPI_T_pvar_read(s, h, &v));
        CHECK(v != ~0ull, "pvar %s not read", name);
        T_OK(MPI_T_pvar_handle_free(s, &h));
    }
    return num;
}

static unsigned long long pvar_read_now(MPI_T_pvar_session s, int idx)
{
    MPI_T_pvar_handle h;
    int count;
    unsigned long long v = 0;
    T_OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
    T_OK(MPI_T_pvar_read(s, h, &v));
    T_OK(MPI_T_pvar_handle_free(s, &h));
    return v;
}

/* Sum of the calls counted for one collective's algorithms. */
static unsigned long long coll_calls(MPI_T_pvar_session s, const char *coll)
{
    int num = 0;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "weft_coll_%s_", coll);
    T_OK(MPI_T_pvar_get_num(&num));
    unsigned long long sum = 0;
    for (int i = 0; i < num; ++i) {
        char name[256];
        int name_len = sizeof name, var_class;
        T_OK(MPI_T_pvar_get_info(i, name, &name_len, NULL, &var_class, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        /* "allreduce_" must not count "allreduce_..." for "reduce_": the prefix is exact. */
        if (strncmp(name, prefix, strlen(prefix)) == 0 && strstr(name, "_calls")) sum += pvar_read_now(s, i);
    }
    return sum;
}

static void check_errors_before_init(void)
{
    int idx = -1, rc;
    T_ERR(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_cvar_get_index("WEFT_NO_SUCH_SETTING", &idx), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_pvar_get_index("weft_no_such_pvar", MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_category_get_info(1000, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    MPI_T_cvar_handle bogus = (MPI_T_cvar_handle)&idx;
    T_ERR(MPI_T_cvar_read(bogus, &rc), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_enum_get_info((MPI_T_enum)&idx, NULL, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    long long spin = 5;
    T_ERR(cvar_write(cvar_index("WEFT_SPIN_COUNT"), &spin), MPI_T_ERR_CVAR_SET_NEVER);
    T_ERR(cvar_write(cvar_index("WEFT_TIMEOUT"), "30"), MPI_T_ERR_CVAR_SET_NOT_NOW);
    int events = -1, sources = -1;
    T_OK(MPI_T_event_get_num(&events));
    T_OK(MPI_T_source_get_num(&sources));
    CHECK(events == 0 && sources == 0, "%d events, %d sources", events, sources);
}

static void check_writes(void)
{
    const int dbg = cvar_index("WEFT_DEBUG");
    int level = -1, info = 2, warn = 1;
    T_OK(cvar_write(dbg, &info));
    cvar_read(dbg, &level);
    CHECK(level == 2, "WEFT_DEBUG read %d after writing 2", level);
    T_OK(cvar_write(dbg, &warn));
    cvar_read(dbg, &level);
    CHECK(level == 1, "WEFT_DEBUG read %d after writing 1", level);
    int bad = 9;
    T_ERR(cvar_write(dbg, &bad), MPI_T_ERR_INVALID);
    const int timeout = cvar_index("WEFT_TIMEOUT");
    char text[1024];
    T_OK(cvar_write(timeout, "45.5"));
    cvar_read(timeout, text);
    CHECK(strcmp(text, "45.5") == 0, "WEFT_TIMEOUT read '%s'", text);
    T_ERR(cvar_write(timeout, "-1"), MPI_T_ERR_INVALID);
    T_OK(cvar_write(timeout, "0"));
}

/* The counters move by what this job does (rank 0 sends to rank 1). */
static void check_traffic(MPI_T_pvar_session s, int over_ucx)
{
    const int nmsg = 10, bytes = 1000, nunexp = 5, ncoll = 7;
    const char *path = over_ucx ? "ucx" : "shm";
    char name[64];
    snprintf(name, sizeof name, "weft_pt2pt_%s_messages_sent", path);
    const int msgs = pvar_index(name, MPI_T_PVAR_CLASS_COUNTER);
    snprintf(name, sizeof name, "weft_pt2pt_%s_bytes_sent", path);
    const int byts = pvar_index(name, MPI_T_PVAR_CLASS_COUNTER);
    const int unexp = pvar_index("weft_pt2pt_unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL);

    /* Handles that stay allocated: reads are relative to a reset. */
    MPI_T_pvar_handle hm, hb, hu;
    int count;
    T_OK(MPI_T_pvar_handle_alloc(s, msgs, NULL, &hm, &count));
    T_OK(MPI_T_pvar_handle_alloc(s, byts, NULL, &hb, &count));
    T_OK(MPI_T_pvar_handle_alloc(s, unexp, NULL, &hu, &count));
    MPI_Barrier(MPI_COMM_WORLD);
    T_OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    char buf[1000];
    unsigned long long m = 0, b = 0, u = 0;
    if (t_rank == 0) {
        memset(buf, 7, sizeof buf);
        for (int k = 0; k < nmsg; ++k) MPI_Send(buf, bytes, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        T_OK(MPI_T_pvar_read(s, hm, &m));
        T_OK(MPI_T_pvar_read(s, hb, &b));
        CHECK(m == (unsigned long long)nmsg && b == (unsigned long long)nmsg * bytes,
              "%s: %llu messages, %llu bytes counted for %d of %d bytes", path, m, b, nmsg, bytes);
        /* Unexpected at rank 1: tag 6 messages it receives only after the tag 7 one. */
        for (int k = 0; k < nunexp; ++k) MPI_Send(buf, 8, MPI_BYTE, 1, 6, MPI_COMM_WORLD);
        MPI_Send(buf, 8, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    } else if (t_rank == 1) {
        for (int k = 0; k < nmsg; ++k) {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(buf[0] == 7 && buf[bytes - 1] == 7, "message %d content", k);
        }
        MPI_Recv(buf, 8, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        T_OK(MPI_T_pvar_read(s, hu, &u));
        /* Over UCX, UCX holds them: weft's queue stays empty. */
        CHECK(u == (over_ucx ? 0ull : (unsigned long long)nunexp), "unexpected queue length %llu (%s)", u, path);
        for (int k = 0; k < nunexp; ++k) MPI_Recv(buf, 8, MPI_BYTE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        T_OK(MPI_T_pvar_read(s, hu, &u));
        CHECK(u == 0, "unexpected queue length %llu after the receives", u);
        /* Until now no other rank may send here: a barrier's message would be unexpected too. */
        for (int r = 0; r < t_size; ++r)
            if (r != 1) MPI_Send(buf, 1, MPI_BYTE, r, 8, MPI_COMM_WORLD);
    }
    if (t_rank != 1) MPI_Recv(buf, 1, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* A counter written reads back relative to the value written. */
    unsigned long long hundred = 100;
    T_OK(MPI_T_pvar_write(s, hm, &hundred));
    T_OK(MPI_T_pvar_read(s, hm, &m));
    CHECK(m == 100, "counter read %llu after writing 100", m);
    T_ERR(MPI_T_pvar_reset(s, hu), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_write(s, hu, &hundred), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_start(s, hm), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_ERR(MPI_T_pvar_readreset(s, hm, &m), MPI_T_ERR_PVAR_NO_ATOMIC);
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    T_ERR(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &m), MPI_T_ERR_INVALID_HANDLE);

    MPI_T_pvar_session other;
    T_OK(MPI_T_pvar_session_create(&other));
    T_ERR(MPI_T_pvar_read(other, hm, &m), MPI_T_ERR_INVALID_HANDLE);  /* hm belongs to s */
    T_OK(MPI_T_pvar_session_free(&other));
    T_ERR(MPI_T_pvar_read(other, hm, &m), MPI_T_ERR_INVALID_SESSION);
    T_ERR(MPI_T_pvar_read((MPI_T_pvar_session)&count, hm, &m), MPI_T_ERR_INVALID_SESSION);

    /* Collective calls per algorithm: exactly the calls made. */
    MPI_Barrier(MPI_COMM_WORLD);
    const unsigned long long ar0 = coll_calls(s, "allreduce"), bc0 = coll_calls(s, "bcast");
    for (int k = 0; k < ncoll; ++k) {
        int in = t_rank + k, out = -1;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(out == t_size * (t_size - 1) / 2 + t_size * k, "allreduce %d gave %d", k, out);
    }
    int root_value = t_rank == 0 ? 42 : 0;
    MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(root_value == 42, "bcast gave %d", root_value);
    const unsigned long long ar1 = coll_calls(s, "allreduce"), bc1 = coll_calls(s, "bcast");
    if (t_size > 1)
        CHECK(ar1 - ar0 == (unsigned long long)ncoll && bc1 - bc0 == 1,
              "counted %llu allreduce and %llu bcast calls for %d and 1", ar1 - ar0, bc1 - bc0, ncoll);
    T_OK(MPI_T_pvar_handle_free(s, &hm));
    T_OK(MPI_T_pvar_handle_free(s, &hb));
    T_OK(MPI_T_pvar_handle_free(s, &hu));
}

int main(int argc, char **argv)
{
    for (size_t k = 0; k < sizeof kSet / sizeof kSet[0]; ++k) setenv(kSet[k][0], kSet[k][1], 1);
    int provided = -1;
    /* Before MPI_Init, twice: calls nest. */
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    const int num_cvar = check_cvars();
    check_errors_before_init();

    t_init(&argc, &argv, "mpi_t");
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    const int num_pvar = check_pvar_info(s);
    const int num_cat = check_categories(num_cvar, num_pvar);
    check_writes();
    char pt2pt[1024];
    int pt2pt_choice = -1;
    cvar_read(cvar_index("WEFT_PT2PT"), &pt2pt_choice);
    MPI_T_enum en;
    T_OK(MPI_T_cvar_get_info(cvar_index("WEFT_PT2PT"), NULL, NULL, NULL, NULL, &en, NULL, NULL, NULL, NULL));
    enum_name(en, pt2pt_choice, pt2pt, (int)sizeof pt2pt);
    if (t_size >= 2) check_traffic(s, strcmp(pt2pt, "ucx") == 0);
    T_OK(MPI_T_pvar_session_free(&s));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("mpi_t: %d control variables, %d performance variables, %d categories checked on %d ranks (path %s)\n",
               num_cvar, num_pvar, num_cat, t_size, pt2pt);
    MPI_Finalize();

    /* Still usable after MPI_Finalize, until the last MPI_T_finalize. */
    int n = 0;
    T_OK(MPI_T_cvar_get_num(&n));
    T_OK(MPI_T_finalize());
    T_OK(MPI_T_finalize());
    T_ERR(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    return 0;
}
