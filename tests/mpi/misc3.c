/* Assorted calls:
 *   - Type_size_x, Get_elements_x (also a partial item), Status_set_elements
 *     (and _x), Status_set_cancelled + Test_cancelled;
 *   - Alloc_mem / Free_mem (the whole block written, read back, and used
 *     as a message buffer);
 *   - Op_create: a commutative user op and a non-commutative one (2x2
 *     integer matrix product mod 1009: results must follow rank order), with
 *     Allreduce and Reduce (two roots) on MPI_COMM_WORLD and on a split
 *     communicator whose rank order is reversed; Op_commutative; Op_free;
 *     Reduce_local.
 * Works at any size, including 1. */
#include "common.h"

#define NMAT 3
#define MOD 1009

typedef struct {
    int a[4]; /* row-major 2x2 */
} mat;

static void matmul(const mat *x, const mat *y, mat *out)
{
    mat r;
    r.a[0] = (x->a[0] * y->a[0] + x->a[1] * y->a[2]) % MOD;
    r.a[1] = (x->a[0] * y->a[1] + x->a[1] * y->a[3]) % MOD;
    r.a[2] = (x->a[2] * y->a[0] + x->a[3] * y->a[2]) % MOD;
    r.a[3] = (x->a[2] * y->a[1] + x->a[3] * y->a[3]) % MOD;
    *out = r;
}

static int matmul_calls = 0;

/* inout = in * inout (in holds the lower ranks' contribution) */
static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat *x = in, *y = inout;
    matmul_calls++;
    for (int i = 0; i < *len; i++)
        matmul(&x[i], &y[i], &y[i]);
}

/* commutative: elementwise (a + b + a*b) mod MOD on ints */
static void comm_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = (int)(((long long)x[i] + y[i] + (long long)x[i] * y[i]) % MOD);
}

static mat my_mat(int r, int k)
{
    mat m;
    m.a[0] = (r + 1 + k) % MOD;
    m.a[1] = (1 + 2 * k) % MOD;
    m.a[2] = (r % 3 + k) % MOD;
    m.a[3] = (2 + r * k) % MOD;
    return m;
}

static int my_int(int r, int i)
{
    return (r * 7 + i * 3 + 1) % MOD;
}

/* members[i] = world rank with rank i in c */
static void reductions(MPI_Comm c, const int *members, int n, MPI_Op mop, MPI_Datatype mt,
                       MPI_Op cop, const char *what)
{
    int r;
    MPI_OK(MPI_Comm_rank(c, &r));
    mat mine[NMAT], res[NMAT], exp[NMAT];
    for (int k = 0; k < NMAT; k++) {
        mine[k] = my_mat(members[r], k);
        exp[k] = my_mat(members[0], k);
        for (int i = 1; i < n; i++) {
            mat m = my_mat(members[i], k);
            matmul(&exp[k], &m, &exp[k]);
        }
    }
    int ci[16], cres[16], cexp[16];
    for (int i = 0; i < 16; i++) {
        ci[i] = my_int(members[r], i);
        cexp[i] = my_int(members[0], i);
        for (int j = 1; j < n; j++)
            cexp[i] = (int)(((long long)cexp[i] + my_int(members[j], i) +
                             (long long)cexp[i] * my_int(members[j], i)) % MOD);
    }
    /* Allreduce */
    memset(res, 0xff, sizeof res);
    MPI_OK(MPI_Allreduce(mine, res, NMAT, mt, mop, c));
    for (int k = 0; k < NMAT; k++)
        for (int j = 0; j < 4; j++)
            if (res[k].a[j] != exp[k].a[j])
                FAIL("%s: Allreduce matrix product %d entry %d: expected %d, got %d (rank order "
                     "not kept?)", what, k, j, exp[k].a[j], res[k].a[j]);
    MPI_OK(MPI_Allreduce(ci, cres, 16, MPI_INT, cop, c));
    for (int i = 0; i < 16; i++)
        if (cres[i] != cexp[i])
            FAIL("%s: Allreduce commutative op elem %d: expected %d, got %d", what, i, cexp[i],
                 cres[i]);
    /* Reduce to rank 0 and to the last rank */
    for (int root = 0; root < n; root += (n > 1 ? n - 1 : 1)) {
        memset(res, 0xff, sizeof res);
        MPI_OK(MPI_Reduce(mine, res, NMAT, mt, mop, root, c));
        if (r == root)
            for (int k = 0; k < NMAT; k++)
                for (int j = 0; j < 4; j++)
                    if (res[k].a[j] != exp[k].a[j])
                        FAIL("%s: Reduce to %d matrix product %d entry %d: expected %d, got %d",
                             what, root, k, j, exp[k].a[j], res[k].a[j]);
        memset(cres, 0xff, sizeof cres);
        MPI_OK(MPI_Reduce(ci, cres, 16, MPI_INT, cop, root, c));
        if (r == root)
            for (int i = 0; i < 16; i++)
                if (cres[i] != cexp[i])
                    FAIL("%s: Reduce to %d commutative elem %d: expected %d, got %d", what, root,
                         i, cexp[i], cres[i]);
        if (n == 1)
            break;
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "misc3");
    const int n = t_size;

    /* Type_size_x */
    {
        MPI_Count sz = -1;
        MPI_Datatype v;
        MPI_OK(MPI_Type_size_x(MPI_DOUBLE, &sz));
        CHECK_EQ_INT(sz, 8, "Type_size_x(MPI_DOUBLE)");
        MPI_OK(MPI_Type_vector(3, 2, 5, MPI_INT, &v));
        MPI_OK(MPI_Type_size_x(v, &sz));
        CHECK_EQ_INT(sz, 24, "Type_size_x(vector(3,2,5,INT))");
        MPI_OK(MPI_Type_free(&v));
    }

    /* Get_elements_x with a partial item */
    {
        MPI_Datatype pair;
        int out[7], in[8];
        MPI_Status st;
        MPI_Count ne = -1;
        int cnt = -2;
        MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
        MPI_OK(MPI_Type_commit(&pair));
        for (int i = 0; i < 7; i++)
            out[i] = 100 + i;
        MPI_OK(MPI_Sendrecv(out, 7, MPI_INT, t_rank, 3, in, 4, pair, t_rank, 3, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_elements_x(&st, pair, &ne));
        CHECK_EQ_INT(ne, 7, "Get_elements_x of 7 ints into pairs");
        MPI_OK(MPI_Get_count(&st, pair, &cnt));
        CHECK_EQ_INT(cnt, MPI_UNDEFINED, "Get_count of 7 ints into pairs");
        MPI_OK(MPI_Get_elements_x(&st, MPI_INT, &ne));
        CHECK_EQ_INT(ne, 7, "Get_elements_x with MPI_INT");
        for (int i = 0; i < 7; i++)
            CHECK_EQ_INT(in[i], 100 + i, "data of the partial receive");

        /* Status_set_elements */
        MPI_Status s2;
        memset(&s2, 0, sizeof s2);
        MPI_OK(MPI_Status_set_elements(&s2, MPI_INT, 5));
        MPI_OK(MPI_Get_count(&s2, MPI_INT, &cnt));
        CHECK_EQ_INT(cnt, 5, "Get_count after Status_set_elements(INT, 5)");
        MPI_OK(MPI_Get_elements_x(&s2, MPI_INT, &ne));
        CHECK_EQ_INT(ne, 5, "Get_elements_x after Status_set_elements(INT, 5)");
        MPI_OK(MPI_Status_set_elements(&s2, pair, 6));
        MPI_OK(MPI_Get_count(&s2, pair, &cnt));
        CHECK_EQ_INT(cnt, 3, "Get_count(pair) after Status_set_elements(pair, 6 elements)");
        MPI_OK(MPI_Get_elements(&s2, pair, &cnt));
        CHECK_EQ_INT(cnt, 6, "Get_elements(pair) after Status_set_elements(pair, 6)");
        MPI_OK(MPI_Get_count(&s2, MPI_INT, &cnt));
        CHECK_EQ_INT(cnt, 6, "Get_count(INT) after Status_set_elements(pair, 6)");
        MPI_OK(MPI_Status_set_elements_x(&s2, MPI_DOUBLE, (MPI_Count)9));
        MPI_OK(MPI_Get_elements_x(&s2, MPI_DOUBLE, &ne));
        CHECK_EQ_INT(ne, 9, "Get_elements_x after Status_set_elements_x(DOUBLE, 9)");
        MPI_OK(MPI_Get_count(&s2, MPI_DOUBLE, &cnt));
        CHECK_EQ_INT(cnt, 9, "Get_count after Status_set_elements_x(DOUBLE, 9)");

        /* Status_set_cancelled / Test_cancelled */
        int flag = -1;
        MPI_OK(MPI_Status_set_cancelled(&s2, 1));
        MPI_OK(MPI_Test_cancelled(&s2, &flag));
        CHECK(flag, "Test_cancelled after Status_set_cancelled(1) gave 0");
        MPI_OK(MPI_Status_set_cancelled(&s2, 0));
        MPI_OK(MPI_Test_cancelled(&s2, &flag));
        CHECK(!flag, "Test_cancelled after Status_set_cancelled(0) gave %d", flag);
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(!flag, "Test_cancelled of a completed receive gave %d", flag);
        MPI_OK(MPI_Type_free(&pair));
    }

    /* Alloc_mem / Free_mem */
    {
        const size_t sz = 1u << 20;
        unsigned char *m = NULL, *m2 = NULL;
        MPI_OK(MPI_Alloc_mem((MPI_Aint)sz, MPI_INFO_NULL, &m));
        CHECK(m != NULL, "Alloc_mem returned NULL");
        MPI_OK(MPI_Alloc_mem((MPI_Aint)sz, MPI_INFO_NULL, &m2));
        CHECK(m2 != NULL && m2 != m, "second Alloc_mem returned %p", (void *)m2);
        t_fill(m, sz, 31, (uint32_t)t_rank, 0);
        CHECK_PAT(m, sz, 31, (uint32_t)t_rank, 0, "Alloc_mem block read back");
        int right = (t_rank + 1) % n, left = (t_rank + n - 1) % n;
        memset(m2, 0, sz);
        MPI_OK(MPI_Sendrecv(m, (int)sz, MPI_BYTE, right, 4, m2, (int)sz, MPI_BYTE, left, 4,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_PAT(m2, sz, 31, (uint32_t)left, 0, "message into Alloc_mem memory");
        MPI_OK(MPI_Free_mem(m));
        MPI_OK(MPI_Free_mem(m2));
        /* size 0 */
        void *z = NULL;
        MPI_OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &z));
        MPI_OK(MPI_Free_mem(z));
    }

    /* user ops */
    {
        MPI_Op mop = MPI_OP_NULL, cop = MPI_OP_NULL;
        MPI_Datatype mt;
        int c = -1;
        MPI_OK(MPI_Type_contiguous(4, MPI_INT, &mt));
        MPI_OK(MPI_Type_commit(&mt));
        MPI_OK(MPI_Op_create(matmul_op, 0, &mop));
        MPI_OK(MPI_Op_create(comm_op, 1, &cop));
        MPI_OK(MPI_Op_commutative(mop, &c));
        CHECK_EQ_INT(c, 0, "Op_commutative of the matrix product");
        MPI_OK(MPI_Op_commutative(cop, &c));
        CHECK_EQ_INT(c, 1, "Op_commutative of the commutative user op");
        MPI_OK(MPI_Op_commutative(MPI_SUM, &c));
        CHECK_EQ_INT(c, 1, "Op_commutative(MPI_SUM)");

        /* Reduce_local: inout = in op inout */
        {
            mat a[NMAT], b[NMAT], e[NMAT];
            for (int k = 0; k < NMAT; k++) {
                a[k] = my_mat(3, k);
                b[k] = my_mat(4, k);
                matmul(&a[k], &b[k], &e[k]);
            }
            MPI_OK(MPI_Reduce_local(a, b, NMAT, mt, mop));
            for (int k = 0; k < NMAT; k++)
                for (int j = 0; j < 4; j++)
                    if (b[k].a[j] != e[k].a[j])
                        FAIL("Reduce_local matrix %d entry %d: expected %d (in * inout), got %d",
                             k, j, e[k].a[j], b[k].a[j]);
            CHECK(matmul_calls > 0, "Reduce_local did not call the user function");
            int x[3] = {1, 2, 3}, y[3] = {4, 5, 6};
            MPI_OK(MPI_Reduce_local(x, y, 3, MPI_INT, cop));
            CHECK(y[0] == 9 && y[1] == 17 && y[2] == 27, "Reduce_local commutative: %d %d %d",
                  y[0], y[1], y[2]);
            MPI_OK(MPI_Reduce_local(x, y, 3, MPI_INT, MPI_SUM));
            CHECK(y[0] == 10 && y[1] == 19 && y[2] == 30, "Reduce_local(MPI_SUM): %d %d %d", y[0],
                  y[1], y[2]);
        }

        int *members = malloc(sizeof(int) * (size_t)n);
        CHECK(members, "out of memory");
        for (int i = 0; i < n; i++)
            members[i] = i;
        reductions(MPI_COMM_WORLD, members, n, mop, mt, cop, "world");
        /* split by parity, keys reversing the order */
        {
            MPI_Comm half;
            MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, n - t_rank, &half));
            int k = 0;
            for (int w = n - 1; w >= 0; w--)
                if (w % 2 == t_rank % 2)
                    members[k++] = w;
            reductions(half, members, k, mop, mt, cop, "parity split, reversed");
            MPI_OK(MPI_Comm_free(&half));
        }
        free(members);
        MPI_OK(MPI_Op_free(&mop));
        MPI_OK(MPI_Op_free(&cop));
        CHECK(mop == MPI_OP_NULL && cop == MPI_OP_NULL, "Op_free did not set MPI_OP_NULL");
        MPI_OK(MPI_Type_free(&mt));
    }
    t_done();
    return 0;
}
