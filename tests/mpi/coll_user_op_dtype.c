/* User-defined operations on non-contiguous datatypes, in every reduction collective (blocking
 * and non-blocking) and MPI_Reduce_local. The function must see its elements in the datatype's
 * own layout and the datatype handle it was called with; gaps of the results stay untouched.
 *
 * - compose: a non-commutative op on affine maps x -> a*x + b (unsigned, modulo 2^32), an
 *   element being a and b with a gap between them (a vector of 2 blocks of 1, stride 2): the
 *   result over ranks lo..hi is f_hi o ... o f_lo, which rank order decides.
 * - mixed: a commutative sum over a struct {int; gap; double} resized to leave a gap after it,
 *   a datatype of two basic types, which no predefined operation takes. */
#include <stddef.h>

#include "common.h"

#define GAP 0xdeadbeefu
#define DGAP -1.25

static MPI_Datatype affine, mixed;
static int calls_ok = 1;

struct mix {
    int i;
    int pad;
    double d;
    double tail;
};

static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != affine) calls_ok = 0;
    unsigned *f = in, *g = inout; /* element k: a at 3k, b at 3k + 2 */
    for (int k = 0; k < *len; k++) {
        unsigned fa = f[3 * k], fb = f[3 * k + 2], ga = g[3 * k], gb = g[3 * k + 2];
        g[3 * k] = ga * fa;
        g[3 * k + 2] = ga * fb + gb;
    }
}

static void mixed_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != mixed) calls_ok = 0;
    struct mix *x = in, *y = inout;
    for (int k = 0; k < *len; k++) {
        y[k].i += x[k].i;
        y[k].d += x[k].d;
    }
}

/* Rank r's map for element k. */
static unsigned map_a(int r, int k) { return 2u * (unsigned)(r * 31 + k) + 1u; }
static unsigned map_b(int r, int k) { return (unsigned)(r * 7 + k * 13 + 5); }

static void fill_affine(unsigned *buf, int n, int r)
{
    for (int k = 0; k < n; k++) {
        buf[3 * k] = map_a(r, k);
        buf[3 * k + 1] = GAP;
        buf[3 * k + 2] = map_b(r, k);
    }
}

static void clear_affine(unsigned *buf, int n)
{
    for (int k = 0; k < 3 * n; k++) buf[k] = GAP;
}

/* Checks that buf holds f_hi o ... o f_lo for every element, and its gaps. */
static void check_affine(const unsigned *buf, int n, int lo, int hi, const char *what)
{
    for (int k = 0; k < n; k++) {
        unsigned a = 1, b = 0;
        for (int r = lo; r <= hi; r++) {
            b = map_a(r, k) * b + map_b(r, k);
            a = map_a(r, k) * a;
        }
        if (buf[3 * k] != a || buf[3 * k + 2] != b)
            FAIL("%s: element %d is (%u, %u), expected (%u, %u)", what, k, buf[3 * k], buf[3 * k + 2], a, b);
        if (buf[3 * k + 1] != GAP) FAIL("%s: gap of element %d overwritten (0x%x)", what, k, buf[3 * k + 1]);
    }
}

static void fill_mixed(struct mix *buf, int n, int r)
{
    for (int k = 0; k < n; k++) {
        buf[k].i = r * 100 + k;
        buf[k].pad = -3;
        buf[k].d = 0.5 * r + k;
        buf[k].tail = DGAP;
    }
}

static void check_mixed(const struct mix *buf, int n, int ranks, const char *what)
{
    for (int k = 0; k < n; k++) {
        int ei = 0;
        double ed = 0;
        for (int r = 0; r < ranks; r++) {
            ei += r * 100 + k;
            ed += 0.5 * r + k;
        }
        if (buf[k].i != ei || buf[k].d != ed)
            FAIL("%s: element %d is (%d, %g), expected (%d, %g)", what, k, buf[k].i, buf[k].d, ei, ed);
        if (buf[k].tail != DGAP) FAIL("%s: gap of element %d overwritten (%g)", what, k, buf[k].tail);
    }
}

/* MPI_<name>(args) blocking, or MPI_<iname>(args, &req) and its wait. */
#define BOTH(name, iname, ...)                                           \
    do {                                                                 \
        if (nonblocking) {                                               \
            MPI_OK(MPI_##iname(__VA_ARGS__, &req));                      \
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));                   \
        } else {                                                         \
            MPI_OK(MPI_##name(__VA_ARGS__));                             \
        }                                                                \
    } while (0)

static void run_affine(MPI_Op op, int n, int nonblocking)
{
    unsigned *in = malloc(sizeof(unsigned) * 3 * (size_t)n * (size_t)t_size);
    unsigned *out = malloc(sizeof(unsigned) * 3 * (size_t)n * (size_t)t_size);
    MPI_Request req;
    char what[96];
    const char *form = nonblocking ? "non-blocking" : "blocking";

    for (int root = 0; root < t_size; root++) {
        fill_affine(in, n, t_rank);
        clear_affine(out, n);
        snprintf(what, sizeof what, "%s Reduce (root %d, %d elements)", form, root, n);
        BOTH(Reduce, Ireduce, in, out, n, affine, op, root, MPI_COMM_WORLD);
        if (t_rank == root) check_affine(out, n, 0, t_size - 1, what);
    }

    fill_affine(in, n, t_rank);
    clear_affine(out, n);
    snprintf(what, sizeof what, "%s Allreduce (%d elements)", form, n);
    BOTH(Allreduce, Iallreduce, in, out, n, affine, op, MPI_COMM_WORLD);
    check_affine(out, n, 0, t_size - 1, what);

    fill_affine(out, n, t_rank);
    snprintf(what, sizeof what, "%s Allreduce in place (%d elements)", form, n);
    BOTH(Allreduce, Iallreduce, MPI_IN_PLACE, out, n, affine, op, MPI_COMM_WORLD);
    check_affine(out, n, 0, t_size - 1, what);

    fill_affine(in, n, t_rank);
    clear_affine(out, n);
    snprintf(what, sizeof what, "%s Scan (%d elements)", form, n);
    BOTH(Scan, Iscan, in, out, n, affine, op, MPI_COMM_WORLD);
    check_affine(out, n, 0, t_rank, what);

    clear_affine(out, n);
    snprintf(what, sizeof what, "%s Exscan (%d elements)", form, n);
    BOTH(Exscan, Iexscan, in, out, n, affine, op, MPI_COMM_WORLD);
    if (t_rank > 0) check_affine(out, n, 0, t_rank - 1, what);

    /* Reduce_scatter_block: n elements per rank out of n * size. */
    for (int r = 0; r < t_size; r++) fill_affine(in + 3 * (size_t)n * (size_t)r, n, t_rank);
    clear_affine(out, n);
    snprintf(what, sizeof what, "%s Reduce_scatter_block (%d elements)", form, n);
    BOTH(Reduce_scatter_block, Ireduce_scatter_block, in, out, n, affine, op, MPI_COMM_WORLD);
    check_affine(out, n, 0, t_size - 1, what);
    free(in);
    free(out);
}

static void run_mixed(MPI_Op op, int n)
{
    struct mix *in = malloc(sizeof(struct mix) * (size_t)n), *out = malloc(sizeof(struct mix) * (size_t)n);
    MPI_Request req;
    fill_mixed(in, n, t_rank);
    fill_mixed(out, n, 0);
    for (int k = 0; k < n; k++) out[k].i = -1;
    MPI_OK(MPI_Iallreduce(in, out, n, mixed, op, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_mixed(out, n, t_size, "Iallreduce of the mixed type");
    fill_mixed(out, n, 0);
    MPI_OK(MPI_Reduce(in, out, n, mixed, op, 0, MPI_COMM_WORLD));
    if (t_rank == 0) check_mixed(out, n, t_size, "Reduce of the mixed type");
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_user_op_dtype");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Datatype pair;
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_UNSIGNED, &pair)); /* a, gap, b: extent 3 ints */
    MPI_OK(MPI_Type_dup(pair, &affine));
    MPI_OK(MPI_Type_commit(&affine));
    MPI_OK(MPI_Type_free(&pair));

    int blocks[2] = {1, 1};
    MPI_Aint displs[2] = {offsetof(struct mix, i), offsetof(struct mix, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, s;
    MPI_OK(MPI_Type_create_struct(2, blocks, displs, types, &s));
    MPI_OK(MPI_Type_create_resized(s, 0, sizeof(struct mix), &mixed));
    MPI_OK(MPI_Type_commit(&mixed));
    MPI_OK(MPI_Type_free(&s));

    MPI_Op op_compose, op_sum;
    MPI_OK(MPI_Op_create(compose, 0, &op_compose));
    MPI_OK(MPI_Op_create(mixed_sum, 1, &op_sum));

    /* A predefined operation still refuses the mixed type. */
    struct mix one[1];
    fill_mixed(one, 1, t_rank);
    CHECK(MPI_Allreduce(MPI_IN_PLACE, one, 1, mixed, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS,
          "MPI_SUM on a struct of int and double was accepted");

    const int counts[] = {1, 3, 1000, 20000};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        run_affine(op_compose, counts[i], 0);
        run_affine(op_compose, counts[i], 1);
        run_mixed(op_sum, counts[i]);
    }

    /* Reduce_local: inout = in o inout's order (in comes first). */
    unsigned a[3 * 4], b[3 * 4];
    fill_affine(a, 4, 0);
    fill_affine(b, 4, 1);
    MPI_OK(MPI_Reduce_local(a, b, 4, affine, op_compose));
    check_affine(b, 4, 0, 1, "Reduce_local");

    /* The operation and the datatype freed while a non-blocking call and a persistent one
     * that use them are pending: both stay usable until the calls complete. */
    {
        const int n = 500;
        unsigned *in = malloc(sizeof(unsigned) * 3 * n), *out = malloc(sizeof(unsigned) * 3 * n);
        unsigned *pin = malloc(sizeof(unsigned) * 3 * n), *pout = malloc(sizeof(unsigned) * 3 * n);
        MPI_Datatype dup;
        MPI_Op op;
        MPI_Request req[2];
        MPI_OK(MPI_Type_dup(affine, &dup));
        MPI_OK(MPI_Type_commit(&dup));
        MPI_OK(MPI_Op_create(compose, 0, &op));
        MPI_Datatype saved = affine;
        affine = dup; /* the handle the function must see */
        fill_affine(in, n, t_rank);
        clear_affine(out, n);
        fill_affine(pin, n, t_rank);
        clear_affine(pout, n);
        MPI_OK(MPI_Iallreduce(in, out, n, dup, op, MPI_COMM_WORLD, &req[0]));
        MPI_OK(MPI_Allreduce_init(pin, pout, n, dup, op, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
        MPI_OK(MPI_Op_free(&op));
        MPI_OK(MPI_Type_free(&dup));
        MPI_OK(MPI_Start(&req[1]));
        MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        check_affine(out, n, 0, t_size - 1, "Iallreduce after MPI_Op_free and MPI_Type_free");
        check_affine(pout, n, 0, t_size - 1, "persistent Allreduce after MPI_Op_free and MPI_Type_free");
        clear_affine(pout, n);
        MPI_OK(MPI_Start(&req[1]));
        MPI_OK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
        check_affine(pout, n, 0, t_size - 1, "persistent Allreduce started again");
        MPI_OK(MPI_Request_free(&req[1]));
        affine = saved;
        free(in);
        free(out);
        free(pin);
        free(pout);
    }

    CHECK(calls_ok, "the user function was called with another datatype handle");
    MPI_OK(MPI_Op_free(&op_compose));
    MPI_OK(MPI_Op_free(&op_sum));
    MPI_OK(MPI_Type_free(&affine));
    MPI_OK(MPI_Type_free(&mixed));
    t_done();
    return 0;
}
