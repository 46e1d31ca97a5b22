/* Process topologies.
 *   - Dims_create: exact answers for unambiguous cases, invariants (product,
 *     non-increasing free dimensions, fixed ones kept) for the rest, errors
 *     (size not divisible by the fixed dimensions, negative dimension);
 *   - Cart_create (periodic and not, reorder 0 and 1, fewer ranks than the
 *     communicator -> MPI_COMM_NULL), Cart_coords, Cart_rank (coordinates
 *     out of range on periodic dimensions wrap), Cart_shift (MPI_PROC_NULL
 *     at non-periodic edges), Cart_get, Cartdim_get, Topo_test, Cart_sub;
 *     a halo exchange with Sendrecv along every dimension, both ways;
 *   - Graph_create + Graph_get / Graphdims_get / Graph_neighbors(_count),
 *     with an exchange along the edges;
 *   - Dist_graph_create_adjacent (weighted and MPI_UNWEIGHTED) and
 *     Dist_graph_create (edges given by other ranks; one rank giving all)
 *     + Dist_graph_neighbors(_count), with an exchange along the edges.
 * Works at any size, including 1.
 * Open MPI 4.1: its topo/treematch component hangs at random in
 * MPI_Dist_graph_create on an oversubscribed node (open-mpi/ompi#1183,
 * #2227, #8991); there the test selects topo/basic through the environment
 * before MPI_Init (OPEN_MPI is defined by Open MPI's mpi.h only). */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

static void set_errors_return(int on)
{
    MPI_Errhandler eh = on ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
}

static void dims_case(int nnodes, int ndims, const int *in, const int *exp)
{
    int d[8];
    memcpy(d, in, sizeof(int) * (size_t)ndims);
    MPI_OK(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        if (d[i] != exp[i])
            FAIL("Dims_create(%d, %d): dimension %d: expected %d, got %d", nnodes, ndims, i,
                 exp[i], d[i]);
}

static void dims_invariants(int nnodes, int ndims, const int *in)
{
    int d[8], prod = 1, lastfree = 1 << 30;
    memcpy(d, in, sizeof(int) * (size_t)ndims);
    MPI_OK(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++) {
        if (in[i] > 0 && d[i] != in[i])
            FAIL("Dims_create(%d, %d): fixed dimension %d changed from %d to %d", nnodes, ndims, i,
                 in[i], d[i]);
        if (in[i] == 0) {
            if (d[i] < 1 || d[i] > lastfree)
                FAIL("Dims_create(%d, %d): free dimension %d = %d (previous free %d): not "
                     "non-increasing", nnodes, ndims, i, d[i], lastfree);
            lastfree = d[i];
        }
        prod *= d[i];
    }
    if (prod != nnodes)
        FAIL("Dims_create(%d, %d): product %d", nnodes, ndims, prod);
}

static void dims_create(void)
{
    const int z[4] = {0, 0, 0, 0};
    dims_case(6, 2, z, (const int[]){3, 2});
    dims_case(12, 2, z, (const int[]){4, 3});
    dims_case(24, 3, z, (const int[]){4, 3, 2});
    dims_case(7, 2, z, (const int[]){7, 1});
    dims_case(16, 4, z, (const int[]){2, 2, 2, 2});
    dims_case(1, 3, z, (const int[]){1, 1, 1});
    dims_case(36, 2, z, (const int[]){6, 6});
    dims_case(8, 3, z, (const int[]){2, 2, 2});
    dims_case(30, 3, z, (const int[]){5, 3, 2});
    dims_case(64, 3, z, (const int[]){4, 4, 4});
    dims_case(5, 1, z, (const int[]){5});
    dims_case(12, 3, (const int[]){0, 3, 0}, (const int[]){2, 3, 2});
    dims_case(8, 2, (const int[]){0, 8}, (const int[]){1, 8});
    dims_case(20, 3, (const int[]){5, 0, 0}, (const int[]){5, 2, 2});
    dims_case(6, 2, (const int[]){2, 3}, (const int[]){2, 3});
    dims_case(t_size, 2, (const int[]){0, 1}, (const int[]){t_size, 1});
    for (int nn = 1; nn <= 40; nn++)
        for (int nd = 1; nd <= 4; nd++) {
            dims_invariants(nn, nd, z);
            if (nd >= 2 && nn % 2 == 0)
                dims_invariants(nn, nd, (const int[]){0, 2, 0, 0});
        }
    /* errors */
    set_errors_return(1);
    {
        int d[2] = {2, 0};
        int rc = MPI_Dims_create(7, 2, d);
        CHECK(rc != MPI_SUCCESS, "Dims_create(7, {2, 0}) (7 not divisible by 2) succeeded");
        int e[2] = {-1, 0};
        rc = MPI_Dims_create(4, 2, e);
        CHECK(rc != MPI_SUCCESS, "Dims_create with a negative dimension succeeded");
        int f[2] = {0, 0};
        rc = MPI_Dims_create(-3, 2, f);
        CHECK(rc != MPI_SUCCESS, "Dims_create with a negative node count succeeded");
    }
    set_errors_return(0);
}

static void row_major(int r, int nd, const int *dims, int *coords)
{
    for (int i = nd - 1; i >= 0; i--) {
        coords[i] = r % dims[i];
        r /= dims[i];
    }
}

static int rank_of(int nd, const int *dims, const int *coords)
{
    int r = 0;
    for (int i = 0; i < nd; i++)
        r = r * dims[i] + coords[i];
    return r;
}

/* Full check of a cartesian communicator built over all of world */
static void cart_check(MPI_Comm cart, int nd, const int *dims, const int *periods, const char *what)
{
    int r, n, st = -1, ndg = -1, gd[8], gp[8], gc[8], c[8];
    MPI_OK(MPI_Comm_rank(cart, &r));
    MPI_OK(MPI_Comm_size(cart, &n));
    MPI_OK(MPI_Topo_test(cart, &st));
    if (st != MPI_CART)
        FAIL("%s: Topo_test expected MPI_CART (%d), got %d", what, MPI_CART, st);
    MPI_OK(MPI_Cartdim_get(cart, &ndg));
    if (ndg != nd)
        FAIL("%s: Cartdim_get expected %d, got %d", what, nd, ndg);
    MPI_OK(MPI_Cart_get(cart, nd, gd, gp, gc));
    row_major(r, nd, dims, c);
    for (int i = 0; i < nd; i++) {
        if (gd[i] != dims[i] || !!gp[i] != !!periods[i] || gc[i] != c[i])
            FAIL("%s: Cart_get dim %d: expected dims %d periodic %d coord %d, got %d %d %d", what,
                 i, dims[i], periods[i], c[i], gd[i], gp[i], gc[i]);
    }
    for (int q = 0; q < n; q++) {
        int qc[8], back = -1;
        MPI_OK(MPI_Cart_coords(cart, q, nd, qc));
        row_major(q, nd, dims, c);
        for (int i = 0; i < nd; i++)
            if (qc[i] != c[i])
                FAIL("%s: Cart_coords(%d) dim %d: expected %d, got %d", what, q, i, c[i], qc[i]);
        MPI_OK(MPI_Cart_rank(cart, qc, &back));
        if (back != q)
            FAIL("%s: Cart_rank(Cart_coords(%d)) = %d", what, q, back);
        /* out-of-range coordinates on periodic dimensions wrap */
        int any = 0;
        for (int i = 0; i < nd; i++)
            if (periods[i]) {
                qc[i] += (q % 2 ? -3 : 2) * dims[i];
                any = 1;
            }
        if (any) {
            MPI_OK(MPI_Cart_rank(cart, qc, &back));
            if (back != q)
                FAIL("%s: Cart_rank of wrapped coordinates of %d = %d", what, q, back);
        }
    }
    /* Cart_shift against the local computation, displacements 1, -1, 2 */
    row_major(r, nd, dims, c);
    for (int i = 0; i < nd; i++) {
        const int disps[3] = {1, -1, 2};
        for (int k = 0; k < 3; k++) {
            int src = -5, dst = -5, esrc, edst, t[8];
            MPI_OK(MPI_Cart_shift(cart, i, disps[k], &src, &dst));
            for (int dir = 0; dir < 2; dir++) {
                memcpy(t, c, sizeof(int) * (size_t)nd);
                t[i] += dir ? disps[k] : -disps[k];
                int e;
                if (t[i] < 0 || t[i] >= dims[i]) {
                    if (periods[i]) {
                        t[i] = ((t[i] % dims[i]) + dims[i]) % dims[i];
                        e = rank_of(nd, dims, t);
                    } else {
                        e = MPI_PROC_NULL;
                    }
                } else {
                    e = rank_of(nd, dims, t);
                }
                if (dir)
                    edst = e;
                else
                    esrc = e;
            }
            if (src != esrc || dst != edst)
                FAIL("%s: Cart_shift(dim %d, disp %d) at rank %d: expected src %d dst %d, got %d %d",
                     what, i, disps[k], r, esrc, edst, src, dst);
        }
    }
    /* halo exchange along every dimension, both directions */
    for (int i = 0; i < nd; i++) {
        int src, dst;
        MPI_OK(MPI_Cart_shift(cart, i, 1, &src, &dst));
        for (int dir = 0; dir < 2; dir++) {
            int to = dir ? src : dst, from = dir ? dst : src;
            double out[4], in[4];
            MPI_Status stt;
            for (int j = 0; j < 4; j++) {
                out[j] = r * 100.0 + i * 10 + j + dir * 0.5;
                in[j] = -1.0;
            }
            MPI_OK(MPI_Sendrecv(out, 4, MPI_DOUBLE, to, 20 + i, in, 4, MPI_DOUBLE, from, 20 + i,
                                cart, &stt));
            for (int j = 0; j < 4; j++) {
                double e = from == MPI_PROC_NULL ? -1.0 : from * 100.0 + i * 10 + j + dir * 0.5;
                if (in[j] != e)
                    FAIL("%s: halo dim %d dir %d from %d elem %d: expected %g, got %g", what, i,
                         dir, from, j, e, in[j]);
            }
            if (from == MPI_PROC_NULL && (stt.MPI_SOURCE != MPI_PROC_NULL || stt.MPI_TAG != MPI_ANY_TAG))
                FAIL("%s: receive from MPI_PROC_NULL: status source %d tag %d", what,
                     stt.MPI_SOURCE, stt.MPI_TAG);
        }
    }
}

static void cartesian(void)
{
    const int n = t_size;
    int dims[3] = {0, 0, 0}, periods[3] = {1, 0, 1};
    MPI_Comm cart = MPI_COMM_NULL;

    /* a grid larger than the communicator: an error, and the output is MPI_COMM_NULL */
    {
        int big[2] = {n + 1, n + 1}, none[2] = {0, 0};
        MPI_Comm bad = MPI_COMM_SELF;
        set_errors_return(1);
        CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, big, none, 0, &bad) != MPI_SUCCESS, "a grid too large was accepted");
        set_errors_return(0);
        CHECK(bad == MPI_COMM_NULL, "a failed Cart_create left its output other than MPI_COMM_NULL");
    }
    /* 2D, periodic in dim 0 only, reorder 0 */
    MPI_OK(MPI_Dims_create(n, 2, dims));
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    CHECK(cart != MPI_COMM_NULL, "Cart_create gave MPI_COMM_NULL");
    {
        int r;
        MPI_OK(MPI_Comm_rank(cart, &r));
        CHECK_EQ_INT(r, t_rank, "rank in a cartesian communicator with reorder 0");
    }
    cart_check(cart, 2, dims, periods, "cart 2D {1,0}");

    /* Cart_sub: keep dimension 1 -> rows */
    {
        MPI_Comm row = MPI_COMM_NULL;
        int remain[2] = {0, 1}, c[2], r, sz, v, sum = -1;
        MPI_OK(MPI_Cart_sub(cart, remain, &row));
        MPI_OK(MPI_Comm_rank(row, &r));
        MPI_OK(MPI_Comm_size(row, &sz));
        row_major(t_rank, 2, dims, c);
        CHECK_EQ_INT(sz, dims[1], "Cart_sub {0,1}: size");
        CHECK_EQ_INT(r, c[1], "Cart_sub {0,1}: rank");
        int sd[1] = {0}, sp[1] = {0}, sc[1] = {0};
        MPI_OK(MPI_Cart_get(row, 1, sd, sp, sc));
        CHECK(sd[0] == dims[1] && sp[0] == 0 && sc[0] == c[1],
              "Cart_sub {0,1}: Cart_get gave dims %d periodic %d coord %d", sd[0], sp[0], sc[0]);
        v = t_rank;
        MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, row));
        int e = 0;
        for (int j = 0; j < dims[1]; j++)
            e += c[0] * dims[1] + j;
        CHECK_EQ_INT(sum, e, "Cart_sub {0,1}: Allreduce over the row");
        cart_check(row, 1, &dims[1], &periods[1], "cart_sub row");
        MPI_OK(MPI_Comm_free(&row));
        /* keep dimension 0 -> columns (periodic) */
        int remain2[2] = {1, 0};
        MPI_OK(MPI_Cart_sub(cart, remain2, &row));
        MPI_OK(MPI_Comm_rank(row, &r));
        MPI_OK(MPI_Comm_size(row, &sz));
        CHECK_EQ_INT(sz, dims[0], "Cart_sub {1,0}: size");
        CHECK_EQ_INT(r, c[0], "Cart_sub {1,0}: rank");
        cart_check(row, 1, &dims[0], &periods[0], "cart_sub column");
        MPI_OK(MPI_Comm_free(&row));
    }
    MPI_OK(MPI_Comm_free(&cart));

    /* 3D, all periodic, reorder 1 */
    {
        int d3[3] = {0, 0, 0}, p3[3] = {1, 1, 1};
        MPI_OK(MPI_Dims_create(n, 3, d3));
        MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 1, &cart));
        cart_check(cart, 3, d3, p3, "cart 3D periodic reorder");
        MPI_OK(MPI_Comm_free(&cart));
    }
    /* 1D non-periodic with a dimension of 1 added */
    {
        int d2[2] = {n, 1}, p2[2] = {0, 0};
        MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &cart));
        cart_check(cart, 2, d2, p2, "cart {n,1} non-periodic");
        MPI_OK(MPI_Comm_free(&cart));
    }
    /* fewer ranks than the communicator: the last rank is left out */
    if (n >= 2) {
        int d1[1] = {n - 1}, p1[1] = {1};
        MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &cart));
        if (t_rank == n - 1) {
            CHECK(cart == MPI_COMM_NULL, "Cart_create: rank outside the grid did not get MPI_COMM_NULL");
        } else {
            CHECK(cart != MPI_COMM_NULL, "Cart_create: rank inside the grid got MPI_COMM_NULL");
            cart_check(cart, 1, d1, p1, "cart of n-1 ranks");
            MPI_OK(MPI_Comm_free(&cart));
        }
    }
    /* Topo_test of a plain communicator */
    {
        int st = -1;
        MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
        CHECK(st == MPI_UNDEFINED, "Topo_test(MPI_COMM_WORLD) = %d, expected MPI_UNDEFINED", st);
    }
}

/* undirected graph: ring (n >= 3) or single edge (n == 2), plus chord 0 - n/2 (n >= 5) */
static int graph_nbrs(int i, int n, int *out)
{
    int k = 0;
    if (n == 2)
        out[k++] = 1 - i;
    if (n >= 3) {
        out[k++] = (i + 1) % n;
        out[k++] = (i + n - 1) % n;
    }
    if (n >= 5) {
        if (i == 0)
            out[k++] = n / 2;
        if (i == n / 2)
            out[k++] = 0;
    }
    return k;
}

static void exchange(MPI_Comm c, int nin, const int *srcs, int nout, const int *dsts, int salt,
                     const char *what)
{
    int r;
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_Request rq[32];
    int in[16], out[16];
    CHECK(nin <= 16 && nout <= 16, "too many neighbours");
    for (int i = 0; i < nin; i++) {
        in[i] = -1;
        MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, srcs[i], salt, c, &rq[i]));
    }
    for (int i = 0; i < nout; i++) {
        out[i] = salt * 10000 + r * 100 + dsts[i];
        MPI_OK(MPI_Isend(&out[i], 1, MPI_INT, dsts[i], salt, c, &rq[nin + i]));
    }
    MPI_Status sts[32];
    MPI_OK(MPI_Waitall(nin + nout, rq, sts));
    for (int i = 0; i < nin; i++)
        if (in[i] != salt * 10000 + srcs[i] * 100 + r)
            FAIL("%s: message from neighbour %d: expected %d, got %d", what, srcs[i],
                 salt * 10000 + srcs[i] * 100 + r, in[i]);
}

static void graph(void)
{
    const int n = t_size;
    int *index = malloc(sizeof(int) * (size_t)n), edges[256], ne = 0;
    CHECK(index && n <= 64, "graph setup");
    for (int i = 0; i < n; i++) {
        ne += graph_nbrs(i, n, &edges[ne]);
        index[i] = ne;
    }
    MPI_Comm g = MPI_COMM_NULL;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    CHECK(g != MPI_COMM_NULL, "Graph_create gave MPI_COMM_NULL");
    int st = -1, nn = -1, nedges = -1;
    MPI_OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_GRAPH, "Topo_test of a graph = %d, expected MPI_GRAPH (%d)", st, MPI_GRAPH);
    MPI_OK(MPI_Graphdims_get(g, &nn, &nedges));
    CHECK(nn == n && nedges == ne, "Graphdims_get: got %d nodes %d edges, expected %d %d", nn,
          nedges, n, ne);
    {
        int gi[64], ge[256];
        MPI_OK(MPI_Graph_get(g, n, ne > 0 ? ne : 1, gi, ge));
        for (int i = 0; i < n; i++)
            if (gi[i] != index[i])
                FAIL("Graph_get index[%d]: expected %d, got %d", i, index[i], gi[i]);
        for (int i = 0; i < ne; i++)
            if (ge[i] != edges[i])
                FAIL("Graph_get edges[%d]: expected %d, got %d", i, edges[i], ge[i]);
    }
    for (int q = 0; q < n; q++) {
        int exp[16], k = graph_nbrs(q, n, exp), cnt = -1, got[16];
        MPI_OK(MPI_Graph_neighbors_count(g, q, &cnt));
        if (cnt != k)
            FAIL("Graph_neighbors_count(%d): expected %d, got %d", q, k, cnt);
        MPI_OK(MPI_Graph_neighbors(g, q, 16, got));
        for (int i = 0; i < k; i++)
            if (got[i] != exp[i])
                FAIL("Graph_neighbors(%d)[%d]: expected %d, got %d", q, i, exp[i], got[i]);
    }
    {
        int nb[16], k = graph_nbrs(t_rank, n, nb);
        exchange(g, k, nb, k, nb, 31, "graph exchange");
    }
    MPI_OK(MPI_Comm_free(&g));
    free(index);
}

/* directed edges i -> i+1 (n >= 2), i -> i+3 (n >= 4) */
static int dg_out(int i, int n, int *out)
{
    int k = 0;
    if (n >= 2)
        out[k++] = (i + 1) % n;
    if (n >= 4)
        out[k++] = (i + 3) % n;
    return k;
}

static int dg_in(int i, int n, int *in)
{
    int k = 0;
    if (n >= 2)
        in[k++] = (i + n - 1) % n;
    if (n >= 4)
        in[k++] = (i + n - 3) % n;
    return k;
}

static int weight(int from, int to)
{
    return 100 * from + to + 1;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Check the neighbours of dist graph c against the local edge set. ordered:
 * the order must be the one given (create_adjacent). */
static void dg_check(MPI_Comm c, int weighted, int ordered, const char *what)
{
    const int n = t_size, me = t_rank;
    int st = -1, indeg = -1, outdeg = -1, w = -1;
    int ein[8], eout[8], kin = dg_in(me, n, ein), kout = dg_out(me, n, eout);
    MPI_OK(MPI_Topo_test(c, &st));
    CHECK(st == MPI_DIST_GRAPH, "%s: Topo_test = %d, expected MPI_DIST_GRAPH (%d)", what, st,
          MPI_DIST_GRAPH);
    MPI_OK(MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &w));
    if (indeg != kin || outdeg != kout || !!w != weighted)
        FAIL("%s: Dist_graph_neighbors_count: expected in %d out %d weighted %d, got %d %d %d",
             what, kin, kout, weighted, indeg, outdeg, w);
    int src[8], sw[8], dst[8], dw[8];
    for (int i = 0; i < 8; i++)
        src[i] = sw[i] = dst[i] = dw[i] = -9;
    if (weighted) {
        MPI_OK(MPI_Dist_graph_neighbors(c, 8, src, sw, 8, dst, dw));
    } else {
        int *volatile unweighted = MPI_UNWEIGHTED;
        MPI_OK(MPI_Dist_graph_neighbors(c, 8, src, unweighted, 8, dst, unweighted));
    }
    int gi[8][2], ei[8][2], go[8][2], eo[8][2];
    for (int i = 0; i < kin; i++) {
        gi[i][0] = src[i];
        gi[i][1] = weighted ? sw[i] : 0;
        ei[i][0] = ein[i];
        ei[i][1] = weighted ? weight(ein[i], me) : 0;
    }
    for (int i = 0; i < kout; i++) {
        go[i][0] = dst[i];
        go[i][1] = weighted ? dw[i] : 0;
        eo[i][0] = eout[i];
        eo[i][1] = weighted ? weight(me, eout[i]) : 0;
    }
    if (!ordered) {
        qsort(gi, (size_t)kin, sizeof gi[0], cmp_pair);
        qsort(ei, (size_t)kin, sizeof ei[0], cmp_pair);
        qsort(go, (size_t)kout, sizeof go[0], cmp_pair);
        qsort(eo, (size_t)kout, sizeof eo[0], cmp_pair);
    }
    for (int i = 0; i < kin; i++)
        if (gi[i][0] != ei[i][0] || gi[i][1] != ei[i][1])
            FAIL("%s: source %d: expected %d (weight %d), got %d (weight %d)", what, i, ei[i][0],
                 ei[i][1], gi[i][0], gi[i][1]);
    for (int i = 0; i < kout; i++)
        if (go[i][0] != eo[i][0] || go[i][1] != eo[i][1])
            FAIL("%s: destination %d: expected %d (weight %d), got %d (weight %d)", what, i,
                 eo[i][0], eo[i][1], go[i][0], go[i][1]);
    exchange(c, kin, src, kout, dst, 40 + weighted + 2 * ordered, what);
}

static void dist_graph(void)
{
    const int n = t_size, me = t_rank;
    int ein[8], eout[8], kin = dg_in(me, n, ein), kout = dg_out(me, n, eout);
    int win[8], wout[8];
    for (int i = 0; i < kin; i++)
        win[i] = weight(ein[i], me);
    for (int i = 0; i < kout; i++)
        wout[i] = weight(me, eout[i]);
    MPI_Comm c = MPI_COMM_NULL;
    /* through a volatile pointer: GCC warns about the sentinel constant */
    int *volatile unweighted = MPI_UNWEIGHTED;

    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, kin, ein, win, kout, eout, wout,
                                          MPI_INFO_NULL, 0, &c));
    dg_check(c, 1, 1, "dist_graph_create_adjacent weighted");
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, kin, ein, unweighted, kout, eout,
                                          unweighted, MPI_INFO_NULL, 0, &c));
    dg_check(c, 0, 1, "dist_graph_create_adjacent unweighted");
    MPI_OK(MPI_Comm_free(&c));

    /* Dist_graph_create: rank r describes the out-edges of node (r + 1) % n */
    {
        int node = (me + 1) % n, d[8], k = dg_out(node, n, d), w[8];
        int srcs[1] = {node}, degs[1] = {k};
        for (int i = 0; i < k; i++)
            w[i] = weight(node, d[i]);
        MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, srcs, degs, d, w, MPI_INFO_NULL, 0, &c));
        dg_check(c, 1, 0, "dist_graph_create weighted, edges given by a neighbour");
        MPI_OK(MPI_Comm_free(&c));
    }
    /* Dist_graph_create: rank 0 gives all edges, unweighted; the others nothing */
    {
        int srcs[64], degs[64], d[256], k = 0, ns = 0;
        if (me == 0)
            for (int i = 0; i < n; i++) {
                srcs[ns] = i;
                degs[ns] = dg_out(i, n, &d[k]);
                k += degs[ns];
                ns++;
            }
        MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, ns, srcs, degs, d, unweighted,
                                     MPI_INFO_NULL, 0, &c));
        dg_check(c, 0, 0, "dist_graph_create unweighted, all edges from rank 0");
        MPI_OK(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv)
{
#ifdef OPEN_MPI
    setenv("OMPI_MCA_topo", "basic", 0);
#endif
    t_init(&argc, &argv, "topo");
    CHECK(t_size <= 64, "at most 64 ranks");
    dims_create();
    cartesian();
    graph();
    dist_graph();
    t_done();
    return 0;
}
