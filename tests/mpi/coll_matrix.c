/* Collectives correctness matrix.
 *
 *   coll_matrix [COLLECTIVE...]     (names case-insensitive, e.g. Allreduce Gatherv)
 *
 * Every collective (Barrier, Bcast, Reduce, Allreduce, Allgather(v), Alltoall(v,w),
 * Gather(v), Scatter(v), Reduce_scatter(_block), Scan, Exscan) x message sizes
 * {0, 1, 7, 1023, 1024, 1025} elements x types {MPI_INT, MPI_DOUBLE, MPI_UINT8_T,
 * MPI_LONG_LONG} x ops {SUM, MAX, MIN, PROD, BXOR (integers)} where applicable, plus
 * MAXLOC/MINLOC on MPI_DOUBLE_INT and MPI_2INT; every root for sizes <= 7, roots 0 and
 * size-1 above; MPI_IN_PLACE wherever the standard allows it. 262147 elements (1 MiB + 3
 * ints) only for Bcast, Allreduce, Allgather, Alltoall on MPI_INT. All of it on
 * MPI_COMM_WORLD, on an odd/even MPI_Comm_split and on a reversed-key split.
 *
 * Data are small integers generated from (rank in the communicator, element index,
 * per-call salt), so every reference is computed locally and compared exactly (doubles
 * included). v-variants use uneven counts (some zero) and reversed, gapped
 * displacements; gaps must keep their sentinel and send buffers must stay untouched.
 *
 * coll_nonblocking.c (COLL_MODE 1) and coll_persistent.c (COLL_MODE 2) include this file
 * and reuse the engine with the MPI_I* and MPI_*_init variants. */
#include "common.h"
#include <strings.h>

#ifndef COLL_MODE
#define COLL_MODE 0 /* 0 blocking, 1 non-blocking, 2 persistent */
#endif

/* ------------------------------------------------------------------ types */
enum { K_INT, K_DOUBLE, K_U8, K_LL, K_DI, K_2I };
typedef struct { double v; int i; } di_t;
typedef struct { int v; int i; } ii_t;
typedef struct { const char *name; MPI_Datatype dt; int kind; size_t ext; } tdesc;
enum { O_SUM, O_MAX, O_MIN, O_PROD, O_BXOR, O_MAXLOC, O_MINLOC };
typedef struct { const char *name; MPI_Op op; int id; } odesc;
typedef struct { const char *name; MPI_Comm comm; int rank, size; } cinfo;

static tdesc T_INT, T_DOUBLE, T_U8, T_LL, T_DI, T_2I;
static odesc O_SUM_, O_MAX_, O_MIN_, O_PROD_, O_BXOR_, O_MAXLOC_, O_MINLOC_;

static int cm_ompi;
static void cm_init_tables(void)
{
    cm_ompi = t_is_openmpi();
    T_INT = (tdesc){"MPI_INT", MPI_INT, K_INT, sizeof(int)};
    T_DOUBLE = (tdesc){"MPI_DOUBLE", MPI_DOUBLE, K_DOUBLE, sizeof(double)};
    T_U8 = (tdesc){"MPI_UINT8_T", MPI_UINT8_T, K_U8, sizeof(uint8_t)};
    T_LL = (tdesc){"MPI_LONG_LONG", MPI_LONG_LONG, K_LL, sizeof(long long)};
    T_DI = (tdesc){"MPI_DOUBLE_INT", MPI_DOUBLE_INT, K_DI, sizeof(di_t)};
    T_2I = (tdesc){"MPI_2INT", MPI_2INT, K_2I, sizeof(ii_t)};
    O_SUM_ = (odesc){"MPI_SUM", MPI_SUM, O_SUM};
    O_MAX_ = (odesc){"MPI_MAX", MPI_MAX, O_MAX};
    O_MIN_ = (odesc){"MPI_MIN", MPI_MIN, O_MIN};
    O_PROD_ = (odesc){"MPI_PROD", MPI_PROD, O_PROD};
    O_BXOR_ = (odesc){"MPI_BXOR", MPI_BXOR, O_BXOR};
    O_MAXLOC_ = (odesc){"MPI_MAXLOC", MPI_MAXLOC, O_MAXLOC};
    O_MINLOC_ = (odesc){"MPI_MINLOC", MPI_MINLOC, O_MINLOC};
}

static long long geti(int kind, const void *p)
{
    switch (kind) {
    case K_INT: { int v; memcpy(&v, p, sizeof v); return v; }
    case K_U8: return *(const uint8_t *)p;
    case K_LL: { long long v; memcpy(&v, p, sizeof v); return v; }
    default: { double v; memcpy(&v, p, sizeof v); return (long long)v; }
    }
}

static void seti(int kind, void *p, long long v)
{
    switch (kind) {
    case K_INT: { int x = (int)v; memcpy(p, &x, sizeof x); break; }
    case K_U8: *(uint8_t *)p = (uint8_t)(v & 0xff); break;
    case K_LL: memcpy(p, &v, sizeof v); break;
    default: { double x = (double)v; memcpy(p, &x, sizeof x); break; }
    }
}

static uint32_t mix3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t x = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u ^ c * 0xC2B2AE3Du;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    x *= 0x297A2D39u;
    x ^= x >> 15;
    return x;
}

/* Open MPI 4.1.4's op/avx component computes MPI_SUM on MPI_UINT8_T with saturating
 * (and otherwise wrong) arithmetic once the sum wraps; under Open MPI the uint8 SUM data
 * are kept below 256/7 so no sum wraps. Its coll/self MPI_Alltoallw also ignores the
 * displacements on a communicator of size 1, so there they are 0 under Open MPI. */

/* Element idx of the data contributed by rank src (rank in the communicator). prod 1: only
 * 1 and 2, so a product over 7 ranks stays <= 128 and fits every type. prod 2: uint8 SUM
 * without wrap-around (Open MPI only). */
static void gen(int kind, int prod, int src, uint32_t idx, uint32_t salt, void *out)
{
    uint32_t h = mix3((uint32_t)src + 1u, idx, salt);
    if (kind == K_DI) {
        di_t d;
        memset(&d, 0, sizeof d);
        d.v = (double)(h % 4) - 1.0; /* many ties: the lowest index must win */
        d.i = (int)((h >> 8) % 50) - 10;
        memcpy(out, &d, sizeof d);
        return;
    }
    if (kind == K_2I) {
        ii_t d = {(int)(h % 4) - 1, (int)((h >> 8) % 50) - 10};
        memcpy(out, &d, sizeof d);
        return;
    }
    long long v;
    if (prod == 1)
        v = 1 + ((h >> 3) % 3 == 0);
    else if (prod == 2)
        v = h % 36;
    else if (kind == K_U8)
        v = h & 0xff;
    else
        v = (long long)(h & 0xfffff) - 0x80000;
    seti(kind, out, v);
}

static void sentinel(int kind, void *out)
{
    if (kind == K_DI) {
        di_t d;
        memset(&d, 0, sizeof d);
        d.v = -99.5;
        d.i = -99;
        memcpy(out, &d, sizeof d);
    } else if (kind == K_2I) {
        ii_t d = {-99, -99};
        memcpy(out, &d, sizeof d);
    } else {
        seti(kind, out, kind == K_U8 ? 0xA5 : -999999999LL);
    }
}

/* acc = acc op in */
static void combine(int kind, int op, const void *in, void *acc)
{
    if (kind == K_DI || kind == K_2I) {
        double av, bv;
        int ai, bi;
        if (kind == K_DI) {
            di_t a, b;
            memcpy(&a, acc, sizeof a);
            memcpy(&b, in, sizeof b);
            av = a.v; ai = a.i; bv = b.v; bi = b.i;
        } else {
            ii_t a, b;
            memcpy(&a, acc, sizeof a);
            memcpy(&b, in, sizeof b);
            av = a.v; ai = a.i; bv = b.v; bi = b.i;
        }
        if (bv == av) {
            if (bi < ai) ai = bi;
        } else if (op == O_MAXLOC ? bv > av : bv < av) {
            av = bv;
            ai = bi;
        }
        if (kind == K_DI) {
            di_t a;
            memset(&a, 0, sizeof a);
            a.v = av;
            a.i = ai;
            memcpy(acc, &a, sizeof a);
        } else {
            ii_t a = {(int)av, ai};
            memcpy(acc, &a, sizeof a);
        }
        return;
    }
    long long a = geti(kind, acc), b = geti(kind, in), r = 0;
    switch (op) {
    case O_SUM: r = a + b; break;
    case O_PROD: r = a * b; break;
    case O_MAX: r = a > b ? a : b; break;
    case O_MIN: r = a < b ? a : b; break;
    case O_BXOR: r = a ^ b; break;
    default: FAIL("bad op %d", op);
    }
    seti(kind, acc, r);
}

static int elem_eq(int kind, const void *a, const void *b)
{
    if (kind == K_DI) {
        di_t x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x.v == y.v && x.i == y.i;
    }
    if (kind == K_2I) {
        ii_t x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x.v == y.v && x.i == y.i;
    }
    if (kind == K_DOUBLE) {
        double x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x == y;
    }
    return geti(kind, a) == geti(kind, b);
}

static const char *elem_str(int kind, const void *a, char *s, size_t n)
{
    if (kind == K_DI) {
        di_t x;
        memcpy(&x, a, sizeof x);
        snprintf(s, n, "(%.17g,%d)", x.v, x.i);
    } else if (kind == K_2I) {
        ii_t x;
        memcpy(&x, a, sizeof x);
        snprintf(s, n, "(%d,%d)", x.v, x.i);
    } else if (kind == K_DOUBLE) {
        double x;
        memcpy(&x, a, sizeof x);
        snprintf(s, n, "%.17g", x);
    } else {
        snprintf(s, n, "%lld", geti(kind, a));
    }
    return s;
}

/* ------------------------------------------------------------ collectives */
enum {
    C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER, C_ALLGATHERV, C_ALLTOALL,
    C_ALLTOALLV, C_ALLTOALLW, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV,
    C_REDUCE_SCATTER, C_REDUCE_SCATTER_BLOCK, C_SCAN, C_EXSCAN, NCOLL
};
static const char *const coll_names[NCOLL] = {
    "Barrier", "Bcast", "Reduce", "Allreduce", "Allgather", "Allgatherv", "Alltoall",
    "Alltoallv", "Alltoallw", "Gather", "Gatherv", "Scatter", "Scatterv",
    "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan"};
static int coll_enabled[NCOLL];

static int is_red(int c)
{
    return c == C_REDUCE || c == C_ALLREDUCE || c == C_REDUCE_SCATTER ||
           c == C_REDUCE_SCATTER_BLOCK || c == C_SCAN || c == C_EXSCAN;
}
static int is_rooted(int c)
{
    return c == C_BCAST || c == C_REDUCE || c == C_GATHER || c == C_GATHERV ||
           c == C_SCATTER || c == C_SCATTERV;
}
static int has_inplace(int c) { return c != C_BARRIER && c != C_BCAST; }

/* Uneven counts, zero for some ranks (all zero when n == 0). */
static int vcnt(int n, int j)
{
    if (n == 0) return 0;
    return j % 3 == 0 ? n : j % 3 == 1 ? n / 2 : n + 1;
}
/* Open MPI 4.1.4's libnbc MPI_Ialltoallv with MPI_IN_PLACE delivers wrong blocks when
 * some counts are zero (n 1025): under Open MPI the non-blocking in-place variants get no
 * zero counts. */
static int cm_a2a_nozero_inplace = 0;

/* Alltoallv count from s to d; symmetric (needed by MPI_IN_PLACE) when sym. */
static int a2acnt(int n, int s, int d, int sym)
{
    if (n == 0) return 0;
    int k = (sym ? s + d : s + 2 * d) % 4;
    if (k == 3 && sym && cm_a2a_nozero_inplace) return n + 2;
    return k == 3 ? 0 : n + k - 1;
}
/* Blocks in reverse rank order, one gap element before each block and at the end. */
static size_t gaprev(const int *cnt, int *displ, int p)
{
    size_t pos = 1;
    for (int j = p - 1; j >= 0; j--) {
        displ[j] = (int)pos;
        pos += (size_t)cnt[j] + 1;
    }
    return pos;
}

typedef struct {
    int coll, n, root, inplace, here_inplace, prod, p, r, no_lead_gap;
    const cinfo *c;
    const tdesc *t;
    const odesc *o;
    uint32_t salt;
    char *sbuf, *rbuf, *shadow;
    size_t slen, rlen;
    int *sc, *sd, *rc, *rd, *swd, *rwd;
    MPI_Datatype *st, *rt;
    const void *sarg;
    void *rarg;
    MPI_Request req;
    char ctx[256];
} tc_t;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) FAIL("out of memory (%zu bytes)", n);
    return p;
}

#define EL(buf, i) ((buf) + (size_t)(i) * x->t->ext)

static void tc_alloc(tc_t *x, int coll, const cinfo *c, const tdesc *t, const odesc *o,
                     int n, int root, int inplace)
{
    memset(x, 0, sizeof *x);
    x->coll = coll;
    x->c = c;
    x->t = t;
    x->o = o;
    x->n = n;
    x->root = is_rooted(coll) ? root : -1;
    x->inplace = inplace;
    x->p = c->size;
    x->r = c->rank;
    x->prod = o && o->id == O_PROD ? 1 : (o && o->id == O_SUM && t->kind == K_U8 && cm_ompi) ? 2 : 0;
    x->req = MPI_REQUEST_NULL;
    int p = x->p, r = x->r;
    x->here_inplace = inplace && (!is_rooted(coll) || r == root);
    x->sc = calloc((size_t)p, sizeof(int));
    x->sd = calloc((size_t)p, sizeof(int));
    x->rc = calloc((size_t)p, sizeof(int));
    x->rd = calloc((size_t)p, sizeof(int));
    x->swd = calloc((size_t)p, sizeof(int));
    x->rwd = calloc((size_t)p, sizeof(int));
    x->st = calloc((size_t)p, sizeof(MPI_Datatype));
    x->rt = calloc((size_t)p, sizeof(MPI_Datatype));
    size_t tot = 0;
    switch (coll) {
    case C_BARRIER: break;
    case C_BCAST: x->rlen = (size_t)n; break;
    case C_REDUCE: case C_ALLREDUCE: case C_SCAN: case C_EXSCAN:
        x->slen = x->rlen = (size_t)n;
        break;
    case C_REDUCE_SCATTER: case C_REDUCE_SCATTER_BLOCK:
        for (int j = 0; j < p; j++) {
            x->rc[j] = coll == C_REDUCE_SCATTER ? vcnt(n, j) : n;
            x->rd[j] = (int)tot; /* offset of rank j's block in the full vector */
            tot += (size_t)x->rc[j];
        }
        x->slen = tot;
        x->rlen = inplace ? tot : (size_t)x->rc[r];
        break;
    case C_ALLGATHER: case C_GATHER:
        x->slen = (size_t)n;
        x->rlen = (size_t)p * (size_t)n;
        break;
    case C_ALLGATHERV: case C_GATHERV:
        for (int j = 0; j < p; j++) x->rc[j] = vcnt(n, j);
        x->rlen = gaprev(x->rc, x->rd, p);
        x->slen = (size_t)x->rc[r];
        break;
    case C_SCATTER:
        x->slen = (size_t)p * (size_t)n;
        x->rlen = (size_t)n;
        break;
    case C_SCATTERV:
        for (int j = 0; j < p; j++) x->sc[j] = vcnt(n, j);
        x->slen = gaprev(x->sc, x->sd, p);
        x->rlen = (size_t)x->sc[r];
        break;
    case C_ALLTOALL:
        x->slen = x->rlen = (size_t)p * (size_t)n;
        break;
    case C_ALLTOALLV: case C_ALLTOALLW:
        for (int j = 0; j < p; j++) {
            x->sc[j] = a2acnt(n, r, j, inplace);
            x->rc[j] = a2acnt(n, j, r, inplace);
        }
        x->slen = gaprev(x->sc, x->sd, p);
        x->rlen = gaprev(x->rc, x->rd, p);
        if (coll == C_ALLTOALLW && p == 1 && cm_ompi) {
            x->sd[0] = x->rd[0] = 0; /* Open MPI coll/self ignores the displacements */
            x->no_lead_gap = 1;
        }
        for (int j = 0; j < p; j++) {
            x->swd[j] = x->sd[j] * (int)t->ext;
            x->rwd[j] = x->rd[j] * (int)t->ext;
            x->st[j] = x->rt[j] = t->dt;
        }
        break;
    }
    x->sbuf = xmalloc(x->slen * t->ext);
    x->shadow = xmalloc(x->slen * t->ext);
    x->rbuf = xmalloc(x->rlen * t->ext);
    int isroot = r == root;
    if (coll == C_SCATTER || coll == C_SCATTERV) {
        x->sarg = isroot ? x->sbuf : NULL;
        x->rarg = x->here_inplace ? MPI_IN_PLACE : x->rbuf;
    } else {
        x->sarg = x->here_inplace ? MPI_IN_PLACE : x->sbuf;
        x->rarg = (is_rooted(coll) && coll != C_BCAST && !isroot) ? NULL : x->rbuf;
    }
    char rootstr[16] = "-";
    if (x->root >= 0) snprintf(rootstr, sizeof rootstr, "%d", x->root);
    snprintf(x->ctx, sizeof x->ctx, "%s%s comm=%s[rank %d of %d] type=%s op=%s n=%d root=%s in_place=%d",
             COLL_MODE == 1 ? "I" : "", coll_names[coll], c->name, r, p, t->name,
             o ? o->name : "-", n, rootstr, inplace);
}

static void tc_free(tc_t *x)
{
    free(x->sbuf); free(x->shadow); free(x->rbuf);
    free(x->sc); free(x->sd); free(x->rc); free(x->rd); free(x->swd); free(x->rwd);
    free(x->st); free(x->rt);
}

static void G(const tc_t *x, int src, uint32_t idx, void *out)
{
    gen(x->t->kind, x->prod, src, idx, x->salt, out);
}

static void tc_fill(tc_t *x, uint32_t salt)
{
    int p = x->p, r = x->r, n = x->n;
    x->salt = salt;
    for (size_t k = 0; k < x->slen; k++) sentinel(x->t->kind, EL(x->sbuf, k));
    for (size_t k = 0; k < x->rlen; k++) sentinel(x->t->kind, EL(x->rbuf, k));
    switch (x->coll) {
    case C_BARRIER: break;
    case C_BCAST:
        if (r == x->root)
            for (int i = 0; i < n; i++) G(x, r, (uint32_t)i, EL(x->rbuf, i));
        break;
    case C_REDUCE: case C_ALLREDUCE: case C_SCAN: case C_EXSCAN:
    case C_REDUCE_SCATTER: case C_REDUCE_SCATTER_BLOCK:
        for (size_t k = 0; k < x->slen; k++) G(x, r, (uint32_t)k, EL(x->sbuf, k));
        if (x->here_inplace)
            for (size_t k = 0; k < x->slen; k++) G(x, r, (uint32_t)k, EL(x->rbuf, k));
        break;
    case C_ALLGATHER: case C_GATHER:
        for (int i = 0; i < n; i++) G(x, r, (uint32_t)i, EL(x->sbuf, i));
        if (x->here_inplace)
            for (int i = 0; i < n; i++) G(x, r, (uint32_t)i, EL(x->rbuf, (size_t)r * n + i));
        break;
    case C_ALLGATHERV: case C_GATHERV:
        for (int i = 0; i < x->rc[r]; i++) G(x, r, (uint32_t)i, EL(x->sbuf, i));
        if (x->here_inplace)
            for (int i = 0; i < x->rc[r]; i++) G(x, r, (uint32_t)i, EL(x->rbuf, x->rd[r] + i));
        break;
    case C_SCATTER: case C_SCATTERV:
        if (r == x->root)
            for (size_t k = 0; k < x->slen; k++) G(x, r, (uint32_t)k, EL(x->sbuf, k));
        break;
    case C_ALLTOALL:
        for (size_t k = 0; k < x->slen; k++) G(x, r, (uint32_t)k, EL(x->sbuf, k));
        if (x->inplace) memcpy(x->rbuf, x->sbuf, x->rlen * x->t->ext);
        break;
    case C_ALLTOALLV: case C_ALLTOALLW:
        for (int j = 0; j < p; j++)
            for (int i = 0; i < x->sc[j]; i++) {
                G(x, r, ((uint32_t)j << 20) | (uint32_t)i, EL(x->sbuf, x->sd[j] + i));
                if (x->inplace) G(x, r, ((uint32_t)j << 20) | (uint32_t)i, EL(x->rbuf, x->rd[j] + i));
            }
        break;
    }
    memcpy(x->shadow, x->sbuf, x->slen * x->t->ext);
}

static void tc_bad(const tc_t *x, const char *what, size_t idx, const void *exp, const void *got)
{
    char e[64], g[64];
    FAIL("%s salt=%u: %s index %zu: expected %s, got %s", x->ctx, (unsigned)x->salt, what, idx,
         elem_str(x->t->kind, exp, e, sizeof e), elem_str(x->t->kind, got, g, sizeof g));
}

static void expect_gen(const tc_t *x, const char *buf, size_t pos, int src, uint32_t idx, const char *what)
{
    char e[32];
    G(x, src, idx, e);
    if (!elem_eq(x->t->kind, EL(buf, pos), e)) tc_bad(x, what, pos, e, EL(buf, pos));
}

static void expect_sent(const tc_t *x, const char *buf, size_t pos, const char *what)
{
    char e[32];
    sentinel(x->t->kind, e);
    if (!elem_eq(x->t->kind, EL(buf, pos), e)) tc_bad(x, what, pos, e, EL(buf, pos));
}

/* Reduction over ranks lo..hi (in rank order) of element idx. */
static void expect_red(const tc_t *x, const char *buf, size_t pos, int lo, int hi, uint32_t idx)
{
    char acc[32], v[32];
    G(x, lo, idx, acc);
    for (int s = lo + 1; s <= hi; s++) {
        G(x, s, idx, v);
        combine(x->t->kind, x->o->id, v, acc);
    }
    if (!elem_eq(x->t->kind, EL(buf, pos), acc)) tc_bad(x, "result", pos, acc, EL(buf, pos));
}

static void tc_check(const tc_t *x)
{
    int p = x->p, r = x->r, n = x->n, isroot = r == x->root;
    /* Send buffers are never written. */
    if (x->slen && memcmp(x->shadow, x->sbuf, x->slen * x->t->ext) != 0)
        for (size_t k = 0; k < x->slen; k++)
            if (memcmp(EL(x->shadow, k), EL(x->sbuf, k), x->t->ext) != 0)
                tc_bad(x, "send buffer modified", k, EL(x->shadow, k), EL(x->sbuf, k));
    switch (x->coll) {
    case C_BARRIER: break;
    case C_BCAST:
        for (int i = 0; i < n; i++) expect_gen(x, x->rbuf, (size_t)i, x->root, (uint32_t)i, "bcast data");
        break;
    case C_REDUCE: case C_ALLREDUCE:
        if (x->coll == C_REDUCE && !isroot) break;
        for (int i = 0; i < n; i++) expect_red(x, x->rbuf, (size_t)i, 0, p - 1, (uint32_t)i);
        break;
    case C_SCAN:
        for (int i = 0; i < n; i++) expect_red(x, x->rbuf, (size_t)i, 0, r, (uint32_t)i);
        break;
    case C_EXSCAN:
        if (r > 0)
            for (int i = 0; i < n; i++) expect_red(x, x->rbuf, (size_t)i, 0, r - 1, (uint32_t)i);
        break;
    case C_REDUCE_SCATTER: case C_REDUCE_SCATTER_BLOCK:
        for (int i = 0; i < x->rc[r]; i++)
            expect_red(x, x->rbuf, (size_t)i, 0, p - 1, (uint32_t)(x->rd[r] + i));
        break;
    case C_ALLGATHER: case C_GATHER:
        if (x->coll == C_GATHER && !isroot) break;
        for (int j = 0; j < p; j++)
            for (int i = 0; i < n; i++) expect_gen(x, x->rbuf, (size_t)j * n + i, j, (uint32_t)i, "gathered block");
        break;
    case C_ALLGATHERV: case C_GATHERV:
        if (x->coll == C_GATHERV && !isroot) break;
        expect_sent(x, x->rbuf, 0, "gap");
        for (int j = 0; j < p; j++) {
            for (int i = 0; i < x->rc[j]; i++) expect_gen(x, x->rbuf, (size_t)x->rd[j] + i, j, (uint32_t)i, "gathered block");
            expect_sent(x, x->rbuf, (size_t)x->rd[j] + x->rc[j], "gap");
        }
        break;
    case C_SCATTER:
        if (!x->here_inplace)
            for (int i = 0; i < n; i++) expect_gen(x, x->rbuf, (size_t)i, x->root, (uint32_t)(r * n + i), "scattered block");
        break;
    case C_SCATTERV:
        if (!x->here_inplace)
            for (int i = 0; i < x->sc[r]; i++) expect_gen(x, x->rbuf, (size_t)i, x->root, (uint32_t)(x->sd[r] + i), "scattered block");
        break;
    case C_ALLTOALL:
        for (int j = 0; j < p; j++)
            for (int i = 0; i < n; i++) expect_gen(x, x->rbuf, (size_t)j * n + i, j, (uint32_t)(r * n + i), "block");
        break;
    case C_ALLTOALLV: case C_ALLTOALLW:
        if (!x->no_lead_gap) expect_sent(x, x->rbuf, 0, "gap");
        for (int j = 0; j < p; j++) {
            for (int i = 0; i < x->rc[j]; i++)
                expect_gen(x, x->rbuf, (size_t)x->rd[j] + i, j, ((uint32_t)r << 20) | (uint32_t)i, "block");
            expect_sent(x, x->rbuf, (size_t)x->rd[j] + x->rc[j], "gap");
        }
        break;
    }
}

#if COLL_MODE == 0
#define COLL(B, b, ...) MPI_OK(MPI_##B(__VA_ARGS__))
#elif COLL_MODE == 1
#define COLL(B, b, ...) MPI_OK(MPI_I##b(__VA_ARGS__, &x->req))
#else
#define COLL(B, b, ...) MPI_OK(MPI_##B##_init(__VA_ARGS__, MPI_INFO_NULL, &x->req))
#endif

/* Blocking: runs the collective. Non-blocking: starts it. Persistent: creates it. */
static void tc_post(tc_t *x)
{
    MPI_Comm cm = x->c->comm;
    MPI_Datatype dt = x->t->dt;
    MPI_Op op = x->o ? x->o->op : MPI_OP_NULL;
    int n = x->n, root = x->root, r = x->r, isroot = r == root;
    const void *sa = x->sarg;
    void *ra = x->rarg;
    (void)op;
    switch (x->coll) {
    case C_BARRIER: COLL(Barrier, barrier, cm); break;
    case C_BCAST: COLL(Bcast, bcast, x->rbuf, n, dt, root, cm); break;
    case C_REDUCE: COLL(Reduce, reduce, sa, ra, n, dt, op, root, cm); break;
    case C_ALLREDUCE: COLL(Allreduce, allreduce, sa, ra, n, dt, op, cm); break;
    case C_SCAN: COLL(Scan, scan, sa, ra, n, dt, op, cm); break;
    case C_EXSCAN: COLL(Exscan, exscan, sa, ra, n, dt, op, cm); break;
    case C_REDUCE_SCATTER: COLL(Reduce_scatter, reduce_scatter, sa, ra, x->rc, dt, op, cm); break;
    case C_REDUCE_SCATTER_BLOCK:
        COLL(Reduce_scatter_block, reduce_scatter_block, sa, ra, n, dt, op, cm);
        break;
    case C_ALLGATHER: COLL(Allgather, allgather, sa, n, dt, ra, n, dt, cm); break;
    case C_ALLGATHERV: COLL(Allgatherv, allgatherv, sa, x->rc[r], dt, ra, x->rc, x->rd, dt, cm); break;
    case C_GATHER: COLL(Gather, gather, sa, n, dt, ra, n, dt, root, cm); break;
    case C_GATHERV:
        COLL(Gatherv, gatherv, sa, x->rc[r], dt, ra, isroot ? x->rc : NULL, isroot ? x->rd : NULL, dt, root, cm);
        break;
    case C_SCATTER: COLL(Scatter, scatter, sa, n, dt, ra, n, dt, root, cm); break;
    case C_SCATTERV:
        COLL(Scatterv, scatterv, sa, isroot ? x->sc : NULL, isroot ? x->sd : NULL, dt, ra, x->sc[r], dt, root, cm);
        break;
    case C_ALLTOALL: COLL(Alltoall, alltoall, sa, n, dt, ra, n, dt, cm); break;
    case C_ALLTOALLV: COLL(Alltoallv, alltoallv, sa, x->sc, x->sd, dt, ra, x->rc, x->rd, dt, cm); break;
    case C_ALLTOALLW: COLL(Alltoallw, alltoallw, sa, x->sc, x->swd, x->st, ra, x->rc, x->rwd, x->rt, cm); break;
    }
}

static uint32_t cm_salt_counter = 1;
static uint32_t next_salt(void) { return cm_salt_counter++; }
static long cm_ncases = 0;

/* Parses the collective filter; returns 0 on an unknown name. */
static int cm_parse_filter(int argc, char **argv)
{
    int any = 0;
    for (int a = 1; a < argc; a++) {
        const char *s = argv[a];
        int found = 0;
        for (int c = 0; c < NCOLL; c++) {
            if (strcasecmp(s, coll_names[c]) == 0 || ((s[0] == 'I' || s[0] == 'i') && strcasecmp(s + 1, coll_names[c]) == 0)) {
                coll_enabled[c] = 1;
                found = any = 1;
            }
        }
        if (!found) {
            if (t_rank == 0) {
                fprintf(stderr, "%s: unknown collective '%s'; known:", t_name, s);
                for (int c = 0; c < NCOLL; c++) fprintf(stderr, " %s", coll_names[c]);
                fputc('\n', stderr);
            }
            return 0;
        }
    }
    if (!any)
        for (int c = 0; c < NCOLL; c++) coll_enabled[c] = 1;
    return 1;
}

/* Communicators: world, odd/even split, reversed-key split. */
static int cm_make_comms(cinfo *cs)
{
    cs[0] = (cinfo){"world", MPI_COMM_WORLD, 0, 0};
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &cs[1].comm));
    cs[1].name = t_rank % 2 ? "split_odd" : "split_even";
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, t_size - t_rank, &cs[2].comm));
    cs[2].name = "split_reversed";
    for (int i = 0; i < 3; i++) {
        MPI_Comm_rank(cs[i].comm, &cs[i].rank);
        MPI_Comm_size(cs[i].comm, &cs[i].size);
    }
    CHECK(cs[2].rank == t_size - 1 - t_rank, "reversed split rank %d", cs[2].rank);
    return 3;
}

static void cm_free_comms(cinfo *cs, int nc)
{
    for (int i = 1; i < nc; i++) MPI_Comm_free(&cs[i].comm);
}

/* Enumerates the matrix on one communicator, calling run(coll, c, t, o, n, root, inplace).
 * sizes/types/ops are given by the caller so the non-blocking and persistent variants can
 * run a smaller matrix. big: the 262147-element subset (MPI_INT, SUM). */
typedef void (*cm_run_fn)(int coll, const cinfo *c, const tdesc *t, const odesc *o, int n, int root, int inplace);

static inline void cm_enumerate(const cinfo *c, const int *sizes, int nsizes, const tdesc *const *types, int ntypes,
                         const odesc *const *ops, int nops, int with_loc, int big, int all_roots_max, cm_run_fn run)
{
    int p = c->size;
    for (int si = 0; si < nsizes; si++) {
        int n = sizes[si];
        int roots[64], nroots = 0;
        if (n <= all_roots_max) {
            for (int q = 0; q < p; q++) roots[nroots++] = q;
        } else {
            roots[nroots++] = 0;
            if (p > 1) roots[nroots++] = p - 1;
        }
        for (int ti = 0; ti < ntypes + (with_loc ? 2 : 0); ti++) {
            const tdesc *t = ti < ntypes ? types[ti] : ti == ntypes ? &T_DI : &T_2I;
            int loc = ti >= ntypes;
            for (int coll = 0; coll < NCOLL; coll++) {
                if (!coll_enabled[coll]) continue;
                if (loc && !is_red(coll)) continue;
                if (coll == C_BARRIER) {
                    if (si == 0 && ti == 0)
                        for (int k = 0; k < 3; k++) run(coll, c, t, NULL, 0, 0, 0);
                    continue;
                }
                int nr = is_rooted(coll) ? nroots : 1;
                for (int ri = 0; ri < nr; ri++)
                    for (int ip = 0; ip <= has_inplace(coll); ip++) {
                        if (!is_red(coll)) {
                            run(coll, c, t, NULL, n, roots[ri], ip);
                            continue;
                        }
                        if (loc) {
                            run(coll, c, t, &O_MAXLOC_, n, roots[ri], ip);
                            run(coll, c, t, &O_MINLOC_, n, roots[ri], ip);
                            continue;
                        }
                        for (int oi = 0; oi < nops; oi++) {
                            if (ops[oi]->id == O_BXOR && t->kind == K_DOUBLE) continue;
                            run(coll, c, t, ops[oi], n, roots[ri], ip);
                        }
                    }
            }
        }
    }
    if (big) {
        const int n = 262147;
        if (coll_enabled[C_BCAST]) {
            run(C_BCAST, c, &T_INT, NULL, n, 0, 0);
            if (p > 1) run(C_BCAST, c, &T_INT, NULL, n, p - 1, 0);
        }
        for (int ip = 0; ip <= 1; ip++) {
            if (coll_enabled[C_ALLREDUCE]) run(C_ALLREDUCE, c, &T_INT, &O_SUM_, n, 0, ip);
            if (coll_enabled[C_ALLGATHER]) run(C_ALLGATHER, c, &T_INT, NULL, n, 0, ip);
            if (coll_enabled[C_ALLTOALL]) run(C_ALLTOALL, c, &T_INT, NULL, n, 0, ip);
        }
    }
}

#if COLL_MODE == 0
static void run_blocking(int coll, const cinfo *c, const tdesc *t, const odesc *o, int n, int root, int inplace)
{
    tc_t x;
    tc_alloc(&x, coll, c, t, o, n, root, inplace);
    tc_fill(&x, next_salt());
    tc_post(&x);
    tc_check(&x);
    tc_free(&x);
    cm_ncases++;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coll_matrix");
    cm_init_tables();
    if (!cm_parse_filter(argc, argv)) {
        MPI_Finalize();
        return 2;
    }
    if (cm_ompi && t_rank == 0)
        printf("coll_matrix: Open MPI: uint8 SUM data kept small, Alltoallw displacements 0 at size 1 (known bugs)\n");
    cinfo cs[3];
    int nc = cm_make_comms(cs);
    static const int sizes[] = {0, 1, 7, 1023, 1024, 1025};
    const tdesc *types[] = {&T_INT, &T_DOUBLE, &T_U8, &T_LL};
    const odesc *ops[] = {&O_SUM_, &O_MAX_, &O_MIN_, &O_PROD_, &O_BXOR_};
    double t0 = MPI_Wtime();
    for (int i = 0; i < nc; i++) {
        double t1 = MPI_Wtime();
        cm_salt_counter = (uint32_t)(i + 1) << 20; /* same sequence on every rank of cs[i] */
        cm_enumerate(&cs[i], sizes, 6, types, 4, ops, 5, 1, 1, 7, run_blocking);
        MPI_Barrier(MPI_COMM_WORLD);
        if (t_rank == 0)
            printf("coll_matrix: %s done (%.2f s)\n", cs[i].name, MPI_Wtime() - t1);
    }
    if (t_rank == 0)
        printf("coll_matrix: %ld cases on rank 0 in %.2f s\n", cm_ncases, MPI_Wtime() - t0);
    cm_free_comms(cs, nc);
    t_done();
    return 0;
}
#endif
