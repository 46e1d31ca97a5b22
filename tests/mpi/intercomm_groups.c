/* MPI_Intercomm_create_from_groups between the even and the odd world ranks, made by the two
 * groups' members alone: sizes, groups and ranks; point-to-point both ways; a bcast from each
 * side (MPI_ROOT / MPI_PROC_NULL); MPI_Intercomm_merge; leaders other than rank 0; a message on
 * MPI_COMM_WORLD in flight across the creation is not taken by it; many create/free cycles; and
 * overlapping groups refused with MPI_ERR_GROUP. Needs at least 2 ranks. */
#include "common.h"

static void make_groups(MPI_Group *evens, MPI_Group *odds)
{
    MPI_Group world;
    int ne = (t_size + 1) / 2, no = t_size / 2;
    int range_e[1][3] = {{0, 2 * (ne - 1), 2}}, range_o[1][3] = {{1, 2 * no - 1, 2}};
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_range_incl(world, 1, range_e, evens));
    MPI_OK(MPI_Group_range_incl(world, 1, range_o, odds));
    MPI_OK(MPI_Group_free(&world));
}

static void check_intercomm(MPI_Comm ic, int even)
{
    int flag = 0, size = -1, rsize = -1, rank = -1;
    MPI_OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "not an intercommunicator");
    MPI_OK(MPI_Comm_size(ic, &size));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    MPI_OK(MPI_Comm_rank(ic, &rank));
    CHECK_EQ_INT(size, even ? (t_size + 1) / 2 : t_size / 2, "local size");
    CHECK_EQ_INT(rsize, even ? t_size / 2 : (t_size + 1) / 2, "remote size");
    CHECK_EQ_INT(rank, t_rank / 2, "local rank");
    /* Each rank sends its world rank to remote rank (rank % rsize); every rank receives from
     * each remote rank that names it. */
    MPI_Request req;
    int out = t_rank;
    MPI_OK(MPI_Isend(&out, 1, MPI_INT, rank % rsize, 5, ic, &req));
    for (int r = 0; r < rsize; r++) {
        if (r % size != rank) continue;
        int in = -1;
        MPI_Status st;
        MPI_OK(MPI_Recv(&in, 1, MPI_INT, r, 5, ic, &st));
        CHECK_EQ_INT(in, even ? 2 * r + 1 : 2 * r, "value from the remote group");
        CHECK_EQ_INT(st.MPI_SOURCE, r, "status source");
    }
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* A bcast from each group's rank 0 to the other group. */
    for (int from_even = 1; from_even >= 0; from_even--) {
        int v = -1;
        int root = from_even == even ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        if (root == MPI_ROOT) v = 1000 + from_even;
        MPI_OK(MPI_Bcast(&v, 1, MPI_INT, root, ic));
        if (from_even != even) CHECK_EQ_INT(v, 1000 + from_even, "bcast value");
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "intercomm_groups");
    if (t_size < 2) {
        MPI_Finalize();
        return 0;
    }
    const int even = t_rank % 2 == 0;
    MPI_Group evens, odds;
    make_groups(&evens, &odds);
    MPI_Group mine = even ? evens : odds, theirs = even ? odds : evens;

    /* A message on MPI_COMM_WORLD under a small tag stays for its own receive. */
    int peer = even ? (t_rank + 1 < t_size ? t_rank + 1 : -1) : t_rank - 1;
    int token = 77 + t_rank, got = -1;
    MPI_Request sreq = MPI_REQUEST_NULL;
    if (peer >= 0) MPI_OK(MPI_Isend(&token, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &sreq));

    MPI_Comm ic;
    MPI_OK(MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, "weft.test.groups", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &ic));
    check_intercomm(ic, even);
    if (peer >= 0) {
        MPI_OK(MPI_Recv(&got, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_EQ_INT(got, 77 + peer, "world message across the creation");
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }

    /* Merge: the evens (high = 0) first. */
    MPI_Comm merged;
    int mrank = -1, msize = -1;
    MPI_OK(MPI_Intercomm_merge(ic, !even, &merged));
    MPI_OK(MPI_Comm_rank(merged, &mrank));
    MPI_OK(MPI_Comm_size(merged, &msize));
    CHECK_EQ_INT(msize, t_size, "merged size");
    CHECK_EQ_INT(mrank, even ? t_rank / 2 : (t_size + 1) / 2 + t_rank / 2, "merged rank");
    int sum = 0;
    MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK_EQ_INT(sum, t_size * (t_size - 1) / 2, "allreduce on the merged communicator");
    MPI_OK(MPI_Comm_free(&merged));
    MPI_OK(MPI_Comm_free(&ic));

    /* The last member of each group leads; many cycles reuse the context ids. */
    int nmine = -1, ntheirs = -1;
    MPI_OK(MPI_Group_size(mine, &nmine));
    MPI_OK(MPI_Group_size(theirs, &ntheirs));
    for (int i = 0; i < 100; i++) {
        MPI_OK(MPI_Intercomm_create_from_groups(mine, nmine - 1, theirs, ntheirs - 1, "weft.test.cycle",
                                                MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
        if (i % 25 == 0) check_intercomm(ic, even);
        MPI_OK(MPI_Comm_free(&ic));
    }

    /* Overlapping groups: refused before any message, with the handler given. */
    MPI_Group world;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int rc = MPI_Intercomm_create_from_groups(mine, 0, world, 0, "weft.test.bad", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &ic);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK_EQ_INT(cls, MPI_ERR_GROUP, "overlapping groups");
    MPI_OK(MPI_Group_free(&world));

    MPI_OK(MPI_Group_free(&evens));
    MPI_OK(MPI_Group_free(&odds));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) printf("intercomm_groups: OK\n");
    MPI_Finalize();
    return 0;
}
