/* MPI_Comm_idup that does not block: the call returns before the other
 * members have joined, so ranks may start several in different orders.
 *  1. Two communicators (a dup of world, and world split with its order
 *     reversed) are idup'ed in opposite orders on even and odd ranks, and
 *     the requests waited in opposite orders too. An attribute changed after
 *     the call and before the wait must not reach the duplicate (it is made
 *     as MPI_Comm_dup would have made it at the call).
 *  2. Every rank idups the communicators it shares with its left and right
 *     neighbours (one per neighbouring pair), left one first: a chain that
 *     a blocking agreement would deadlock on.
 *  3. Rank 0 starts its idup only after every other rank has started its
 *     own and sent it a message; the others complete theirs by polling
 *     MPI_Test while exchanging checked ring messages on world.
 *  4. An intercommunicator (even and odd ranks) idup'ed while the two
 *     groups' leaders wait for each other.
 * Every duplicate is checked: rank, size, MPI_CONGRUENT to its parent, an
 * Allreduce, and same-tag messages on it and its parent that must not
 * cross-match. Works at any size. */
#include "common.h"

static int copies = 0;

static int copy_attr(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)key;
    (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* The duplicate d of parent p works: same rank and size, congruent, an
 * Allreduce, and one message on each with the same tag, received in the
 * opposite order of sending. */
static void check_dup(MPI_Comm p, MPI_Comm d, int salt, const char *what)
{
    int pr, ps, dr, ds, cmp = -1;
    MPI_OK(MPI_Comm_rank(p, &pr));
    MPI_OK(MPI_Comm_size(p, &ps));
    MPI_OK(MPI_Comm_rank(d, &dr));
    MPI_OK(MPI_Comm_size(d, &ds));
    CHECK_EQ_INT(dr, pr, what);
    CHECK_EQ_INT(ds, ps, what);
    MPI_OK(MPI_Comm_compare(p, d, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "%s: compare gave %d", what, cmp);

    int v = salt + dr, sum = -1;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECK(sum == salt * ds + ds * (ds - 1) / 2, "%s: Allreduce gave %d", what, sum);

    int right = (dr + 1) % ds, left = (dr + ds - 1) % ds;
    int out[2] = {salt, dr}, outp[2] = {-salt, dr}, in[2] = {-1, -1}, inp[2] = {-1, -1};
    MPI_Request rq[4];
    MPI_OK(MPI_Isend(out, 2, MPI_INT, right, 7, d, &rq[0]));
    MPI_OK(MPI_Isend(outp, 2, MPI_INT, right, 7, p, &rq[1]));
    MPI_OK(MPI_Irecv(inp, 2, MPI_INT, left, 7, p, &rq[2]));
    MPI_OK(MPI_Irecv(in, 2, MPI_INT, left, 7, d, &rq[3]));
    MPI_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    CHECK(in[0] == salt && in[1] == left, "%s: got {%d,%d} on the dup", what, in[0], in[1]);
    CHECK(inp[0] == -salt && inp[1] == left, "%s: got {%d,%d} on the parent", what, inp[0], inp[1]);
}

static void opposite_orders(void)
{
    MPI_Comm a, b, da = MPI_COMM_NULL, db = MPI_COMM_NULL;
    MPI_Request rq[2];
    int key, flag = 0, *val = NULL;
    static int before = 11, after = 22;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, t_size - t_rank, &b));
    MPI_OK(MPI_Comm_create_keyval(copy_attr, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    MPI_OK(MPI_Comm_set_attr(a, key, &before));
    copies = 0;

    if (t_rank % 2 == 0) {
        MPI_OK(MPI_Comm_idup(a, &da, &rq[0]));
        MPI_OK(MPI_Comm_idup(b, &db, &rq[1]));
    } else {
        MPI_OK(MPI_Comm_idup(b, &db, &rq[1]));
        MPI_OK(MPI_Comm_idup(a, &da, &rq[0]));
    }
    CHECK_EQ_INT(copies, 1, "attribute copies at the idup call");
    MPI_OK(MPI_Comm_set_attr(a, key, &after));
    if (t_rank % 2 == 0) {
        MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    } else {
        MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    }
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "requests not freed by MPI_Wait");
    MPI_OK(MPI_Comm_get_attr(da, key, &val, &flag));
    CHECK(flag && val == &before, "the dup's attribute is not the one set at the call");
    check_dup(a, da, 100, "idup of the world dup");
    check_dup(b, db, 200, "idup of the reversed split");

    MPI_OK(MPI_Comm_free(&da));
    MPI_OK(MPI_Comm_free(&db));
    MPI_OK(MPI_Comm_free(&a));
    MPI_OK(MPI_Comm_free(&b));
    MPI_OK(MPI_Comm_free_keyval(&key));
}

static void neighbour_chain(void)
{
    MPI_Comm left = MPI_COMM_NULL, right = MPI_COMM_NULL, dl = MPI_COMM_NULL, dr = MPI_COMM_NULL;
    MPI_Request rq[2];
    if (t_size < 3)
        return; /* needs two distinct neighbours */
    /* pair i: ranks i and i + 1 (mod size) */
    for (int i = 0; i < t_size; i++) {
        MPI_Comm c;
        int in_pair = t_rank == i || t_rank == (i + 1) % t_size;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, in_pair ? 0 : MPI_UNDEFINED, t_rank == i ? 0 : 1, &c));
        if (t_rank == i)
            right = c;
        else if (in_pair)
            left = c;
    }
    MPI_OK(MPI_Comm_idup(left, &dl, &rq[0]));
    MPI_OK(MPI_Comm_idup(right, &dr, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    /* blocking checks pair by pair in the pairs' order: no cycle */
    if (t_rank == 0) {
        check_dup(right, dr, 300 + t_rank, "idup of the right pair");
        check_dup(left, dl, 300 + (t_rank + t_size - 1) % t_size, "idup of the left pair");
    } else {
        check_dup(left, dl, 300 + (t_rank + t_size - 1) % t_size, "idup of the left pair");
        check_dup(right, dr, 300 + t_rank, "idup of the right pair");
    }
    MPI_OK(MPI_Comm_free(&dl));
    MPI_OK(MPI_Comm_free(&dr));
    MPI_OK(MPI_Comm_free(&left));
    MPI_OK(MPI_Comm_free(&right));
}

/* One checked ring step on world. */
static void ring_step(int round)
{
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    int out[2] = {round, t_rank}, in[2] = {-1, -1};
    MPI_OK(MPI_Sendrecv(out, 2, MPI_INT, right, 5, in, 2, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[0] == round && in[1] == left, "ring step %d: got {%d,%d}", round, in[0], in[1]);
}

static void polled_while_traffic(void)
{
    MPI_Comm d = MPI_COMM_NULL;
    MPI_Request rq;
    int flag = 0, token = 0, polls = 0;
    if (t_rank != 0) {
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
        token = 1000 + t_rank;
        MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
    } else {
        /* every other rank has started its idup before rank 0 starts its own */
        for (int r = 1; r < t_size; r++) {
            MPI_OK(MPI_Recv(&token, 1, MPI_INT, r, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_EQ_INT(token, 1000 + r, "token before rank 0's idup");
        }
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
    }
    /* Every rank runs the same number of checked ring steps, polling its
     * request between them, then polls until it completes. */
    for (int round = 0; round < 20; round++) {
        if (!flag) {
            MPI_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
            polls++;
        }
        ring_step(round);
    }
    while (!flag) {
        MPI_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        polls++;
    }
    CHECK(rq == MPI_REQUEST_NULL, "request not freed by the MPI_Test that completed it");
    CHECK(polls >= 1, "never polled");
    check_dup(MPI_COMM_WORLD, d, 500, "polled idup of world");
    MPI_OK(MPI_Comm_free(&d));
}

static void intercomm_idup(void)
{
    MPI_Comm local, ic, d;
    MPI_Request rq;
    int lr, ls, rs, token = 0;
    if (t_size < 2)
        return;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, t_rank % 2 ? 0 : 1, 31, &ic));
    MPI_OK(MPI_Comm_rank(ic, &lr));
    MPI_OK(MPI_Comm_size(ic, &ls));
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    /* the other members of both groups tell the remote leader they started */
    if (lr == 0) {
        for (int r = 1; r < rs; r++) {
            MPI_OK(MPI_Recv(&token, 1, MPI_INT, r, 3, ic, MPI_STATUS_IGNORE));
            CHECK_EQ_INT(token, 77 + r, "token on the intercommunicator");
        }
        MPI_OK(MPI_Comm_idup(ic, &d, &rq));
    } else {
        MPI_OK(MPI_Comm_idup(ic, &d, &rq));
        token = 77 + lr;
        MPI_OK(MPI_Ssend(&token, 1, MPI_INT, 0, 3, ic));
    }
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int flag = 0, drs = -1, cmp = -1;
    MPI_OK(MPI_Comm_test_inter(d, &flag));
    CHECK(flag, "the idup of an intercommunicator is no intercommunicator");
    MPI_OK(MPI_Comm_remote_size(d, &drs));
    CHECK_EQ_INT(drs, rs, "remote size of the intercommunicator's idup");
    MPI_OK(MPI_Comm_compare(ic, d, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "intercommunicator compare gave %d", cmp);
    /* the sum over the remote group of its ranks */
    int sum = -1;
    MPI_OK(MPI_Allreduce(&lr, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECK_EQ_INT(sum, rs * (rs - 1) / 2, "Allreduce on the intercommunicator's idup");
    (void)ls;
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "comm_idup");
    for (int rep = 0; rep < 3; rep++) {
        opposite_orders();
        neighbour_chain();
        polled_while_traffic();
        intercomm_idup();
    }
    t_done();
    return 0;
}
