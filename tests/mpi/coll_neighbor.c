/* Neighbourhood collectives on three topologies, blocking, non-blocking and persistent:
 *   - a periodic ring (1-D cartesian; at 1 and 2 ranks both neighbours are the same rank),
 *   - a 2-D cartesian grid, non-periodic in one dimension (MPI_PROC_NULL neighbours),
 *   - a distributed graph with repeated edges (r -> r+1, r+3, r+1).
 * Every received block is checked against the sender's data; blocks from MPI_PROC_NULL keep
 * their sentinel. On a cartesian topology block s of the sender lands in block s^1 of the
 * receiver, also when both neighbours in a dimension are the same rank (MPI-4.1 section 8.6,
 * an erratum of MPI-3.1; MPICH 4.0.2 predates it and fails the ring at 1 and 2 ranks). */
#include "common.h"

#define N 3 /* ints per block (v forms: N + slot) */
#define SENTINEL (-7)

enum { M_BLOCKING, M_NONBLOCKING, M_PERSISTENT };
enum { K_ALLGATHER, K_ALLGATHERV, K_ALLTOALL, K_ALLTOALLV, K_ALLTOALLW };
static const char *kind_name[] = {"Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall",
                                  "Neighbor_alltoallv", "Neighbor_alltoallw"};

typedef struct {
    const char *name;
    MPI_Comm comm;
    int rank, indeg, outdeg;
    int src[16], dst[16];
    int cart; /* slot k receives the block its source sent to slot k^1's direction */
} topo_t;

static int value(int from, int block, int i) { return from * 10000 + block * 100 + i; }

static void neighbours(topo_t *t)
{
    int status;
    MPI_OK(MPI_Comm_rank(t->comm, &t->rank));
    MPI_OK(MPI_Topo_test(t->comm, &status));
    if (status == MPI_CART) {
        int nd;
        MPI_OK(MPI_Cartdim_get(t->comm, &nd));
        t->indeg = t->outdeg = 2 * nd;
        for (int d = 0; d < nd; d++) {
            MPI_OK(MPI_Cart_shift(t->comm, d, 1, &t->src[2 * d], &t->src[2 * d + 1]));
            t->dst[2 * d] = t->src[2 * d];
            t->dst[2 * d + 1] = t->src[2 * d + 1];
        }
        t->cart = 1;
    } else {
        int w;
        MPI_OK(MPI_Dist_graph_neighbors_count(t->comm, &t->indeg, &t->outdeg, &w));
        MPI_OK(MPI_Dist_graph_neighbors(t->comm, t->indeg, t->src, MPI_UNWEIGHTED, t->outdeg, t->dst,
                                        MPI_UNWEIGHTED));
        t->cart = 0;
    }
}

static int send_block_for_slot(const topo_t *t, int slot) { return t->cart ? (slot ^ 1) : slot; }

static void run(const topo_t *t, int kind, int mode)
{
    int scount[16], sdispl[16], rcount[16], rdispl[16];
    MPI_Aint sadispl[16], radispl[16];
    MPI_Datatype stypes[16], rtypes[16];
    int stotal = 0, rtotal = 0;
    const int per_dest = kind >= K_ALLTOALL;
    const int nsend = per_dest ? t->outdeg : 1;
    for (int k = 0; k < nsend; k++) {
        scount[k] = (kind == K_ALLTOALLV || kind == K_ALLTOALLW) ? N + k : N;
        sdispl[k] = stotal;
        stotal += scount[k] + 1; /* a gap after each block */
    }
    for (int k = 0; k < t->indeg; k++) {
        /* the sender's block size for this slot */
        int b = send_block_for_slot(t, k);
        rcount[k] = (kind == K_ALLTOALLV || kind == K_ALLTOALLW) ? N + b : N;
        rtotal += rcount[k] + 2;
    }
    /* receive blocks in reverse order with gaps */
    for (int k = t->indeg - 1, at = 0; k >= 0; k--) {
        rdispl[k] = at;
        at += rcount[k] + 2;
    }
    for (int k = 0; k < 16; k++) {
        stypes[k] = rtypes[k] = MPI_INT;
        sadispl[k] = (MPI_Aint)sdispl[k] * (MPI_Aint)sizeof(int);
        radispl[k] = (MPI_Aint)rdispl[k] * (MPI_Aint)sizeof(int);
    }
    int *sbuf = malloc(sizeof(int) * (size_t)(stotal + 1));
    int *rbuf = malloc(sizeof(int) * (size_t)(rtotal + 1));
    for (int k = 0; k < nsend; k++)
        for (int i = 0; i < scount[k]; i++) sbuf[sdispl[k] + i] = value(t->rank, per_dest ? k : 0, i);

    MPI_Request req = MPI_REQUEST_NULL;
    int starts = mode == M_PERSISTENT ? 2 : 1;
    for (int round = 0; round < starts; round++) {
        for (int i = 0; i < rtotal; i++) rbuf[i] = SENTINEL;
        int uniform_disp = kind == K_ALLGATHER || kind == K_ALLTOALL;
        int *rb = rbuf;
        if (uniform_disp) { /* uniform forms: blocks back to back */
            for (int k = 0; k < t->indeg; k++) rdispl[k] = k * N;
        }
        if (mode != M_PERSISTENT || round == 0) {
            MPI_Request *rq = mode == M_BLOCKING ? NULL : &req;
            switch (kind) {
            case K_ALLGATHER:
                if (!rq) MPI_OK(MPI_Neighbor_allgather(sbuf, N, MPI_INT, rb, N, MPI_INT, t->comm));
                else if (mode == M_NONBLOCKING) MPI_OK(MPI_Ineighbor_allgather(sbuf, N, MPI_INT, rb, N, MPI_INT, t->comm, rq));
                else MPI_OK(MPI_Neighbor_allgather_init(sbuf, N, MPI_INT, rb, N, MPI_INT, t->comm, MPI_INFO_NULL, rq));
                break;
            case K_ALLGATHERV:
                if (!rq) MPI_OK(MPI_Neighbor_allgatherv(sbuf, N, MPI_INT, rb, rcount, rdispl, MPI_INT, t->comm));
                else if (mode == M_NONBLOCKING) MPI_OK(MPI_Ineighbor_allgatherv(sbuf, N, MPI_INT, rb, rcount, rdispl, MPI_INT, t->comm, rq));
                else MPI_OK(MPI_Neighbor_allgatherv_init(sbuf, N, MPI_INT, rb, rcount, rdispl, MPI_INT, t->comm, MPI_INFO_NULL, rq));
                break;
            case K_ALLTOALL: {
                /* uniform: send blocks back to back too */
                int *s2 = malloc(sizeof(int) * (size_t)(t->outdeg * N + 1));
                for (int k = 0; k < t->outdeg; k++)
                    for (int i = 0; i < N; i++) s2[k * N + i] = value(t->rank, k, i);
                memcpy(sbuf, s2, sizeof(int) * (size_t)(t->outdeg * N));
                free(s2);
                if (!rq) MPI_OK(MPI_Neighbor_alltoall(sbuf, N, MPI_INT, rb, N, MPI_INT, t->comm));
                else if (mode == M_NONBLOCKING) MPI_OK(MPI_Ineighbor_alltoall(sbuf, N, MPI_INT, rb, N, MPI_INT, t->comm, rq));
                else MPI_OK(MPI_Neighbor_alltoall_init(sbuf, N, MPI_INT, rb, N, MPI_INT, t->comm, MPI_INFO_NULL, rq));
                break;
            }
            case K_ALLTOALLV:
                if (!rq) MPI_OK(MPI_Neighbor_alltoallv(sbuf, scount, sdispl, MPI_INT, rb, rcount, rdispl, MPI_INT, t->comm));
                else if (mode == M_NONBLOCKING) MPI_OK(MPI_Ineighbor_alltoallv(sbuf, scount, sdispl, MPI_INT, rb, rcount, rdispl, MPI_INT, t->comm, rq));
                else MPI_OK(MPI_Neighbor_alltoallv_init(sbuf, scount, sdispl, MPI_INT, rb, rcount, rdispl, MPI_INT, t->comm, MPI_INFO_NULL, rq));
                break;
            case K_ALLTOALLW:
                if (!rq) MPI_OK(MPI_Neighbor_alltoallw(sbuf, scount, sadispl, stypes, rb, rcount, radispl, rtypes, t->comm));
                else if (mode == M_NONBLOCKING) MPI_OK(MPI_Ineighbor_alltoallw(sbuf, scount, sadispl, stypes, rb, rcount, radispl, rtypes, t->comm, rq));
                else MPI_OK(MPI_Neighbor_alltoallw_init(sbuf, scount, sadispl, stypes, rb, rcount, radispl, rtypes, t->comm, MPI_INFO_NULL, rq));
                break;
            }
        }
        if (mode == M_PERSISTENT) MPI_OK(MPI_Start(&req));
        if (mode != M_BLOCKING) MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int k = 0; k < t->indeg; k++) {
            int from = t->src[k];
            int block = kind >= K_ALLTOALL ? send_block_for_slot(t, k) : 0;
            int cnt = kind == K_ALLGATHER || kind == K_ALLGATHERV || kind == K_ALLTOALL ? N : rcount[k];
            for (int i = 0; i < cnt; i++) {
                int got = rbuf[rdispl[k] + i];
                int want = from == MPI_PROC_NULL ? SENTINEL : value(from, block, i);
                if (got != want)
                    FAIL("%s %s mode %d start %d: slot %d (from %d) element %d: got %d, expected %d",
                         t->name, kind_name[kind], mode, round, k, from, i, got, want);
            }
            if (!uniform_disp && rbuf[rdispl[k] + cnt] != SENTINEL)
                FAIL("%s %s: gap after slot %d overwritten", t->name, kind_name[kind], k);
        }
    }
    if (mode == M_PERSISTENT) MPI_OK(MPI_Request_free(&req));
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_neighbor");
    topo_t topos[3];
    int nt = 0;
    {
        int dims[1] = {t_size}, periods[1] = {1};
        topos[nt].name = "ring";
        MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &topos[nt].comm));
        nt++;
    }
    {
        int dims[2] = {0, 0}, periods[2] = {0, 1};
        MPI_OK(MPI_Dims_create(t_size, 2, dims));
        topos[nt].name = "grid";
        MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &topos[nt].comm));
        nt++;
    }
    {
        int d[3] = {1, 3, 1}, srcs[3], dsts[3];
        for (int k = 0; k < 3; k++) {
            dsts[k] = (t_rank + d[k]) % t_size;
            srcs[k] = ((t_rank - d[k]) % t_size + t_size) % t_size;
        }
        topos[nt].name = "graph";
        MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, srcs, MPI_UNWEIGHTED, 3, dsts, MPI_UNWEIGHTED,
                                              MPI_INFO_NULL, 0, &topos[nt].comm));
        nt++;
    }
    int cases = 0;
    for (int i = 0; i < nt; i++) {
        neighbours(&topos[i]);
        for (int kind = K_ALLGATHER; kind <= K_ALLTOALLW; kind++)
            for (int mode = M_BLOCKING; mode <= M_PERSISTENT; mode++) {
                run(&topos[i], kind, mode);
                cases++;
            }
    }
    /* A communicator without a topology is an error, not a hang. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, y = 0, err = MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_WORLD), cls;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "Neighbor_allgather without a topology: class %d, expected MPI_ERR_TOPOLOGY", cls);
    for (int i = 0; i < nt; i++) MPI_Comm_free(&topos[i].comm);
    if (t_rank == 0) printf("coll_neighbor: %d cases\n", cases);
    t_done();
    return 0;
}
