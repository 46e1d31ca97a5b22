/* MPI one-sided communication, the matrix: window flavors (create with a displacement unit
 * of 8, allocate, dynamic with attached memory addressed by MPI_Get_address, shared on the
 * node's communicator) x synchronisation (fence, post/start/complete/wait, lock, lock_all,
 * lock_all + flush, lock + flush_local) x operations (put, get, accumulate and get_accumulate
 * with several operations and types, 16-byte elements included, fetch_and_op,
 * compare_and_swap, and in the passive modes rput, rget, raccumulate, rget_accumulate
 * completed through MPI_Wait or MPI_Test), plus put, get and get_accumulate with derived
 * datatypes (a strided vector at the target, an indexed type at the origin).
 * Every origin o works on the region o of its right neighbour; every result (the target's
 * memory, fetched values) is checked against a reference computed locally. */
#include <complex.h>

#include "common.h"

enum { REGION = 64 };  /* bytes of each origin's region in each window */

enum flavor { F_CREATE, F_ALLOCATE, F_DYNAMIC, F_SHARED, N_FLAVORS };
static const char *flavor_names[] = {"create", "allocate", "dynamic", "shared"};
enum sync { S_FENCE, S_PSCW, S_LOCK, S_LOCK_ALL, S_FLUSH, S_FLUSH_LOCAL, N_SYNCS };
static const char *sync_names[] = {"fence", "pscw", "lock", "lock_all", "flush", "flush_local"};

enum kind { K_I64, K_I32, K_I16, K_U8, K_DBL, K_FLT, K_LDBL, K_CDBL, K_2INT };
typedef struct {
    enum kind kind;
    MPI_Datatype (*type)(void);
    MPI_Op (*op)(void);
    const char *name;
} acc_case;

/* MPI handles are not constant expressions in every MPI: fetched through functions. */
static MPI_Datatype t_i64(void) { return MPI_INT64_T; }
static MPI_Datatype t_i32(void) { return MPI_INT; }
static MPI_Datatype t_i16(void) { return MPI_SHORT; }
static MPI_Datatype t_u8(void) { return MPI_UNSIGNED_CHAR; }
static MPI_Datatype t_dbl(void) { return MPI_DOUBLE; }
static MPI_Datatype t_flt(void) { return MPI_FLOAT; }
static MPI_Datatype t_ldbl(void) { return MPI_LONG_DOUBLE; }
static MPI_Datatype t_cdbl(void) { return MPI_C_DOUBLE_COMPLEX; }
static MPI_Datatype t_2int(void) { return MPI_2INT; }
static MPI_Op o_sum(void) { return MPI_SUM; }
static MPI_Op o_prod(void) { return MPI_PROD; }
static MPI_Op o_max(void) { return MPI_MAX; }
static MPI_Op o_min(void) { return MPI_MIN; }
static MPI_Op o_bxor(void) { return MPI_BXOR; }
static MPI_Op o_bor(void) { return MPI_BOR; }
static MPI_Op o_replace(void) { return MPI_REPLACE; }
static MPI_Op o_no_op(void) { return MPI_NO_OP; }
static MPI_Op o_minloc(void) { return MPI_MINLOC; }

static const acc_case acc_cases[] = {
    {K_I64, t_i64, o_sum, "int64 sum"},     {K_I64, t_i64, o_replace, "int64 replace"},
    {K_I64, t_i64, o_no_op, "int64 no_op"}, {K_I32, t_i32, o_bxor, "int bxor"},
    {K_I32, t_i32, o_max, "int max"},       {K_I16, t_i16, o_sum, "short sum"},
    {K_U8, t_u8, o_bor, "uchar bor"},       {K_DBL, t_dbl, o_min, "double min"},
    {K_FLT, t_flt, o_prod, "float prod"},   {K_LDBL, t_ldbl, o_sum, "long double sum"},
    {K_CDBL, t_cdbl, o_sum, "double complex sum"}, {K_2INT, t_2int, o_minloc, "2int minloc"},
};
enum { N_ACC = sizeof acc_cases / sizeof acc_cases[0] };

typedef struct { int v, i; } int2;

static size_t kind_size(enum kind k)
{
    switch (k) {
    case K_I64: return 8;
    case K_I32: return 4;
    case K_I16: return 2;
    case K_U8: return 1;
    case K_DBL: return 8;
    case K_FLT: return 4;
    case K_LDBL: return sizeof(long double);
    case K_CDBL: return sizeof(double _Complex);
    case K_2INT: return sizeof(int2);
    }
    return 1;
}

/* Small integers (exact in every type): the target's initial element k of region o at rank
 * t, and origin o's operand k. */
static int init_value(int t, int o, int k) { return (t * 7 + o * 3 + k) % 11 + 1; }
static int origin_value(int o, int k) { return (o * 5 + k) % 7 + 1; }

static void store(enum kind kd, void *buf, int k, int v, int idx)
{
    switch (kd) {
    case K_I64: ((int64_t *)buf)[k] = v; break;
    case K_I32: ((int *)buf)[k] = v; break;
    case K_I16: ((short *)buf)[k] = (short)v; break;
    case K_U8: ((unsigned char *)buf)[k] = (unsigned char)v; break;
    case K_DBL: ((double *)buf)[k] = v; break;
    case K_FLT: ((float *)buf)[k] = (float)v; break;
    case K_LDBL: ((long double *)buf)[k] = v; break;
    case K_CDBL: ((double _Complex *)buf)[k] = v + 2.0 * v * I; break;
    case K_2INT: ((int2 *)buf)[k].v = v, ((int2 *)buf)[k].i = idx; break;
    }
}

/* Fills n elements: the target's initial values, or the origin's operands. */
static void fill(enum kind kd, void *buf, int n, int t, int o, int origin)
{
    memset(buf, 0, (size_t)n * kind_size(kd));
    for (int k = 0; k < n; k++) store(kd, buf, k, origin ? origin_value(o, k) : init_value(t, o, k), origin ? 100 + o : k);
}

/* inout[k] = in[k] op inout[k] as MPI defines it. */
static void reference(enum kind kd, MPI_Op op, const void *in, void *inout, int n)
{
    for (int k = 0; k < n; k++) {
        if (op == MPI_NO_OP) continue;
#define ARITH(T)                                                                        \
    do {                                                                                \
        T a = ((const T *)in)[k], *b = &((T *)inout)[k];                                \
        if (op == MPI_SUM) *b = a + *b;                                                 \
        else if (op == MPI_PROD) *b = a * *b;                                           \
        else if (op == MPI_MAX) *b = a > *b ? a : *b;                                   \
        else if (op == MPI_MIN) *b = a < *b ? a : *b;                                   \
        else if (op == MPI_REPLACE) *b = a;                                             \
    } while (0)
#define BITS(T)                                                                         \
    do {                                                                                \
        T a = ((const T *)in)[k], *b = &((T *)inout)[k];                                \
        if (op == MPI_BXOR) *b = a ^ *b;                                                \
        else if (op == MPI_BOR) *b = a | *b;                                            \
        else ARITH(T);                                                                  \
    } while (0)
        switch (kd) {
        case K_I64: BITS(int64_t); break;
        case K_I32: BITS(int); break;
        case K_I16: BITS(short); break;
        case K_U8: BITS(unsigned char); break;
        case K_DBL: ARITH(double); break;
        case K_FLT: ARITH(float); break;
        case K_LDBL: ARITH(long double); break;
        case K_CDBL: {
            double _Complex a = ((const double _Complex *)in)[k], *b = &((double _Complex *)inout)[k];
            if (op == MPI_SUM) *b = a + *b;
            else if (op == MPI_REPLACE) *b = a;
            break;
        }
        case K_2INT: {
            const int2 a = ((const int2 *)in)[k];
            int2 *b = &((int2 *)inout)[k];
            if (a.v < b->v || (a.v == b->v && a.i < b->i)) *b = a;
            break;
        }
        }
#undef ARITH
#undef BITS
    }
}

static void same(const void *got, const void *want, size_t bytes, const char *what, int flavor, int sync,
                 const char *name)
{
    if (memcmp(got, want, bytes) != 0) {
        const unsigned char *g = got, *w = want;
        size_t i = 0;
        while (g[i] == w[i]) i++;
        FAIL("%s/%s/%s: %s differs at byte %zu: %u, expected %u", flavor_names[flavor], sync_names[sync], name, what,
             i, g[i], w[i]);
    }
}

/* One window and what the cases need of it. */
typedef struct {
    MPI_Comm comm;
    int rank, size, right, left;
    enum flavor flavor;
    MPI_Win win;
    unsigned char *mem;   /* this rank's window memory: size regions */
    MPI_Aint *addr;       /* dynamic: every rank's attached address */
    int disp_unit;
    MPI_Group left_group, right_group;
} ctx;

/* The target displacement of byte `byte` of region o at the right neighbour. */
static MPI_Aint disp_of(const ctx *c, int o, int byte)
{
    const MPI_Aint off = (MPI_Aint)o * REGION + byte;
    if (c->flavor == F_DYNAMIC) return c->addr[c->right] + off;
    return off / c->disp_unit;
}

static void open_epoch(const ctx *c, int sync)
{
    switch (sync) {
    case S_FENCE: MPI_OK(MPI_Win_fence(0, c->win)); break;
    case S_PSCW:
        MPI_OK(MPI_Win_post(c->left_group, 0, c->win));
        MPI_OK(MPI_Win_start(c->right_group, 0, c->win));
        break;
    case S_LOCK: MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->right, 0, c->win)); break;
    case S_LOCK_ALL: case S_FLUSH: MPI_OK(MPI_Win_lock_all(0, c->win)); break;
    case S_FLUSH_LOCAL: MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, c->right, 0, c->win)); break;
    }
}

/* Makes the origin's results usable (the flush modes first flush, then close). */
static void close_epoch(const ctx *c, int sync)
{
    switch (sync) {
    case S_FENCE: MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win)); break;
    case S_PSCW:
        MPI_OK(MPI_Win_complete(c->win));
        MPI_OK(MPI_Win_wait(c->win));
        break;
    case S_LOCK: MPI_OK(MPI_Win_unlock(c->right, c->win)); break;
    case S_LOCK_ALL: MPI_OK(MPI_Win_unlock_all(c->win)); break;
    case S_FLUSH:
        MPI_OK(MPI_Win_flush(c->right, c->win));
        MPI_OK(MPI_Win_flush_all(c->win));
        MPI_OK(MPI_Win_unlock_all(c->win));
        break;
    case S_FLUSH_LOCAL:
        MPI_OK(MPI_Win_flush_local(c->right, c->win));
        MPI_OK(MPI_Win_flush_local_all(c->win));
        MPI_OK(MPI_Win_unlock(c->right, c->win));
        break;
    }
}

static int passive(int sync) { return sync == S_LOCK || sync == S_LOCK_ALL || sync == S_FLUSH || sync == S_FLUSH_LOCAL; }

/* Sets this rank's whole window to the initial values of kind kd, then lets every rank see it. */
static void reset(const ctx *c, enum kind kd)
{
    const int n = REGION / (int)kind_size(kd);
    for (int o = 0; o < c->size; o++) fill(kd, c->mem + (size_t)o * REGION, n, c->rank, o, 0);
    MPI_OK(MPI_Win_sync(c->win));
    MPI_OK(MPI_Barrier(c->comm));
}

/* Completes a request-based access with MPI_Wait or (every other case) MPI_Test. */
static void finish(MPI_Request *r, int use_test)
{
    if (!use_test) {
        MPI_OK(MPI_Wait(r, MPI_STATUS_IGNORE));
        return;
    }
    int flag = 0;
    while (!flag) MPI_OK(MPI_Test(r, &flag, MPI_STATUS_IGNORE));
    CHECK(*r == MPI_REQUEST_NULL, "a completed request was not freed");
}

enum op { OP_PUT, OP_GET, OP_ACC, OP_GET_ACC, OP_FOP, OP_CAS, OP_RPUT, OP_RGET, OP_RACC, OP_RGET_ACC, OP_DTYPE, N_OPS };

/* Checks, after the epoch, the region of the left neighbour in this rank's memory. */
static void check_target(const ctx *c, int sync, const char *name, const void *want)
{
    MPI_OK(MPI_Barrier(c->comm));
    MPI_OK(MPI_Win_sync(c->win));
    same(c->mem + (size_t)c->left * REGION, want, REGION, "the target's memory", c->flavor, sync, name);
}

static void run_case(ctx *c, int sync, enum op op, const acc_case *ac, int serial)
{
    const int o = c->rank, t = c->right;
    const enum kind kd = ac ? ac->kind : K_I64;
    const size_t es = kind_size(kd);
    const int n = REGION / (int)es;
    const MPI_Datatype dt = ac ? ac->type() : MPI_INT64_T;
    const MPI_Op mop = ac ? ac->op() : MPI_SUM;
    const char *name = ac ? ac->name : "int64";
    unsigned char operand[REGION], result[REGION], want_t[REGION], want_r[REGION], init_left[REGION];
    char label[96];
    MPI_Request req = MPI_REQUEST_NULL;
    reset(c, kd);
    fill(kd, operand, n, t, o, 1);
    fill(kd, want_r, n, t, o, 0);         /* the right neighbour's region o before */
    fill(kd, init_left, n, c->rank, c->left, 0);  /* my region of the left neighbour before */
    memset(result, 0xEE, sizeof result);
    open_epoch(c, sync);
    const MPI_Aint d = disp_of(c, o, 0);
    switch (op) {
    case OP_PUT:
    case OP_RPUT:
        snprintf(label, sizeof label, "%s %s", op == OP_PUT ? "put" : "rput", name);
        if (op == OP_PUT) MPI_OK(MPI_Put(operand, n, dt, t, d, n, dt, c->win));
        else {
            MPI_OK(MPI_Rput(operand, n, dt, t, d, n, dt, c->win, &req));
            finish(&req, serial & 1);
        }
        close_epoch(c, sync);
        fill(kd, want_t, n, c->left, c->left, 1);
        check_target(c, sync, label, want_t);
        break;
    case OP_GET:
    case OP_RGET:
        snprintf(label, sizeof label, "%s %s", op == OP_GET ? "get" : "rget", name);
        if (op == OP_GET) MPI_OK(MPI_Get(result, n, dt, t, d, n, dt, c->win));
        else {
            MPI_OK(MPI_Rget(result, n, dt, t, d, n, dt, c->win, &req));
            finish(&req, serial & 1);
        }
        close_epoch(c, sync);
        same(result, want_r, REGION, "the data got", c->flavor, sync, label);
        check_target(c, sync, label, init_left);
        break;
    case OP_ACC:
    case OP_RACC:
        snprintf(label, sizeof label, "%s %s", op == OP_ACC ? "accumulate" : "raccumulate", name);
        if (op == OP_ACC) MPI_OK(MPI_Accumulate(operand, n, dt, t, d, n, dt, mop, c->win));
        else {
            MPI_OK(MPI_Raccumulate(operand, n, dt, t, d, n, dt, mop, c->win, &req));
            finish(&req, serial & 1);
        }
        close_epoch(c, sync);
        memcpy(want_t, init_left, REGION);
        fill(kd, operand, n, c->rank, c->left, 1);  /* what the left neighbour added */
        reference(kd, mop, operand, want_t, n);
        check_target(c, sync, label, want_t);
        break;
    case OP_GET_ACC:
    case OP_RGET_ACC:
        snprintf(label, sizeof label, "%s %s", op == OP_GET_ACC ? "get_accumulate" : "rget_accumulate", name);
        if (op == OP_GET_ACC) MPI_OK(MPI_Get_accumulate(operand, n, dt, result, n, dt, t, d, n, dt, mop, c->win));
        else {
            MPI_OK(MPI_Rget_accumulate(operand, n, dt, result, n, dt, t, d, n, dt, mop, c->win, &req));
            finish(&req, serial & 1);
        }
        close_epoch(c, sync);
        same(result, want_r, REGION, "the values fetched", c->flavor, sync, label);
        memcpy(want_t, init_left, REGION);
        fill(kd, operand, n, c->rank, c->left, 1);
        reference(kd, mop, operand, want_t, n);
        check_target(c, sync, label, want_t);
        break;
    case OP_FOP: {
        /* One element: the third of the region, or the first where the displacement unit
         * does not reach the third. */
        snprintf(label, sizeof label, "fetch_and_op %s", name);
        const int at = (2 * es) % (size_t)c->disp_unit ? 0 : 2;
        MPI_OK(MPI_Fetch_and_op(operand + at * es, result, dt, t, disp_of(c, o, (int)(at * es)), mop, c->win));
        close_epoch(c, sync);
        same(result, want_r + at * es, es, "the value fetched", c->flavor, sync, label);
        memcpy(want_t, init_left, REGION);
        unsigned char in[REGION];
        fill(kd, in, n, c->rank, c->left, 1);
        reference(kd, mop, in + at * es, want_t + at * es, 1);
        check_target(c, sync, label, want_t);
        break;
    }
    case OP_CAS: {
        /* Element 0: the compare value matches (swapped in); element 1 (when the displacement
         * unit reaches it): it does not (unchanged). Both fetch the old value. */
        snprintf(label, sizeof label, "compare_and_swap %s", name);
        unsigned char cmp[16], fetched2[16];
        memcpy(cmp, want_r, es);
        MPI_OK(MPI_Compare_and_swap(operand, cmp, result, dt, t, d, c->win));
        const int second = c->disp_unit == 1 || es >= 8;
        if (second) {
            memcpy(cmp, operand + es, es);  /* differs from the initial value: init and operand sets are offset */
            if (memcmp(cmp, want_r + es, es) == 0) cmp[0] ^= 0x40;
            MPI_OK(MPI_Compare_and_swap(operand + es, cmp, fetched2, dt, t, disp_of(c, o, (int)es), c->win));
        }
        close_epoch(c, sync);
        same(result, want_r, es, "the value compare_and_swap fetched", c->flavor, sync, label);
        if (second) same(fetched2, want_r + es, es, "the value a failed compare_and_swap fetched", c->flavor, sync, label);
        memcpy(want_t, init_left, REGION);
        unsigned char in[REGION];
        fill(kd, in, n, c->rank, c->left, 1);
        memcpy(want_t, in, es);
        check_target(c, sync, label, want_t);
        break;
    }
    case OP_DTYPE: {
        /* Derived datatypes, a strided vector of 4 int64 at the target: put the 4 even int64 of
         * the operand (an indexed origin type) into the odd slots of region o, get_accumulate
         * (sum) 4 contiguous int64 onto its even slots, and get the even slots of another
         * region (o + 1, untouched) into the even slots of an indexed origin. */
        snprintf(label, sizeof label, "derived datatypes");
        MPI_Datatype vec, idx;
        int blens[4] = {1, 1, 1, 1}, disps[4] = {0, 2, 4, 6};
        MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT64_T, &vec));
        MPI_OK(MPI_Type_commit(&vec));
        MPI_OK(MPI_Type_indexed(4, blens, disps, MPI_INT64_T, &idx));
        MPI_OK(MPI_Type_commit(&idx));
        const int o2 = (o + 1) % c->size;
        int64_t got[8], fetched[4];
        for (int k = 0; k < 8; k++) got[k] = -1;
        MPI_OK(MPI_Put(operand, 1, idx, t, disp_of(c, o, 8), 1, vec, c->win));
        MPI_OK(MPI_Get_accumulate(operand, 4, MPI_INT64_T, fetched, 4, MPI_INT64_T, t, d, 1, vec, MPI_SUM, c->win));
        if (o2 != o) MPI_OK(MPI_Get(got, 1, idx, t, disp_of(c, o2, 0), 1, vec, c->win));
        close_epoch(c, sync);
        int64_t other[8];
        fill(K_I64, other, 8, t, o2, 0);
        for (int k = 0; k < 4; k++) {
            if (fetched[k] != ((int64_t *)want_r)[2 * k])
                FAIL("%s/%s: derived get_accumulate fetched %lld at %d", flavor_names[c->flavor], sync_names[sync],
                     (long long)fetched[k], k);
            if (o2 != o && (got[2 * k] != other[2 * k] || got[2 * k + 1] != -1))
                FAIL("%s/%s: derived get: element %d is %lld", flavor_names[c->flavor], sync_names[sync], 2 * k,
                     (long long)got[2 * k]);
        }
        memcpy(want_t, init_left, REGION);
        unsigned char in[REGION];
        fill(kd, in, n, c->rank, c->left, 1);
        for (int k = 0; k < 4; k++) {
            ((int64_t *)want_t)[2 * k + 1] = ((int64_t *)in)[2 * k];
            ((int64_t *)want_t)[2 * k] += ((int64_t *)in)[k];
        }
        check_target(c, sync, label, want_t);
        MPI_OK(MPI_Type_free(&vec));
        MPI_OK(MPI_Type_free(&idx));
        break;
    }
    default: break;
    }
}

static void make_window(ctx *c, enum flavor f, MPI_Comm comm)
{
    memset(c, 0, sizeof *c);
    c->comm = comm;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    c->right = (c->rank + 1) % c->size;
    c->left = (c->rank + c->size - 1) % c->size;
    c->flavor = f;
    c->disp_unit = f == F_CREATE ? 8 : 1;
    const MPI_Aint bytes = (MPI_Aint)c->size * REGION;
    switch (f) {
    case F_CREATE:
        c->mem = malloc((size_t)bytes);
        MPI_OK(MPI_Win_create(c->mem, bytes, 8, MPI_INFO_NULL, comm, &c->win));
        break;
    case F_ALLOCATE: MPI_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &c->mem, &c->win)); break;
    case F_DYNAMIC: {
        c->mem = malloc((size_t)bytes);
        MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &c->win));
        MPI_OK(MPI_Win_attach(c->win, c->mem, bytes));
        MPI_Aint mine;
        MPI_OK(MPI_Get_address(c->mem, &mine));
        c->addr = malloc(sizeof(MPI_Aint) * (size_t)c->size);
        MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, c->addr, 1, MPI_AINT, comm));
        break;
    }
    case F_SHARED: {
        MPI_OK(MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, comm, &c->mem, &c->win));
        /* Contiguous across ranks; every rank's part is reachable with plain loads and stores. */
        for (int q = 0; q < c->size; q++) {
            MPI_Aint qsize;
            int qunit;
            unsigned char *qbase;
            MPI_OK(MPI_Win_shared_query(c->win, q, &qsize, &qunit, &qbase));
            CHECK(qsize == bytes && qunit == 1, "shared_query of rank %d: size %lld, unit %d", q, (long long)qsize, qunit);
            CHECK(qbase == c->mem + (ptrdiff_t)(q - c->rank) * bytes, "rank %d's part is not contiguous with mine", q);
        }
        c->mem[0] = (unsigned char)(c->rank + 1);
        MPI_OK(MPI_Win_sync(c->win));
        MPI_OK(MPI_Barrier(comm));
        MPI_OK(MPI_Win_sync(c->win));
        const unsigned char *right_mem = c->mem + (ptrdiff_t)(c->right - c->rank) * bytes;
        CHECK(right_mem[0] == c->right + 1, "a store by rank %d is not seen here: %d", c->right, right_mem[0]);
        MPI_OK(MPI_Barrier(comm));
        break;
    }
    default: break;
    }
    MPI_Group g;
    MPI_OK(MPI_Win_get_group(c->win, &g));
    MPI_OK(MPI_Group_incl(g, 1, &c->left, &c->left_group));
    MPI_OK(MPI_Group_incl(g, 1, &c->right, &c->right_group));
    MPI_OK(MPI_Group_free(&g));
}

static void free_window(ctx *c)
{
    if (c->flavor == F_DYNAMIC) MPI_OK(MPI_Win_detach(c->win, c->mem));
    MPI_OK(MPI_Win_free(&c->win));
    if (c->flavor == F_CREATE || c->flavor == F_DYNAMIC) free(c->mem);
    free(c->addr);
    MPI_OK(MPI_Group_free(&c->left_group));
    MPI_OK(MPI_Group_free(&c->right_group));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "rma_matrix");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int cases = 0, serial = 0;
    for (int f = 0; f < N_FLAVORS; f++) {
        ctx c;
        make_window(&c, (enum flavor)f, f == F_SHARED ? node : MPI_COMM_WORLD);
        for (int s = 0; s < N_SYNCS; s++) {
            for (int op = 0; op < N_OPS; op++) {
                const int request_based = op == OP_RPUT || op == OP_RGET || op == OP_RACC || op == OP_RGET_ACC;
                if (request_based && !passive(s)) continue;
                if (op == OP_ACC || op == OP_GET_ACC) {
                    for (int a = 0; a < N_ACC; a++) run_case(&c, s, (enum op)op, &acc_cases[a], serial++), cases++;
                } else if (op == OP_RACC || op == OP_RGET_ACC) {
                    /* int64 sum (a UCX atomic), double min (compare-and-swap), long double sum
                     * (the accumulate mutex), 2int minloc (a pair) */
                    static const int r_cases[] = {0, 7, 9, 11};
                    for (int a = 0; a < 4; a++) run_case(&c, s, (enum op)op, &acc_cases[r_cases[a]], serial++), cases++;
                } else if (op == OP_FOP) {
                    static const int fop_cases[] = {0, 3, 4, 7, 9};  /* int64 sum, int bxor, int max, double min, long double sum */
                    for (int a = 0; a < 5; a++) run_case(&c, s, OP_FOP, &acc_cases[fop_cases[a]], serial++), cases++;
                } else if (op == OP_CAS) {
                    static const int cas_cases[] = {0, 3, 5, 6};  /* int64, int, short, unsigned char */
                    for (int a = 0; a < 4; a++) run_case(&c, s, OP_CAS, &acc_cases[cas_cases[a]], serial++), cases++;
                } else {
                    run_case(&c, s, (enum op)op, NULL, serial++), cases++;
                }
            }
        }
        free_window(&c);
    }
    MPI_OK(MPI_Comm_free(&node));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) printf("rma_matrix: %d cases, every check passed at np %d\n", cases, t_size);
    MPI_Finalize();
    return 0;
}
