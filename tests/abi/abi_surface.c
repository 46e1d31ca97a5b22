/* ABI test of the wider MPI surface: built with Debian MPICH's mpicc
 * (mpicc.mpich) against MPICH's mpi.h, run against weft's libmpich.so.12.
 * Communicators (Comm_dup, Comm_split with reversed keys, Comm_compare),
 * groups (Comm_group, Group_incl, translate_ranks, compare), derived
 * datatypes (vector, struct) sent around a ring, and a 2-D periodic
 * cartesian topology (Dims_create, Cart_create, Cart_coords, Cart_shift)
 * with a halo exchange. Every result is checked. Exit 0 on success. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1, size = 0;

#define FAIL(...)                                                            \
    do {                                                                     \
        fprintf(stderr, "[abi_surface rank %d] FAIL line %d: ", rank, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                        \
        fputc('\n', stderr);                                                 \
        MPI_Abort(MPI_COMM_WORLD, 1);                                        \
        exit(1);                                                             \
    } while (0)
#define OK(call)                                                             \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != MPI_SUCCESS)                                              \
            FAIL("%s returned %d", #call, rc_);                              \
    } while (0)

struct rec {
    int id;
    double val;
    char tag[3];
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* communicators */
    MPI_Comm dup, rev, half;
    int res = -1, r = -1, n = -1;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &res));
    if (res != MPI_CONGRUENT)
        FAIL("Comm_compare(dup, world) = %d, expected MPI_CONGRUENT", res);
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    OK(MPI_Comm_rank(rev, &r));
    if (r != size - 1 - rank)
        FAIL("rank in the reversed split: %d, expected %d", r, size - 1 - rank);
    OK(MPI_Comm_compare(rev, MPI_COMM_WORLD, &res));
    if (res != (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR))
        FAIL("Comm_compare(reversed, world) = %d", res);
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    OK(MPI_Comm_size(half, &n));
    OK(MPI_Comm_rank(half, &r));
    if (n != (size + 1 - rank % 2) / 2 || r != rank / 2)
        FAIL("parity split: size %d rank %d", n, r);
    {
        int v = rank, sum = -1, e = 0;
        OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, half));
        for (int w = rank % 2; w < size; w += 2)
            e += w;
        if (sum != e)
            FAIL("Allreduce on the parity split: %d, expected %d", sum, e);
        /* a dup message does not match on world */
        int out = 77 + rank, in = -1, flag = -1;
        MPI_Request rq;
        MPI_Status st;
        OK(MPI_Isend(&out, 1, MPI_INT, right, 9, dup, &rq));
        OK(MPI_Probe(left, 9, dup, &st));
        OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        if (flag)
            FAIL("a message on the dup is visible on MPI_COMM_WORLD");
        OK(MPI_Recv(&in, 1, MPI_INT, left, 9, dup, &st));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (in != 77 + left)
            FAIL("message on the dup: %d, expected %d", in, 77 + left);
        /* nobody sends on world before everyone has probed it */
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* groups */
    {
        MPI_Group wg, rg, g;
        OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        OK(MPI_Comm_group(rev, &rg));
        OK(MPI_Group_compare(wg, rg, &res));
        if (res != (size == 1 ? MPI_IDENT : MPI_SIMILAR))
            FAIL("Group_compare(world, reversed) = %d", res);
        int *ranks = malloc(sizeof(int) * (size_t)size), *out = malloc(sizeof(int) * (size_t)size);
        int k = 0;
        for (int i = size - 1; i >= 0; i -= 2)
            ranks[k++] = i;
        OK(MPI_Group_incl(wg, k, ranks, &g));
        int gs = -1, gr = -1;
        OK(MPI_Group_size(g, &gs));
        OK(MPI_Group_rank(g, &gr));
        if (gs != k)
            FAIL("Group_incl size %d, expected %d", gs, k);
        if ((size - 1 - rank) % 2 == 0 ? gr != (size - 1 - rank) / 2 : gr != MPI_UNDEFINED)
            FAIL("Group_rank %d in the group of every second rank from the top", gr);
        for (int i = 0; i < size; i++)
            ranks[i] = i;
        OK(MPI_Group_translate_ranks(wg, size, ranks, g, out));
        for (int i = 0; i < size; i++) {
            int e = (size - 1 - i) % 2 == 0 ? (size - 1 - i) / 2 : MPI_UNDEFINED;
            if (out[i] != e)
                FAIL("translate_ranks of %d: %d, expected %d", i, out[i], e);
        }
        OK(MPI_Group_free(&g));
        OK(MPI_Group_free(&rg));
        OK(MPI_Group_free(&wg));
        free(ranks);
        free(out);
    }

    /* derived datatypes: vector and struct around the ring */
    {
        MPI_Datatype vec, st, st2;
        int sb[30], rb[30];
        OK(MPI_Type_vector(5, 2, 3, MPI_INT, &vec)); /* ints 0,1,3,4,...,12,13 */
        OK(MPI_Type_commit(&vec));
        for (int i = 0; i < 30; i++) {
            sb[i] = rank * 100 + i;
            rb[i] = -1;
        }
        OK(MPI_Sendrecv(sb, 1, vec, right, 1, rb, 10, MPI_INT, left, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        for (int i = 0; i < 10; i++)
            if (rb[i] != left * 100 + (i / 2) * 3 + i % 2)
                FAIL("vector -> ints element %d: %d", i, rb[i]);
        for (int i = 0; i < 30; i++)
            rb[i] = -1;
        OK(MPI_Sendrecv(sb, 10, MPI_INT, right, 2, rb, 1, vec, left, 2, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        for (int i = 0; i < 30; i++) {
            int e = (i < 14 && i % 3 != 2) ? left * 100 + (i / 3) * 2 + i % 3 : -1;
            if (rb[i] != e)
                FAIL("ints -> vector at %d: %d, expected %d", i, rb[i], e);
        }
        MPI_Aint ext = 0, lb = 0;
        OK(MPI_Type_get_extent(vec, &lb, &ext));
        if (lb != 0 || ext != 14 * 4)
            FAIL("vector extent: lb %ld extent %ld", (long)lb, (long)ext);
        OK(MPI_Type_free(&vec));

        int bl[3] = {1, 1, 3};
        MPI_Aint dp[3] = {offsetof(struct rec, id), offsetof(struct rec, val),
                          offsetof(struct rec, tag)};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        OK(MPI_Type_create_struct(3, bl, dp, ty, &st));
        OK(MPI_Type_create_resized(st, 0, sizeof(struct rec), &st2));
        OK(MPI_Type_commit(&st2));
        struct rec out[4], in[4];
        for (int i = 0; i < 4; i++) {
            out[i].id = rank * 10 + i;
            out[i].val = rank + i * 0.25;
            memcpy(out[i].tag, "xyz", 3);
            out[i].tag[2] = (char)('a' + i);
            memset(&in[i], 0, sizeof in[i]);
        }
        MPI_Status s;
        int cnt = -1;
        OK(MPI_Sendrecv(out, 4, st2, right, 3, in, 4, st2, left, 3, MPI_COMM_WORLD, &s));
        OK(MPI_Get_count(&s, st2, &cnt));
        if (cnt != 4)
            FAIL("struct Get_count %d", cnt);
        for (int i = 0; i < 4; i++)
            if (in[i].id != left * 10 + i || in[i].val != left + i * 0.25 || in[i].tag[0] != 'x' ||
                in[i].tag[1] != 'y' || in[i].tag[2] != 'a' + i)
                FAIL("struct record %d: id %d val %g", i, in[i].id, in[i].val);
        int sz = -1;
        OK(MPI_Type_size(st2, &sz));
        if (sz != 4 + 8 + 3)
            FAIL("struct Type_size %d", sz);
        OK(MPI_Type_free(&st));
        OK(MPI_Type_free(&st2));
    }

    /* cartesian topology with a halo exchange */
    {
        int dims[2] = {0, 0}, periods[2] = {1, 1}, coords[2], ndims = -1, status = -1;
        MPI_Comm cart;
        OK(MPI_Dims_create(size, 2, dims));
        if (dims[0] * dims[1] != size || dims[0] < dims[1])
            FAIL("Dims_create(%d, 2) = %d x %d", size, dims[0], dims[1]);
        OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
        OK(MPI_Topo_test(cart, &status));
        OK(MPI_Cartdim_get(cart, &ndims));
        if (status != MPI_CART || ndims != 2)
            FAIL("Topo_test %d Cartdim_get %d", status, ndims);
        OK(MPI_Cart_coords(cart, rank, 2, coords));
        if (coords[0] != rank / dims[1] || coords[1] != rank % dims[1])
            FAIL("Cart_coords: (%d, %d)", coords[0], coords[1]);
        for (int d = 0; d < 2; d++) {
            int src, dst, out[2], in[2] = {-1, -1};
            OK(MPI_Cart_shift(cart, d, 1, &src, &dst));
            int c2[2] = {coords[0], coords[1]};
            c2[d] = (c2[d] + 1) % dims[d];
            int edst = c2[0] * dims[1] + c2[1];
            c2[d] = (coords[d] + dims[d] - 1) % dims[d];
            int esrc = c2[0] * dims[1] + c2[1];
            if (src != esrc || dst != edst)
                FAIL("Cart_shift dim %d: src %d dst %d, expected %d %d", d, src, dst, esrc, edst);
            out[0] = rank;
            out[1] = d;
            OK(MPI_Sendrecv(out, 2, MPI_INT, dst, 10 + d, in, 2, MPI_INT, src, 10 + d, cart,
                            MPI_STATUS_IGNORE));
            if (in[0] != esrc || in[1] != d)
                FAIL("halo dim %d: got %d %d, expected %d %d", d, in[0], in[1], esrc, d);
        }
        OK(MPI_Comm_free(&cart));
    }

    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&rev));
    OK(MPI_Comm_free(&dup));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        printf("abi_surface: OK (np %d) on: %.80s\n", size, lib);
    }
    MPI_Finalize();
    return 0;
}
