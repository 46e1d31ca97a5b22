/* Communicator hints: MPI_Comm_get_info returns the hints in use, so a key
 * weft does not know is ignored by MPI_Comm_set_info, MPI_Comm_dup_with_info
 * and MPI_Comm_idup_with_info, while the standard's assertions are kept at
 * the value given and pass to a duplicate (MPI_Comm_dup). The info object
 * may be freed before an idup completes. Works at any size. */
#include "common.h"

#define UNKNOWN "weft_test_unknown_key"

/* c's hints: `key` at `value` (value NULL: absent), and never UNKNOWN. */
static void expect_hint(MPI_Comm c, const char *key, const char *value, const char *what)
{
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Comm_get_info(c, &used));
    MPI_OK(MPI_Info_get(used, UNKNOWN, MPI_MAX_INFO_VAL, v, &flag));
    CHECK(!flag, "%s: the unknown key was kept (value '%s')", what, v);
    MPI_OK(MPI_Info_get(used, key, MPI_MAX_INFO_VAL, v, &flag));
    if (value)
        CHECK(flag && strcmp(v, value) == 0, "%s: %s expected '%s', got '%s'", what, key, value,
              flag ? v : "(none)");
    else
        CHECK(!flag, "%s: %s expected absent, got '%s'", what, key, v);
    MPI_OK(MPI_Info_free(&used));
}

/* c works: an Allreduce over it. */
static void use(MPI_Comm c, const char *what)
{
    int n, one = 1, sum = -1;
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_EQ_INT(sum, n, what);
}

static MPI_Info hints(const char *key, const char *value)
{
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, UNKNOWN, "true"));
    MPI_OK(MPI_Info_set(info, key, value));
    return info;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "comm_hints");
    MPI_Comm c, d, e;
    MPI_Request rq;

    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Info info = hints("mpi_assert_no_any_tag", "true");
    MPI_OK(MPI_Comm_set_info(c, info));
    MPI_OK(MPI_Info_free(&info));
    expect_hint(c, "mpi_assert_no_any_tag", "true", "set_info");
    use(c, "after set_info");

    MPI_OK(MPI_Comm_dup(c, &d));
    expect_hint(d, "mpi_assert_no_any_tag", "true", "dup of a communicator with hints");
    use(d, "dup");
    MPI_OK(MPI_Comm_free(&d));

    info = hints("mpi_assert_exact_length", "true");
    MPI_OK(MPI_Comm_dup_with_info(c, info, &d));
    MPI_OK(MPI_Info_free(&info));
    expect_hint(d, "mpi_assert_exact_length", "true", "dup_with_info");
    expect_hint(d, "mpi_assert_no_any_tag", NULL, "dup_with_info (hints replaced)");
    use(d, "dup_with_info");

    info = hints("mpi_assert_no_any_source", "false");
    MPI_OK(MPI_Comm_idup_with_info(d, info, &e, &rq));
    MPI_OK(MPI_Info_free(&info)); /* before the idup completes */
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    expect_hint(e, "mpi_assert_no_any_source", "false", "idup_with_info");
    use(e, "idup_with_info");
    MPI_OK(MPI_Comm_free(&e));

    MPI_OK(MPI_Comm_idup(d, &e, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    expect_hint(e, "mpi_assert_exact_length", "true", "idup");
    use(e, "idup");
    MPI_OK(MPI_Comm_free(&e));
    MPI_OK(MPI_Comm_free(&d));

    MPI_OK(MPI_Comm_free(&c));
    t_done();
    return 0;
}
