/* Error handlers and info of windows, and two small queries:
 *   - Win_create_errhandler / Win_set_errhandler / Win_get_errhandler /
 *     Win_call_errhandler: a user handler is called with the window and the
 *     error code of a failing RMA call (a Put outside every epoch:
 *     MPI_ERR_RMA_SYNC), which the call then returns; MPI_ERRORS_RETURN on a
 *     window makes its calls return codes while MPI_COMM_WORLD stays fatal;
 *     a communicator's handler cannot be set on a window;
 *   - Win_get_info gives the hints of the creation (and of Win_set_info) beside
 *     weft's own (no_locks, accumulate_ordering, same_size, same_disp_unit);
 *   - Type_match_size: the predefined type of each class and size, MPI_ERR_ARG
 *     for a size no type of the class has;
 *   - Comm_get_parent is MPI_COMM_NULL in a job that was not spawned. */
#include "common.h"

static MPI_Win seen_win = MPI_WIN_NULL;
static int seen_code, seen_calls;

static void win_handler(MPI_Win *win, int *code, ...)
{
    seen_win = *win;
    seen_code = *code;
    seen_calls++;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

static int error_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static void expect_info(MPI_Info info, const char *key, const char *want)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag, "info key %s missing", key);
    if (want)
        CHECK(strcmp(value, want) == 0, "info key %s: '%s', expected '%s'", key, value, want);
}

static void errhandlers(void)
{
    long long mem[2] = {0, 0}, v = 7;
    MPI_Win win;
    MPI_Errhandler eh, got, ceh;
    MPI_OK(MPI_Win_create(mem, sizeof mem, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_create_errhandler(win_handler, &eh));
    MPI_OK(MPI_Win_set_errhandler(win, eh));
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == eh, "Win_get_errhandler gave 0x%x, expected 0x%x", (unsigned)got, (unsigned)eh);
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Errhandler_free(&eh)); /* the window keeps its reference */

    int rc = MPI_Put(&v, 1, MPI_LONG_LONG, (t_rank + 1) % t_size, 0, 1, MPI_LONG_LONG, win);
    CHECK_EQ_INT(error_class(rc), MPI_ERR_RMA_SYNC, "Put outside every epoch");
    CHECK_EQ_INT(seen_calls, 1, "calls of the window's handler");
    CHECK(seen_win == win, "handler called with 0x%x, expected the window 0x%x", (unsigned)seen_win, (unsigned)win);
    CHECK_EQ_INT(seen_code, rc, "code given to the handler");

    MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK_EQ_INT(seen_calls, 2, "calls after Win_call_errhandler");
    CHECK_EQ_INT(seen_code, MPI_ERR_OTHER, "code of Win_call_errhandler");

    /* a communicator's handler is refused (the window's handler sees the error) */
    MPI_OK(MPI_Comm_create_errhandler(comm_handler, &ceh));
    rc = MPI_Win_set_errhandler(win, ceh);
    CHECK_EQ_INT(error_class(rc), MPI_ERR_ARG, "Win_set_errhandler with a communicator's handler");
    CHECK_EQ_INT(seen_calls, 3, "calls after the refused handler");
    MPI_OK(MPI_Errhandler_free(&ceh));

    /* MPI_ERRORS_RETURN on the window; MPI_COMM_WORLD stays fatal */
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_RETURN, "Win_get_errhandler after MPI_ERRORS_RETURN");
    rc = MPI_Win_lock(12345, 0, 0, win);
    CHECK_EQ_INT(error_class(rc), MPI_ERR_LOCKTYPE, "Win_lock with a bad lock type");
    CHECK_EQ_INT(seen_calls, 3, "the replaced handler is not called");
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD's handler changed");

    /* the window still works */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(&v, 1, MPI_LONG_LONG, (t_rank + 1) % t_size, 1, 1, MPI_LONG_LONG, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[1] == 7 && mem[0] == 0, "window memory after the put: %lld %lld", mem[0], mem[1]);
    MPI_OK(MPI_Win_free(&win));
}

static void info(void)
{
    MPI_Info in, used, more;
    MPI_Win win;
    int mem[4];
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "no_locks", "true"));
    MPI_OK(MPI_Info_set(in, "weft_test_key", "given"));
    MPI_OK(MPI_Win_create(mem, sizeof mem, 1, in, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Info_free(&in));
    MPI_OK(MPI_Win_get_info(win, &used));
    expect_info(used, "no_locks", "true");
    expect_info(used, "weft_test_key", "given");
    expect_info(used, "accumulate_ordering", "rar,raw,war,waw");
    expect_info(used, "same_size", "false");
    expect_info(used, "same_disp_unit", "false");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Info_create(&more));
    MPI_OK(MPI_Info_set(more, "accumulate_ordering", "none"));
    MPI_OK(MPI_Win_set_info(win, more));
    MPI_OK(MPI_Info_free(&more));
    MPI_OK(MPI_Win_get_info(win, &used));
    expect_info(used, "accumulate_ordering", "none");
    expect_info(used, "weft_test_key", "given");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Win_free(&win));
}

static void match_size(void)
{
    struct {
        int cls, size;
        MPI_Datatype want;
    } cases[] = {
        {MPI_TYPECLASS_REAL, sizeof(float), MPI_FLOAT},
        {MPI_TYPECLASS_REAL, sizeof(double), MPI_DOUBLE},
        {MPI_TYPECLASS_REAL, sizeof(long double), MPI_LONG_DOUBLE},
        {MPI_TYPECLASS_INTEGER, 1, MPI_SIGNED_CHAR},
        {MPI_TYPECLASS_INTEGER, sizeof(short), MPI_SHORT},
        {MPI_TYPECLASS_INTEGER, sizeof(int), MPI_INT},
        {MPI_TYPECLASS_INTEGER, sizeof(long), MPI_LONG},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(float), MPI_C_FLOAT_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(double), MPI_C_DOUBLE_COMPLEX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int size = 0;
        MPI_OK(MPI_Type_match_size(cases[i].cls, cases[i].size, &t));
        CHECK(t == cases[i].want, "match_size(%d, %d) gave 0x%x, expected 0x%x", cases[i].cls, cases[i].size,
              (unsigned)t, (unsigned)cases[i].want);
        MPI_OK(MPI_Type_size(t, &size));
        CHECK_EQ_INT(size, cases[i].size, "size of the matched type");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t;
    CHECK_EQ_INT(error_class(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t)), MPI_ERR_ARG, "a real of 3 bytes");
    CHECK_EQ_INT(error_class(MPI_Type_match_size(99, 4, &t)), MPI_ERR_ARG, "an unknown type class");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_WORLD;
    t_init(&argc, &argv, "win_errhandler");
    errhandlers();
    info();
    match_size();
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "Comm_get_parent gave 0x%x in a job that was not spawned", (unsigned)parent);
    t_done();
    return 0;
}
