/* WEFT_COLL_CHECK (set here before MPI_Init): collective calls whose members disagree on what
 * they must give alike fail at every member with the matching error class, and nothing hangs;
 * calls that agree (v forms, in place, user operations, non-blocking) run as before, their
 * results checked:
 *  - MPI_Bcast with a count of 1 at the root and 10 elsewhere: MPI_ERR_COUNT everywhere;
 *  - MPI_Reduce with two roots: MPI_ERR_ROOT; MPI_Allreduce with MPI_MAX at one rank and
 *    MPI_SUM at the others: MPI_ERR_OP; MPI_Reduce_scatter with other recvcounts at one rank:
 *    MPI_ERR_COUNT;
 *  - rank 0 in MPI_Bcast while the others are in MPI_Allreduce: MPI_ERR_ARG everywhere;
 *  - MPI_Allgather where rank 1 sends 1 int and receives blocks of 2: MPI_ERR_TRUNCATE
 *    everywhere; MPI_Ialltoall with another block size at the last rank: MPI_ERR_COUNT at the
 *    call, everywhere;
 *  - agreeing calls after each: Allreduce (sum and a user operation), Gatherv with per-rank
 *    counts, Allgather in place, Ibcast. */
#include <stdlib.h>

#include "common.h"

static void expect_class(int rc, int cls, const char *what)
{
    int got = MPI_SUCCESS;
    MPI_Error_class(rc, &got);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    CHECK(got == cls, "%s: error class %d, expected %d (%s)", what, got, cls, msg);
    CHECK(rc == MPI_SUCCESS || strstr(msg, "WEFT_COLL_CHECK"), "%s: message does not name the check: %s", what,
          msg);
}

static void agreeing_allreduce(int round)
{
    int v = t_rank + round, sum = -1;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == t_size * (t_size - 1) / 2 + t_size * round, "allreduce after round %d: %d", round, sum);
}

static void user_max(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; ++i)
        if (((int *)in)[i] > ((int *)inout)[i]) ((int *)inout)[i] = ((int *)in)[i];
}

int main(int argc, char **argv)
{
    setenv("WEFT_COLL_CHECK", "1", 1);
    t_init(&argc, &argv, "coll_check");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int last = t_size - 1;
    int buf[64] = {0};

    /* Counts. */
    expect_class(MPI_Bcast(buf, t_rank == 0 ? 1 : 10, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "bcast counts");
    agreeing_allreduce(1);
    /* Roots. */
    int one = 1, out = 0;
    expect_class(MPI_Reduce(&one, &out, 1, MPI_INT, MPI_SUM, t_rank == 0 ? 0 : last, MPI_COMM_WORLD),
                 MPI_ERR_ROOT, "reduce roots");
    agreeing_allreduce(2);
    /* Operations. */
    expect_class(MPI_Allreduce(&one, &out, 1, MPI_INT, t_rank == 0 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD),
                 MPI_ERR_OP, "allreduce operations");
    /* recvcounts. */
    int counts[64], in[64], res[2];
    for (int r = 0; r < t_size; ++r) counts[r] = 1;
    if (t_rank == last) counts[0] = 2;
    for (int i = 0; i < 64; ++i) in[i] = 1;
    expect_class(MPI_Reduce_scatter(in, res, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT,
                 "reduce_scatter recvcounts");
    agreeing_allreduce(3);
    /* Different collectives. */
    if (t_rank == 0)
        expect_class(MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_ARG, "bcast against allreduce");
    else
        expect_class(MPI_Allreduce(&one, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_ARG,
                     "allreduce against bcast");
    agreeing_allreduce(4);
    /* A rank's own blocks differ. */
    int gathered[128];
    expect_class(MPI_Allgather(buf, t_rank == 1 ? 1 : 2, MPI_INT, gathered, 2, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_TRUNCATE, "allgather own blocks");
    MPI_Request req = MPI_REQUEST_NULL;
    expect_class(MPI_Ialltoall(in, t_rank == last ? 2 : 1, MPI_INT, gathered, t_rank == last ? 2 : 1, MPI_INT,
                               MPI_COMM_WORLD, &req),
                 MPI_ERR_COUNT, "ialltoall blocks");
    CHECK(req == MPI_REQUEST_NULL, "a refused ialltoall left a request");
    agreeing_allreduce(5);

    /* Agreeing calls run, results checked. */
    MPI_Op op;
    MPI_OK(MPI_Op_create(user_max, 1, &op));
    int mine = 10 * t_rank, top = -1;
    MPI_OK(MPI_Allreduce(&mine, &top, 1, MPI_INT, op, MPI_COMM_WORLD));
    CHECK(top == 10 * last, "user max %d", top);
    MPI_OK(MPI_Op_free(&op));
    int rcounts[64], displs[64], send[64], total = 0;
    for (int r = 0; r < t_size; ++r) {
        rcounts[r] = r + 1;
        displs[r] = total;
        total += r + 1;
    }
    for (int i = 0; i <= t_rank; ++i) send[i] = 100 * t_rank + i;
    MPI_OK(MPI_Gatherv(send, t_rank + 1, MPI_INT, gathered, rcounts, displs, MPI_INT, 0, MPI_COMM_WORLD));
    if (t_rank == 0)
        for (int r = 0; r < t_size; ++r)
            for (int i = 0; i <= r; ++i)
                CHECK(gathered[displs[r] + i] == 100 * r + i, "gatherv[%d][%d] = %d", r, i, gathered[displs[r] + i]);
    for (int r = 0; r < t_size; ++r) gathered[r] = r == t_rank ? 7 * r : -1;
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < t_size; ++r) CHECK(gathered[r] == 7 * r, "allgather in place [%d] = %d", r, gathered[r]);
    for (int i = 0; i < 16; ++i) buf[i] = t_rank == last ? 3 * i : -1;
    MPI_OK(MPI_Ibcast(buf, 16, MPI_INT, last, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; ++i) CHECK(buf[i] == 3 * i, "ibcast[%d] = %d", i, buf[i]);
    agreeing_allreduce(6);

    MPI_Finalize();
    if (t_rank == 0) printf("PASS coll_check\n");
    return 0;
}
