/* Intercommunicators: MPI_Intercomm_create between the two halves of the world (uneven at odd
 * sizes) and between rank 0 and the rest; the local and remote groups, sizes and ranks;
 * point-to-point naming remote ranks (specific and MPI_ANY_SOURCE, probe, status.MPI_SOURCE);
 * MPI_Comm_compare, MPI_Comm_dup / MPI_Comm_idup, MPI_Comm_split and MPI_Comm_create on the
 * intercommunicator; MPI_Intercomm_merge with either high flag; MPI_Comm_free.
 * Needs at least 2 ranks. */
#include "common.h"

/* The ranks of world in the local group of an intercommunicator made with `low` = the world
 * ranks [0, cut) on one side. */
static void check_groups(MPI_Comm ic, int cut, int in_low, const char *what)
{
    int flag = 0, size = 0, rsize = 0, rank = -1;
    MPI_OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "%s: not an intercommunicator", what);
    MPI_OK(MPI_Comm_size(ic, &size));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    MPI_OK(MPI_Comm_rank(ic, &rank));
    CHECK_EQ_INT(size, in_low ? cut : t_size - cut, "local size");
    CHECK_EQ_INT(rsize, in_low ? t_size - cut : cut, "remote size");
    CHECK_EQ_INT(rank, in_low ? t_rank : t_rank - cut, "local rank");
    MPI_Group local, remote, world;
    MPI_OK(MPI_Comm_group(ic, &local));
    MPI_OK(MPI_Comm_remote_group(ic, &remote));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int r = 0; r < rsize; r++) {
        int w = -1;
        MPI_OK(MPI_Group_translate_ranks(remote, 1, &r, world, &w));
        CHECK_EQ_INT(w, in_low ? cut + r : r, "remote group member");
    }
    for (int r = 0; r < size; r++) {
        int w = -1;
        MPI_OK(MPI_Group_translate_ranks(local, 1, &r, world, &w));
        CHECK_EQ_INT(w, in_low ? r : cut + r, "local group member");
    }
    MPI_OK(MPI_Group_free(&local));
    MPI_OK(MPI_Group_free(&remote));
    MPI_OK(MPI_Group_free(&world));
}

/* Every rank sends its world rank to every remote rank, then receives one message from each
 * remote rank: first by rank, then by MPI_ANY_SOURCE after a probe. */
static void exchange(MPI_Comm ic, int salt)
{
    int rank, rsize;
    MPI_OK(MPI_Comm_rank(ic, &rank));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    MPI_Group remote, world;
    MPI_OK(MPI_Comm_remote_group(ic, &remote));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)rsize * 2);
    int *out = malloc(sizeof(int) * (size_t)rsize * 2);
    for (int r = 0; r < rsize; r++) {
        out[2 * r] = salt * 1000 + t_rank;
        out[2 * r + 1] = salt * 1000 + t_rank + 500;
        MPI_OK(MPI_Isend(&out[2 * r], 1, MPI_INT, r, 7, ic, &reqs[2 * r]));
        MPI_OK(MPI_Isend(&out[2 * r + 1], 1, MPI_INT, r, 8, ic, &reqs[2 * r + 1]));
    }
    for (int r = 0; r < rsize; r++) {
        int v = -1, w = -1;
        MPI_Status st;
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, r, 7, ic, &st));
        MPI_OK(MPI_Group_translate_ranks(remote, 1, &r, world, &w));
        CHECK_EQ_INT(v, salt * 1000 + w, "message from a remote rank");
        CHECK_EQ_INT(st.MPI_SOURCE, r, "status source");
    }
    for (int k = 0; k < rsize; k++) {
        int v = -1, w = -1, flag = 0;
        MPI_Status st;
        while (!flag) MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 8, ic, &flag, &st));
        int src = st.MPI_SOURCE;
        CHECK(src >= 0 && src < rsize, "probed source %d of %d", src, rsize);
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 8, ic, &st));
        MPI_OK(MPI_Group_translate_ranks(remote, 1, &st.MPI_SOURCE, world, &w));
        CHECK_EQ_INT(v, salt * 1000 + w + 500, "message from any remote rank");
    }
    MPI_OK(MPI_Waitall(rsize * 2, reqs, MPI_STATUSES_IGNORE));
    free(reqs);
    free(out);
    MPI_OK(MPI_Group_free(&remote));
    MPI_OK(MPI_Group_free(&world));
}

static void merged(MPI_Comm ic, int high, int expect_rank, const char *what)
{
    MPI_Comm m;
    int size, rank, flag = 1, sum = 0, one = t_rank;
    MPI_OK(MPI_Intercomm_merge(ic, high, &m));
    MPI_OK(MPI_Comm_size(m, &size));
    MPI_OK(MPI_Comm_rank(m, &rank));
    MPI_OK(MPI_Comm_test_inter(m, &flag));
    CHECK(!flag, "%s: the merged communicator is an intercommunicator", what);
    CHECK_EQ_INT(size, t_size, what);
    CHECK_EQ_INT(rank, expect_rank, what);
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, m));
    CHECK_EQ_INT(sum, t_size * (t_size - 1) / 2, "allreduce on the merged communicator");
    MPI_OK(MPI_Comm_free(&m));
}

static void one_split(int cut, int tag)
{
    int in_low = t_rank < cut;
    MPI_Comm local, ic, dup, idup;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, in_low, t_rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_low ? cut : 0, tag, &ic));
    check_groups(ic, cut, in_low, "intercomm");
    exchange(ic, 1);

    int result = -1;
    MPI_OK(MPI_Comm_dup(ic, &dup));
    check_groups(dup, cut, in_low, "dup");
    MPI_OK(MPI_Comm_compare(ic, dup, &result));
    CHECK_EQ_INT(result, MPI_CONGRUENT, "compare with its dup");
    MPI_OK(MPI_Comm_compare(ic, local, &result));
    CHECK_EQ_INT(result, MPI_UNEQUAL, "compare with an intracommunicator");
    exchange(dup, 2);
    MPI_Request req;
    MPI_OK(MPI_Comm_idup(ic, &idup, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    exchange(idup, 3);
    exchange(ic, 4);

    /* Merges: the low side first, then the high side first; equal flags order by group. */
    merged(ic, !in_low, t_rank, "merge low first");
    merged(ic, in_low, in_low ? t_rank + (t_size - cut) : t_rank - cut, "merge high first");
    merged(ic, 0, t_rank, "merge with equal flags");

    /* Split by parity of the world rank: each colour's intercommunicator joins the ranks of
     * that colour on both sides; a colour empty on one side gives MPI_COMM_NULL. */
    MPI_Comm sp;
    int color = t_rank % 2;
    MPI_OK(MPI_Comm_split(ic, color, -t_rank, &sp));
    int lcount = 0, rcount = 0;
    for (int w = 0; w < t_size; w++)
        if (w % 2 == color) (w < cut) == in_low ? lcount++ : rcount++;
    if (lcount == 0 || rcount == 0) {
        CHECK(sp == MPI_COMM_NULL, "split: expected MPI_COMM_NULL (%d local, %d remote)", lcount, rcount);
    } else {
        int size, rsize, rank, above = 0;
        MPI_OK(MPI_Comm_size(sp, &size));
        MPI_OK(MPI_Comm_remote_size(sp, &rsize));
        MPI_OK(MPI_Comm_rank(sp, &rank));
        CHECK_EQ_INT(size, lcount, "split local size");
        CHECK_EQ_INT(rsize, rcount, "split remote size");
        for (int w = t_rank + 1; w < t_size; w++)
            if (w % 2 == color && (w < cut) == in_low) above++;
        CHECK_EQ_INT(rank, above, "split rank (keys reversed)");
        exchange(sp, 5);
        MPI_OK(MPI_Comm_free(&sp));
    }

    /* Create: the first rank of each side alone. */
    MPI_Group lg, first;
    int zero = 0;
    MPI_OK(MPI_Comm_group(ic, &lg));
    MPI_OK(MPI_Group_incl(lg, 1, &zero, &first));
    MPI_Comm cr;
    MPI_OK(MPI_Comm_create(ic, first, &cr));
    int lrank;
    MPI_OK(MPI_Comm_rank(ic, &lrank));
    if (lrank == 0) {
        int rsize = 0;
        CHECK(cr != MPI_COMM_NULL, "create: a member got MPI_COMM_NULL");
        MPI_OK(MPI_Comm_remote_size(cr, &rsize));
        CHECK_EQ_INT(rsize, 1, "create remote size");
        exchange(cr, 6);
        MPI_OK(MPI_Comm_free(&cr));
    } else {
        CHECK(cr == MPI_COMM_NULL, "create: a non-member got a communicator");
    }
    MPI_OK(MPI_Group_free(&lg));
    MPI_OK(MPI_Group_free(&first));

    MPI_OK(MPI_Comm_free(&idup));
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "intercomm");
    if (t_size < 2) {
        MPI_Finalize();
        return 0;
    }
    one_split(t_size / 2, 11);
    one_split(1, 12);
    /* Many create/free cycles: the context ids are reused. */
    for (int i = 0; i < 200; i++) {
        int in_low = t_rank < t_size / 2;
        MPI_Comm local, ic;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, in_low, t_rank, &local));
        MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_low ? t_size / 2 : 0, 13, &ic));
        if (i % 50 == 0) exchange(ic, 7);
        MPI_OK(MPI_Comm_free(&ic));
        MPI_OK(MPI_Comm_free(&local));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) printf("intercomm: OK\n");
    MPI_Finalize();
    return 0;
}
