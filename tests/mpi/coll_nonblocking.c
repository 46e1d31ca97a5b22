/* Non-blocking collectives: every MPI_I* variant of coll_matrix.c's matrix (Ibarrier ...
 * Iexscan; sizes 0, 7, 1025 and the 262147-element subset; same types, ops but MPI_MIN, roots,
 * MPI_IN_PLACE variants and communicators). Between start and completion, each case
 * keeps a second non-blocking collective outstanding on a dup of the communicator (a
 * different collective, other root, other in-place choice) and runs a ring of
 * Isend/Irecv on the same communicator; completion order varies (Waitall, Wait in
 * reverse, Test polling, Waitany). All three results are checked.
 *
 *   coll_nonblocking [COLLECTIVE...]   (Allreduce or Iallreduce, ...)
 *
 * The data generation, reference and checks are those of coll_matrix.c (included). */
#define COLL_MODE 1
#include "coll_matrix.c"

#define RING 33

static const cinfo *nb_dup_cur;
static unsigned nb_variant;

static void run_nb(int coll, const cinfo *c, const tdesc *t, const odesc *o, int n, int root, int inplace)
{
    unsigned v = nb_variant++;
    int p = c->size, r = c->rank;
    tc_t a, b;
    int bc = (coll + 1 + (int)(v % (NCOLL - 1))) % NCOLL; /* != coll */
    const odesc *bo = is_red(bc) ? (o ? o : &O_SUM_) : NULL;
    tc_alloc(&a, coll, c, t, o, n, root, inplace);
    tc_alloc(&b, bc, nb_dup_cur, t, bo, n, (root + 1) % p, has_inplace(bc) ? !inplace : 0);
    tc_fill(&a, next_salt());
    tc_fill(&b, next_salt());
    uint32_t rsalt = next_salt();
    int sendv[RING], recvv[RING];
    for (int i = 0; i < RING; i++) {
        sendv[i] = (int)mix3((uint32_t)r, (uint32_t)i, rsalt);
        recvv[i] = -1;
    }
    MPI_Request q[4];
    tc_post(&a);
    tc_post(&b);
    int tag = (int)(rsalt & 0x7fff);
    MPI_OK(MPI_Irecv(recvv, RING, MPI_INT, (r + p - 1) % p, tag, c->comm, &q[2]));
    MPI_OK(MPI_Isend(sendv, RING, MPI_INT, (r + 1) % p, tag, c->comm, &q[3]));
    q[0] = a.req;
    q[1] = b.req;
    switch (v % 4) {
    case 0:
        MPI_OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        break;
    case 1:
        for (int k = 3; k >= 0; k--) MPI_OK(MPI_Wait(&q[k], MPI_STATUS_IGNORE));
        break;
    case 2: {
        int flag = 0;
        while (!flag) MPI_OK(MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Waitall(3, q + 1, MPI_STATUSES_IGNORE));
        break;
    }
    default:
        for (int k = 0; k < 4; k++) {
            int idx;
            MPI_OK(MPI_Waitany(4, q, &idx, MPI_STATUS_IGNORE));
            CHECK(idx != MPI_UNDEFINED, "Waitany returned MPI_UNDEFINED with %d requests left", 4 - k);
        }
        break;
    }
    for (int k = 0; k < 4; k++)
        CHECK(q[k] == MPI_REQUEST_NULL, "%s: request %d not freed after completion", a.ctx, k);
    tc_check(&a);
    tc_check(&b);
    for (int i = 0; i < RING; i++) {
        int e = (int)mix3((uint32_t)((r + p - 1) % p), (uint32_t)i, rsalt);
        if (recvv[i] != e)
            FAIL("%s: ring message overlapping it (from rank %d): index %d: expected %d, got %d",
                 a.ctx, (r + p - 1) % p, i, e, recvv[i]);
    }
    tc_free(&a);
    tc_free(&b);
    cm_ncases++;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_nonblocking");
    cm_init_tables();
    if (!cm_parse_filter(argc, argv)) {
        MPI_Finalize();
        return 2;
    }
    cm_a2a_nozero_inplace = cm_ompi;
    if (cm_ompi && t_rank == 0)
        printf("coll_nonblocking: Open MPI: uint8 SUM data kept small, Alltoallw displacements 0 at size 1, "
               "no zero counts in in-place Ialltoallv/w (known bugs)\n");
    cinfo cs[3], dups[3];
    int nc = cm_make_comms(cs);
    for (int i = 0; i < nc; i++) {
        dups[i] = cs[i];
        MPI_OK(MPI_Comm_dup(cs[i].comm, &dups[i].comm));
    }
    static const int sizes[] = {0, 7, 1025};
    const tdesc *types[] = {&T_INT, &T_DOUBLE, &T_U8, &T_LL};
    const odesc *ops[] = {&O_SUM_, &O_MAX_, &O_PROD_, &O_BXOR_};
    double t0 = MPI_Wtime();
    for (int i = 0; i < nc; i++) {
        double t1 = MPI_Wtime();
        cm_salt_counter = (uint32_t)(i + 1) << 20;
        nb_variant = 0;
        nb_dup_cur = &dups[i];
        cm_enumerate(&cs[i], sizes, 3, types, 4, ops, 4, 1, 1, 7, run_nb);
        MPI_Barrier(MPI_COMM_WORLD);
        if (t_rank == 0)
            printf("coll_nonblocking: %s done (%.2f s)\n", cs[i].name, MPI_Wtime() - t1);
    }
    if (t_rank == 0)
        printf("coll_nonblocking: %ld cases on rank 0 in %.2f s\n", cm_ncases, MPI_Wtime() - t0);
    for (int i = 0; i < nc; i++) MPI_Comm_free(&dups[i].comm);
    cm_free_comms(cs, nc);
    t_done();
    return 0;
}
