/* Sessions (MPI-4.0), without MPI_Init first:
 *   - the process sets ("mpi://WORLD", "mpi://SELF", found without regard to
 *     case), their names' lengths, their "mpi_size" info and their groups;
 *   - the session's info carries the thread level provided;
 *   - communicators from groups of the world set (all ranks, the even ranks
 *     only, one rank alone) with an allreduce and a ring exchange checked; the
 *     odd ranks pass MPI_GROUP_EMPTY and get MPI_COMM_NULL;
 *   - two sessions at once, MPI_Init while one is open, and a session made
 *     again after every holder has finished (the runtime torn down and
 *     brought up again);
 *   - session error handlers: a user handler called through
 *     MPI_Session_call_errhandler and by an invalid process set name. */
#include "common.h"

static int handler_calls = 0, handler_code = 0;
static MPI_Session handler_session = MPI_SESSION_NULL;

static void on_error(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_session = *s;
}

/* An allreduce and a ring exchange on comm, whose ranks are `members` of the world. */
static void use_comm(MPI_Comm comm, const int *members, int n)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    CHECK_EQ_INT(size, n, "communicator size");
    CHECK_EQ_INT(members[rank], t_rank, "rank order follows the group");
    int sum = 0, expect = 0;
    for (int i = 0; i < n; i++) expect += members[i];
    MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK_EQ_INT(sum, expect, "allreduce over the new communicator");
    int out[16], in[16];
    for (int i = 0; i < 16; i++) out[i] = t_rank * 100 + i;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Sendrecv(out, 16, MPI_INT, right, 1, in, 16, MPI_INT, left, 1, comm, MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; i++) CHECK_EQ_INT(in[i], members[left] * 100 + i, "ring exchange");
}

static MPI_Comm comm_of_pset(MPI_Session s, const char *pset, const char *tag)
{
    MPI_Group g;
    MPI_Comm c;
    MPI_OK(MPI_Group_from_session_pset(s, pset, &g));
    MPI_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Group_free(&g));
    return c;
}

static void check_psets(MPI_Session s, int world)
{
    int n = 0;
    MPI_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "only %d process sets", n);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "name length %d", len);
        char name[MPI_MAX_PSET_NAME_LEN];
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK_EQ_INT((int)strlen(name) + 1, len, "pset name length");
        MPI_Info info;
        MPI_OK(MPI_Session_get_pset_info(s, name, &info));
        char v[32];
        int flag = 0;
        MPI_OK(MPI_Info_get(info, "mpi_size", sizeof(v) - 1, v, &flag));
        CHECK(flag, "no mpi_size for %s", name);
        MPI_OK(MPI_Info_free(&info));
        MPI_Group g;
        int gsize = 0;
        MPI_OK(MPI_Group_from_session_pset(s, name, &g));
        MPI_OK(MPI_Group_size(g, &gsize));
        CHECK_EQ_INT(gsize, atoi(v), "group size against mpi_size");
        MPI_OK(MPI_Group_free(&g));
        if (!strcmp(name, "mpi://WORLD")) {
            seen_world = 1;
            CHECK_EQ_INT(atoi(v), world, "mpi://WORLD size");
        }
        if (!strcmp(name, "mpi://SELF")) {
            seen_self = 1;
            CHECK_EQ_INT(atoi(v), 1, "mpi://SELF size");
        }
    }
    CHECK(seen_world && seen_self, "mpi://WORLD or mpi://SELF missing");
}

int main(void)
{
    t_name = "session";
    MPI_Info sinfo;
    MPI_Session s1, s2;
    /* MPI_Info_create needs a started runtime: the first session starts it. */
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1));
    MPI_OK(MPI_Info_create(&sinfo));
    MPI_OK(MPI_Info_set(sinfo, "thread_level", "MPI_THREAD_FUNNELED"));
    MPI_OK(MPI_Session_init(sinfo, MPI_ERRORS_RETURN, &s2));
    {  /* a thread level no level names: refused */
        MPI_Session bad = MPI_SESSION_NULL;
        MPI_OK(MPI_Info_set(sinfo, "thread_level", "NOT_A_THREAD_LEVEL"));
        CHECK(MPI_Session_init(sinfo, MPI_ERRORS_RETURN, &bad) != MPI_SUCCESS, "an invalid thread_level was accepted");
    }
    MPI_OK(MPI_Info_free(&sinfo));

    MPI_Group wg;
    MPI_OK(MPI_Group_from_session_pset(s1, "mpi://world", &wg));  /* names ignore case */
    MPI_OK(MPI_Group_rank(wg, &t_rank));
    MPI_OK(MPI_Group_size(wg, &t_size));
    MPI_OK(MPI_Group_free(&wg));
    check_psets(s1, t_size);

    MPI_Info used;
    char v[MPI_MAX_INFO_VAL];
    int flag = 0;
    MPI_OK(MPI_Session_get_info(s2, &used));
    MPI_OK(MPI_Info_get(used, "thread_level", sizeof(v) - 1, v, &flag));
    CHECK(flag && !strcmp(v, "MPI_THREAD_FUNNELED"), "thread_level %s", flag ? v : "(none)");
    MPI_OK(MPI_Info_free(&used));

    int world[64];
    CHECK(t_size <= 64, "too many ranks");
    for (int i = 0; i < t_size; i++) world[i] = i;
    MPI_Comm all = comm_of_pset(s1, "mpi://WORLD", "org.weft.test.all");
    use_comm(all, world, t_size);

    /* the even ranks of the world only */
    MPI_Group g, even;
    int evens[64], ne = 0;
    for (int i = 0; i < t_size; i += 2) evens[ne++] = i;
    MPI_OK(MPI_Group_from_session_pset(s2, "mpi://WORLD", &g));
    MPI_OK(MPI_Group_incl(g, ne, evens, &even));
    if (t_rank % 2 == 0) {
        MPI_Comm ce;
        MPI_OK(MPI_Comm_create_from_group(even, "org.weft.test.even", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ce));
        use_comm(ce, evens, ne);
        MPI_OK(MPI_Comm_free(&ce));
    } else { /* outside the group: MPI_GROUP_EMPTY gives MPI_COMM_NULL, and no one waits for it */
        MPI_Comm ce = MPI_COMM_SELF;
        MPI_OK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "org.weft.test.even", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ce));
        CHECK(ce == MPI_COMM_NULL, "MPI_Comm_create_from_group(MPI_GROUP_EMPTY) did not give MPI_COMM_NULL");
    }
    MPI_OK(MPI_Group_free(&even));
    MPI_OK(MPI_Group_free(&g));

    MPI_Comm self = comm_of_pset(s2, "mpi://SELF", "org.weft.test.self");
    int me[1] = {t_rank};
    use_comm(self, me, 1);
    MPI_OK(MPI_Comm_free(&self));

    /* error handlers */
    MPI_Errhandler eh, got;
    MPI_OK(MPI_Session_create_errhandler(on_error, &eh));
    MPI_OK(MPI_Session_set_errhandler(s2, eh));
    MPI_OK(MPI_Session_get_errhandler(s2, &got));
    CHECK(got == eh, "MPI_Session_get_errhandler returned another handler");
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Session_call_errhandler(s2, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER && handler_session == s2,
          "MPI_Session_call_errhandler: %d calls, code %d", handler_calls, handler_code);
    MPI_Group none;
    int rc = MPI_Group_from_session_pset(s2, "mpi://NO-SUCH-SET", &none);
    int cls = 0;
    MPI_Error_class(rc, &cls);
    CHECK(handler_calls == 2 && cls == MPI_ERR_ARG, "unknown process set: %d calls, class %d", handler_calls, cls);
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK_EQ_INT(MPI_Session_c2f(s2), (MPI_Fint)s2, "MPI_Session_c2f");
    CHECK(MPI_Session_f2c(MPI_Session_c2f(s2)) == s2, "MPI_Session_f2c");

    /* the world model beside the sessions */
    int inited = 1;
    MPI_OK(MPI_Initialized(&inited));
    CHECK(!inited, "MPI_Initialized true before MPI_Init");
    MPI_OK(MPI_Init(NULL, NULL));
    int wr = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wr));
    CHECK_EQ_INT(wr, t_rank, "MPI_COMM_WORLD rank");
    MPI_OK(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "finalized session not MPI_SESSION_NULL");
    MPI_OK(MPI_Finalize());
    use_comm(all, world, t_size);  /* s1 still holds the runtime */
    MPI_OK(MPI_Comm_free(&all));
    MPI_OK(MPI_Session_finalize(&s1));

    /* everything finished: a new session starts the runtime again */
    MPI_Session s3;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3));
    MPI_Comm again = comm_of_pset(s3, "mpi://WORLD", "org.weft.test.again");
    use_comm(again, world, t_size);
    MPI_OK(MPI_Comm_free(&again));
    MPI_OK(MPI_Session_finalize(&s3));
    if (t_rank == 0) printf("session: OK\n");
    return 0;
}
