/* Derived datatypes. Every constructor (contiguous, vector incl. negative
 * stride, hvector, indexed, hindexed, indexed_block, hindexed_block,
 * struct, resized incl. a negative lower bound, subarray in C and Fortran
 * order, dup) and nested types (struct of vectors of indexed; a resized
 * type with a negative lower bound inside a contiguous).
 * For each type the test knows its type map (byte offset and size of every
 * basic element) and:
 *   - checks Type_size / get_extent / get_true_extent / get_envelope
 *     (and get_contents for several);
 *   - sends 3 items with Send/Recv, Isend/Irecv, persistent requests and
 *     Sendrecv around a ring, received into a packed type-signature
 *     compatible layout, and the other way round (packed -> the type); every
 *     byte of the receive buffer is checked: elements carry a pattern, all
 *     other bytes must keep the sentinel;
 *   - Get_count / Get_elements, also with fewer basic elements than the
 *     receive type holds (count MPI_UNDEFINED);
 *   - Pack_size / Pack / Unpack round trip, MPI_PACKED over the wire;
 *   - Type_free while an Isend with the type is pending.
 * Works at any size, including 1 (the ring is then rank 0 -> rank 0). */
#include "common.h"

#define MAXE 256
#define SENT 0xA5
#define CNT 3

typedef struct {
    MPI_Aint off;
    int size; /* 1 char, 4 int, 8 double */
} elem;

typedef struct {
    const char *name;
    MPI_Datatype t;
    elem map[MAXE];
    int n;
    MPI_Aint lb, extent; /* expected */
    int combiner;
} tcase;

static int right, left;

static MPI_Datatype basic(int size)
{
    return size == 1 ? MPI_CHAR : size == 4 ? MPI_INT : MPI_DOUBLE;
}

static void add(tcase *c, MPI_Aint off, int size)
{
    CHECK(c->n < MAXE, "type map too long");
    c->map[c->n].off = off;
    c->map[c->n].size = size;
    c->n++;
}

/* map of count items of c, expanded */
static int expand(const tcase *c, int count, elem *out)
{
    int k = 0;
    for (int i = 0; i < count; i++)
        for (int j = 0; j < c->n; j++) {
            out[k].off = c->map[j].off + i * c->extent;
            out[k].size = c->map[j].size;
            k++;
        }
    return k;
}

/* a packed struct type holding the elements of e[0..k) in order */
static MPI_Datatype packed_type(const elem *e, int k, MPI_Aint *sz)
{
    int bl[MAXE * CNT];
    MPI_Aint d[MAXE * CNT], off = 0;
    MPI_Datatype ty[MAXE * CNT], t, r;
    for (int i = 0; i < k; i++) {
        bl[i] = 1;
        d[i] = off;
        ty[i] = basic(e[i].size);
        off += e[i].size;
    }
    MPI_OK(MPI_Type_create_struct(k, bl, d, ty, &t));
    MPI_OK(MPI_Type_create_resized(t, 0, off > 0 ? off : 1, &r));
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_commit(&r));
    *sz = off;
    return r;
}

/* A buffer covering the elements e[0..k), with margins; base points at offset 0 */
typedef struct {
    unsigned char *mem, *base;
    MPI_Aint lo, hi; /* covered offsets [lo, hi) relative to base */
} xbuf;

static void xb_alloc(xbuf *b, const elem *e, int k)
{
    MPI_Aint lo = 0, hi = 1;
    for (int i = 0; i < k; i++) {
        if (e[i].off < lo)
            lo = e[i].off;
        if (e[i].off + e[i].size > hi)
            hi = e[i].off + e[i].size;
    }
    lo -= 64;
    hi += 64;
    b->mem = malloc((size_t)(hi - lo));
    CHECK(b->mem, "out of memory");
    b->base = b->mem - lo;
    b->lo = lo;
    b->hi = hi;
    memset(b->mem, SENT, (size_t)(hi - lo));
}

static void xb_fill(xbuf *b, const elem *e, int k, uint32_t salt)
{
    for (int i = 0; i < k; i++)
        for (int j = 0; j < e[i].size; j++)
            b->base[e[i].off + j] = t_pat(salt, (uint32_t)i, 7, (size_t)j);
}

/* elements 0..got-1 carry the pattern, the rest of e and every other byte is sentinel */
static void xb_check(const xbuf *b, const elem *e, int k, int got, uint32_t salt, const char *what)
{
    unsigned char *mask = calloc((size_t)(b->hi - b->lo), 1);
    CHECK(mask, "out of memory");
    for (int i = 0; i < k; i++)
        for (int j = 0; j < e[i].size; j++) {
            MPI_Aint o = e[i].off + j;
            unsigned char exp = i < got ? t_pat(salt, (uint32_t)i, 7, (size_t)j) : SENT;
            mask[o - b->lo] = 1;
            if (b->base[o] != exp)
                FAIL("%s: element %d (offset %ld) byte %d: expected 0x%02x, got 0x%02x", what, i,
                     (long)e[i].off, j, exp, b->base[o]);
        }
    for (MPI_Aint o = b->lo; o < b->hi; o++)
        if (!mask[o - b->lo] && b->base[o] != SENT)
            FAIL("%s: gap byte at offset %ld was written (0x%02x)", what, (long)o, b->base[o]);
    free(mask);
}

/* one transfer of scount x st (map se) into rcount x rt (map re), mode:
 * 0 Send/Recv, 1 Isend/Irecv, 2 persistent (started twice), 3 Sendrecv */
static void transfer(MPI_Datatype st, int scount, const elem *se, int sk, MPI_Datatype rt,
                     int rcount, const elem *re, int rk, int mode, uint32_t salt, const char *what)
{
    xbuf sb, rb;
    MPI_Status stt;
    xb_alloc(&sb, se, sk);
    xb_alloc(&rb, re, rk);
    xb_fill(&sb, se, sk, salt + (uint32_t)t_rank);
    const int tag = 60 + mode;
    int rounds = mode == 2 ? 2 : 1;
    MPI_Request rq[2];
    if (mode == 2) {
        MPI_OK(MPI_Recv_init(rb.base, rcount, rt, left, tag, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Send_init(sb.base, scount, st, right, tag, MPI_COMM_WORLD, &rq[1]));
    }
    for (int round = 0; round < rounds; round++) {
        if (round > 0) {
            memset(rb.mem, SENT, (size_t)(rb.hi - rb.lo));
            xb_fill(&sb, se, sk, salt + 1000 + (uint32_t)t_rank);
        }
        switch (mode) {
        case 0:
            if (t_size == 1) {
                MPI_OK(MPI_Irecv(rb.base, rcount, rt, left, tag, MPI_COMM_WORLD, &rq[0]));
                MPI_OK(MPI_Send(sb.base, scount, st, right, tag, MPI_COMM_WORLD));
                MPI_OK(MPI_Wait(&rq[0], &stt));
            } else if (t_rank == 0) {
                MPI_OK(MPI_Send(sb.base, scount, st, right, tag, MPI_COMM_WORLD));
                MPI_OK(MPI_Recv(rb.base, rcount, rt, left, tag, MPI_COMM_WORLD, &stt));
            } else {
                MPI_OK(MPI_Recv(rb.base, rcount, rt, left, tag, MPI_COMM_WORLD, &stt));
                MPI_OK(MPI_Send(sb.base, scount, st, right, tag, MPI_COMM_WORLD));
            }
            break;
        case 1:
            MPI_OK(MPI_Irecv(rb.base, rcount, rt, left, tag, MPI_COMM_WORLD, &rq[0]));
            MPI_OK(MPI_Isend(sb.base, scount, st, right, tag, MPI_COMM_WORLD, &rq[1]));
            MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&rq[0], &stt));
            break;
        case 2:
            MPI_OK(MPI_Startall(2, rq));
            MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&rq[0], &stt));
            break;
        default:
            MPI_OK(MPI_Sendrecv(sb.base, scount, st, right, tag, rb.base, rcount, rt, left, tag,
                                MPI_COMM_WORLD, &stt));
            break;
        }
        /* how many elements arrive: the sender's element count */
        int got = sk < rk ? sk : rk, cnt = -2, ne = -2;
        char w[160];
        snprintf(w, sizeof w, "%s (mode %d, round %d)", what, mode, round);
        xb_check(&rb, re, rk, got, salt + (round ? 1000u : 0u) + (uint32_t)left, w);
        MPI_OK(MPI_Get_elements(&stt, rt, &ne));
        if (ne != got)
            FAIL("%s: Get_elements expected %d, got %d", w, got, ne);
        MPI_OK(MPI_Get_count(&stt, rt, &cnt));
        int per = rk / rcount;
        int ecnt = got % per == 0 ? got / per : MPI_UNDEFINED;
        if (cnt != ecnt)
            FAIL("%s: Get_count expected %d, got %d", w, ecnt, cnt);
        if (stt.MPI_SOURCE != left || stt.MPI_TAG != tag)
            FAIL("%s: status source %d tag %d, expected %d %d", w, stt.MPI_SOURCE, stt.MPI_TAG,
                 left, tag);
    }
    if (mode == 2) {
        MPI_OK(MPI_Request_free(&rq[0]));
        MPI_OK(MPI_Request_free(&rq[1]));
    }
    free(sb.mem);
    free(rb.mem);
}

/* Open MPI 4.1's Type_get_contents reads array_of_datatypes before writing
 * it (and crashes on garbage): start from MPI_DATATYPE_NULL everywhere. */
static void clear_types(MPI_Datatype *t, int n)
{
    for (int i = 0; i < n; i++)
        t[i] = MPI_DATATYPE_NULL;
}

static void check_props(tcase *c)
{
    int size = -1, ni = -1, na = -1, nt = -1, comb = -1;
    MPI_Aint lb, ext, tlb, text, exp_size = 0, mn = 0, mx = 0;
    for (int i = 0; i < c->n; i++) {
        exp_size += c->map[i].size;
        if (i == 0 || c->map[i].off < mn)
            mn = c->map[i].off;
        if (i == 0 || c->map[i].off + c->map[i].size > mx)
            mx = c->map[i].off + c->map[i].size;
    }
    MPI_OK(MPI_Type_size(c->t, &size));
    if (size != exp_size)
        FAIL("%s: Type_size expected %ld, got %d", c->name, (long)exp_size, size);
    MPI_OK(MPI_Type_get_extent(c->t, &lb, &ext));
    if (lb != c->lb || ext != c->extent)
        FAIL("%s: Type_get_extent expected lb %ld extent %ld, got %ld %ld", c->name, (long)c->lb,
             (long)c->extent, (long)lb, (long)ext);
    MPI_OK(MPI_Type_get_true_extent(c->t, &tlb, &text));
    if (tlb != mn || text != mx - mn)
        FAIL("%s: Type_get_true_extent expected lb %ld extent %ld, got %ld %ld", c->name, (long)mn,
             (long)(mx - mn), (long)tlb, (long)text);
    MPI_OK(MPI_Type_get_envelope(c->t, &ni, &na, &nt, &comb));
    if (comb != c->combiner)
        FAIL("%s: Type_get_envelope combiner expected %d, got %d", c->name, c->combiner, comb);
    /* get_contents must work with the sizes from get_envelope */
    {
        int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
        MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
        MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nt + 1));
        CHECK(ints && addrs && types, "out of memory");
        clear_types(types, nt + 1);
        MPI_OK(MPI_Type_get_contents(c->t, ni, na, nt, ints, addrs, types));
        for (int i = 0; i < nt; i++) {
            int a, b, d, cb;
            MPI_OK(MPI_Type_get_envelope(types[i], &a, &b, &d, &cb));
            if (cb != MPI_COMBINER_NAMED)
                MPI_OK(MPI_Type_free(&types[i]));
        }
        free(ints);
        free(addrs);
        free(types);
    }
}

static void run_case(tcase *c)
{
    elem se[MAXE * CNT], pe[MAXE * CNT];
    MPI_Aint psz;
    int k = expand(c, CNT, se);
    char w[128];
    MPI_OK(MPI_Type_commit(&c->t));
    check_props(c);
    /* the packed compatible layout */
    MPI_Datatype pt = packed_type(se, k, &psz);
    for (int i = 0, off = 0; i < k; i++) {
        pe[i].off = off;
        pe[i].size = se[i].size;
        off += se[i].size;
    }
    for (int mode = 0; mode < 4; mode++) {
        snprintf(w, sizeof w, "%s -> packed", c->name);
        transfer(c->t, CNT, se, k, pt, 1, pe, k, mode, 100u * (uint32_t)mode, w);
        snprintf(w, sizeof w, "packed -> %s", c->name);
        transfer(pt, 1, pe, k, c->t, CNT, se, k, mode, 100u * (uint32_t)mode + 50, w);
        snprintf(w, sizeof w, "%s -> %s", c->name, c->name);
        transfer(c->t, CNT, se, k, c->t, CNT, se, k, mode, 100u * (uint32_t)mode + 70, w);
    }
    /* partial: fewer basic elements than the receive type holds */
    if (c->n > 1) {
        int part = c->n + c->n / 2; /* 1.5 items */
        MPI_Aint psz2;
        MPI_Datatype p2 = packed_type(se, part, &psz2);
        elem pe2[MAXE * CNT];
        for (int i = 0; i < part; i++)
            pe2[i] = pe[i];
        snprintf(w, sizeof w, "partial packed -> %s", c->name);
        transfer(p2, 1, pe2, part, c->t, CNT, se, k, 1, 900, w);
        MPI_OK(MPI_Type_free(&p2));
    }
    /* Pack / Unpack round trip, and MPI_PACKED over the wire */
    {
        int psize = -1, pos = 0, upos = 0;
        xbuf a, b;
        MPI_OK(MPI_Pack_size(CNT, c->t, MPI_COMM_WORLD, &psize));
        if (psize < (int)psz)
            FAIL("%s: Pack_size %d smaller than the data (%ld)", c->name, psize, (long)psz);
        unsigned char *pk = malloc((size_t)psize + 16), *pk2 = malloc((size_t)psize + 16);
        CHECK(pk && pk2, "out of memory");
        xb_alloc(&a, se, k);
        xb_alloc(&b, se, k);
        xb_fill(&a, se, k, 4242u + (uint32_t)t_rank);
        MPI_OK(MPI_Pack(a.base, CNT, c->t, pk, psize, &pos, MPI_COMM_WORLD));
        if (pos <= 0 || pos > psize)
            FAIL("%s: Pack position %d (Pack_size %d)", c->name, pos, psize);
        MPI_OK(MPI_Unpack(pk, psize, &upos, b.base, CNT, c->t, MPI_COMM_WORLD));
        if (upos != pos)
            FAIL("%s: Unpack position %d, Pack position %d", c->name, upos, pos);
        snprintf(w, sizeof w, "%s Pack/Unpack", c->name);
        xb_check(&b, se, k, k, 4242u + (uint32_t)t_rank, w);
        /* over the wire as MPI_PACKED */
        MPI_Status stt;
        int cnt = -1;
        MPI_OK(MPI_Sendrecv(pk, pos, MPI_PACKED, right, 70, pk2, psize, MPI_PACKED, left, 70,
                            MPI_COMM_WORLD, &stt));
        MPI_OK(MPI_Get_count(&stt, MPI_PACKED, &cnt));
        CHECK_EQ_INT(cnt, pos, "bytes of the MPI_PACKED message");
        memset(b.mem, SENT, (size_t)(b.hi - b.lo));
        upos = 0;
        MPI_OK(MPI_Unpack(pk2, cnt, &upos, b.base, CNT, c->t, MPI_COMM_WORLD));
        snprintf(w, sizeof w, "%s MPI_PACKED from the left", c->name);
        xb_check(&b, se, k, k, 4242u + (uint32_t)left, w);
        free(a.mem);
        free(b.mem);
        free(pk);
        free(pk2);
    }
    MPI_OK(MPI_Type_free(&pt));
    MPI_OK(MPI_Type_free(&c->t));
    CHECK(c->t == MPI_DATATYPE_NULL, "%s: Type_free did not set MPI_DATATYPE_NULL", c->name);
}

static tcase *newcase(const char *name, int combiner)
{
    tcase *c = calloc(1, sizeof *c);
    CHECK(c, "out of memory");
    c->name = name;
    c->combiner = combiner;
    return c;
}

/* lb / extent from the map (no explicit bounds) */
static void natural_bounds(tcase *c)
{
    MPI_Aint mn = 0, mx = 0;
    for (int i = 0; i < c->n; i++) {
        if (i == 0 || c->map[i].off < mn)
            mn = c->map[i].off;
        if (i == 0 || c->map[i].off + c->map[i].size > mx)
            mx = c->map[i].off + c->map[i].size;
    }
    c->lb = mn;
    c->extent = mx - mn;
}

static void contents_checks(void)
{
    /* vector */
    MPI_Datatype v, s, sub, r;
    int ints[16], ni, na, nt, comb;
    MPI_Aint addrs[16];
    MPI_Datatype types[16];
    MPI_OK(MPI_Type_vector(3, 2, -4, MPI_INT, &v));
    MPI_OK(MPI_Type_get_envelope(v, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nt == 1,
          "vector envelope: %d %d %d %d", ni, na, nt, comb);
    clear_types(types, 16);
    MPI_OK(MPI_Type_get_contents(v, 16, 16, 16, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == -4 && types[0] == MPI_INT,
          "vector contents: %d %d %d", ints[0], ints[1], ints[2]);
    /* struct with the vector inside */
    int bl[2] = {2, 1};
    MPI_Aint d[2] = {8, 40};
    MPI_Datatype ty[2] = {MPI_DOUBLE, v};
    MPI_OK(MPI_Type_create_struct(2, bl, d, ty, &s));
    MPI_OK(MPI_Type_get_envelope(s, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nt == 2,
          "struct envelope: %d %d %d %d", ni, na, nt, comb);
    clear_types(types, 16);
    MPI_OK(MPI_Type_get_contents(s, 16, 16, 16, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 2 && ints[2] == 1 && addrs[0] == 8 && addrs[1] == 40 &&
              types[0] == MPI_DOUBLE,
          "struct contents: ints %d %d %d addrs %ld %ld", ints[0], ints[1], ints[2],
          (long)addrs[0], (long)addrs[1]);
    {
        /* the returned vector is equivalent to v */
        int a, b, e, cb, i2[4];
        MPI_Aint a2[1];
        MPI_Datatype t2[1];
        MPI_OK(MPI_Type_get_envelope(types[1], &a, &b, &e, &cb));
        CHECK(cb == MPI_COMBINER_VECTOR, "struct contents: type 1 combiner %d", cb);
        clear_types(t2, 1);
        MPI_OK(MPI_Type_get_contents(types[1], 4, 1, 1, i2, a2, t2));
        CHECK(i2[0] == 3 && i2[1] == 2 && i2[2] == -4, "nested vector contents");
        MPI_OK(MPI_Type_free(&types[1]));
    }
    /* subarray */
    int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 2};
    MPI_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &sub));
    MPI_OK(MPI_Type_get_envelope(sub, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && na == 0 && nt == 1,
          "subarray envelope: %d %d %d %d", ni, na, nt, comb);
    clear_types(types, 16);
    MPI_OK(MPI_Type_get_contents(sub, 16, 16, 16, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 4 && ints[2] == 5 && ints[3] == 2 && ints[4] == 3 &&
              ints[5] == 1 && ints[6] == 2 && ints[7] == MPI_ORDER_FORTRAN && types[0] == MPI_DOUBLE,
          "subarray contents");
    /* resized */
    MPI_OK(MPI_Type_create_resized(MPI_INT, -8, 32, &r));
    MPI_OK(MPI_Type_get_envelope(r, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_RESIZED && ni == 0 && na == 2 && nt == 1,
          "resized envelope: %d %d %d %d", ni, na, nt, comb);
    clear_types(types, 16);
    MPI_OK(MPI_Type_get_contents(r, 16, 16, 16, ints, addrs, types));
    CHECK(addrs[0] == -8 && addrs[1] == 32 && types[0] == MPI_INT, "resized contents %ld %ld",
          (long)addrs[0], (long)addrs[1]);
    /* predefined: named */
    MPI_OK(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nt == 0, "MPI_DOUBLE envelope");
    MPI_OK(MPI_Type_free(&v));
    MPI_OK(MPI_Type_free(&s));
    MPI_OK(MPI_Type_free(&sub));
    MPI_OK(MPI_Type_free(&r));
}

/* Type_free of a type while an Isend with it is pending */
static void free_while_pending(void)
{
    MPI_Datatype v;
    int sb[40], rb[40];
    MPI_Request rq[2];
    MPI_Status sts2[2];
    MPI_OK(MPI_Type_vector(5, 1, 3, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    for (int i = 0; i < 40; i++) {
        sb[i] = t_rank * 1000 + i;
        rb[i] = -1;
    }
    MPI_OK(MPI_Irecv(rb, 10, MPI_INT, left, 80, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Isend(sb, 2, v, right, 80, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Type_free(&v));
    CHECK(v == MPI_DATATYPE_NULL, "Type_free did not set MPI_DATATYPE_NULL");
    MPI_OK(MPI_Waitall(2, rq, sts2));
    /* vector(5,1,3) extent 13 ints: item 0 at 0,3,..12; item 1 at 13,16,..25 */
    for (int i = 0; i < 10; i++) {
        int e = left * 1000 + (i / 5) * 13 + (i % 5) * 3;
        if (rb[i] != e)
            FAIL("free while pending: element %d: expected %d, got %d", i, e, rb[i]);
    }
    for (int i = 10; i < 40; i++)
        CHECK(rb[i] == -1, "free while pending: element %d past the message written", i);
    /* and a receive with a freed type */
    MPI_OK(MPI_Type_vector(5, 1, 3, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    for (int i = 0; i < 40; i++)
        rb[i] = -1;
    MPI_OK(MPI_Irecv(rb, 2, v, left, 81, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Type_free(&v));
    MPI_OK(MPI_Isend(sb, 10, MPI_INT, right, 81, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, sts2));
    for (int i = 0; i < 40; i++) {
        int j = i % 13, item = i / 13;
        int e = (j % 3 == 0 && j / 3 < 5 && item < 2) ? left * 1000 + item * 5 + j / 3 : -1;
        if (rb[i] != e)
            FAIL("receive with a freed type: element %d: expected %d, got %d", i, e, rb[i]);
    }
}

/* MPI_INTEGER16, a 16-byte Fortran integer: its name, size and extent, and 3 of them around the
 * ring, every byte checked. */
static void integer16(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0, size = 0;
    MPI_Aint lb = -1, extent = 0;
    CHECK(MPI_INTEGER16 != MPI_DATATYPE_NULL, "MPI_INTEGER16 is MPI_DATATYPE_NULL");
    MPI_OK(MPI_Type_get_name(MPI_INTEGER16, name, &len));
    CHECK(strcmp(name, "MPI_INTEGER16") == 0 && len == 13, "MPI_INTEGER16 is named '%s' (%d)", name, len);
    MPI_OK(MPI_Type_size(MPI_INTEGER16, &size));
    MPI_OK(MPI_Type_get_extent(MPI_INTEGER16, &lb, &extent));
    CHECK(size == 16 && lb == 0 && extent == 16, "MPI_INTEGER16: size %d lb %ld extent %ld", size, (long)lb,
          (long)extent);
    unsigned char out[48], in[48];
    t_fill(out, sizeof out, 16, (uint32_t)t_rank, 0);
    memset(in, 0, sizeof in);
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(out, 3, MPI_INTEGER16, right, 16, in, 3, MPI_INTEGER16, left, 16, MPI_COMM_WORLD, &st));
    int n = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INTEGER16, &n));
    CHECK_EQ_INT(n, 3, "MPI_Get_count of MPI_INTEGER16");
    for (size_t i = 0; i < sizeof in; i++)
        CHECK(in[i] == t_pat(16, (uint32_t)left, 0, i), "MPI_INTEGER16 byte %zu", i);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "dtype");
    right = (t_rank + 1) % t_size;
    left = (t_rank + t_size - 1) % t_size;
    tcase *c;
    integer16();

    /* contiguous(5, INT) */
    c = newcase("contiguous", MPI_COMBINER_CONTIGUOUS);
    MPI_OK(MPI_Type_contiguous(5, MPI_INT, &c->t));
    for (int i = 0; i < 5; i++)
        add(c, 4 * i, 4);
    natural_bounds(c);
    run_case(c);
    free(c);

    /* vector(3, 2, 4, INT) */
    c = newcase("vector", MPI_COMBINER_VECTOR);
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &c->t));
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 2; j++)
            add(c, 4 * (4 * b + j), 4);
    natural_bounds(c);
    run_case(c);
    free(c);

    /* vector with a negative stride: vector(3, 1, -2, DOUBLE) */
    c = newcase("vector negative stride", MPI_COMBINER_VECTOR);
    MPI_OK(MPI_Type_vector(3, 1, -2, MPI_DOUBLE, &c->t));
    for (int b = 0; b < 3; b++)
        add(c, -16 * b, 8);
    natural_bounds(c); /* lb -32, extent 40 */
    run_case(c);
    free(c);

    /* hvector(3, 2, 20 bytes, INT) */
    c = newcase("hvector", MPI_COMBINER_HVECTOR);
    MPI_OK(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &c->t));
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 2; j++)
            add(c, 20 * b + 4 * j, 4);
    natural_bounds(c);
    run_case(c);
    free(c);

    /* indexed: blocks {2,1,3} at {5,0,9} ints (out of order) */
    c = newcase("indexed", MPI_COMBINER_INDEXED);
    {
        int bl[3] = {2, 1, 3}, dp[3] = {5, 0, 9};
        MPI_OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &c->t));
        for (int b = 0; b < 3; b++)
            for (int j = 0; j < bl[b]; j++)
                add(c, 4 * (dp[b] + j), 4);
    }
    natural_bounds(c);
    run_case(c);
    free(c);

    /* hindexed: blocks {1,2} of DOUBLE at {40, 8} bytes */
    c = newcase("hindexed", MPI_COMBINER_HINDEXED);
    {
        int bl[2] = {1, 2};
        MPI_Aint dp[2] = {40, 8};
        MPI_OK(MPI_Type_create_hindexed(2, bl, dp, MPI_DOUBLE, &c->t));
        for (int b = 0; b < 2; b++)
            for (int j = 0; j < bl[b]; j++)
                add(c, dp[b] + 8 * j, 8);
    }
    natural_bounds(c);
    run_case(c);
    free(c);

    /* indexed_block(3, 2, {4,0,8}) */
    c = newcase("indexed_block", MPI_COMBINER_INDEXED_BLOCK);
    {
        int dp[3] = {4, 0, 8};
        MPI_OK(MPI_Type_create_indexed_block(3, 2, dp, MPI_INT, &c->t));
        for (int b = 0; b < 3; b++)
            for (int j = 0; j < 2; j++)
                add(c, 4 * (dp[b] + j), 4);
    }
    natural_bounds(c);
    run_case(c);
    free(c);

    /* hindexed_block(2, 3 chars, {24, 0} bytes) */
    c = newcase("hindexed_block", MPI_COMBINER_HINDEXED_BLOCK);
    {
        MPI_Aint dp[2] = {24, 0};
        MPI_OK(MPI_Type_create_hindexed_block(2, 3, dp, MPI_CHAR, &c->t));
        for (int b = 0; b < 2; b++)
            for (int j = 0; j < 3; j++)
                add(c, dp[b] + j, 1);
    }
    natural_bounds(c);
    run_case(c);
    free(c);

    /* struct {2 int @0, double @8, 3 char @16}, resized to 24 for a fixed extent */
    {
        int bl[3] = {2, 1, 3};
        MPI_Aint dp[3] = {0, 8, 16};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, s;
        MPI_Aint lb, ext;
        MPI_OK(MPI_Type_create_struct(3, bl, dp, ty, &s));
        MPI_OK(MPI_Type_get_extent(s, &lb, &ext));
        /* ub 19, padded to the alignment of double (implementation's choice) */
        CHECK(lb == 0 && ext >= 19 && ext <= 24, "struct extent: lb %ld extent %ld", (long)lb,
              (long)ext);
        c = newcase("struct", MPI_COMBINER_STRUCT);
        MPI_OK(MPI_Type_dup(s, &c->t));
        c->combiner = MPI_COMBINER_DUP;
        add(c, 0, 4);
        add(c, 4, 4);
        add(c, 8, 8);
        for (int j = 0; j < 3; j++)
            add(c, 16 + j, 1);
        c->lb = 0;
        c->extent = ext;
        c->name = "dup of struct";
        run_case(c);
        free(c);
        c = newcase("struct resized to 24", MPI_COMBINER_RESIZED);
        MPI_OK(MPI_Type_create_resized(s, 0, 24, &c->t));
        add(c, 0, 4);
        add(c, 4, 4);
        add(c, 8, 8);
        for (int j = 0; j < 3; j++)
            add(c, 16 + j, 1);
        c->lb = 0;
        c->extent = 24;
        run_case(c);
        free(c);
        MPI_OK(MPI_Type_free(&s));
    }

    /* resized with a negative lower bound: contiguous(2, INT), lb -8, extent 16 */
    {
        MPI_Datatype base;
        MPI_OK(MPI_Type_contiguous(2, MPI_INT, &base));
        c = newcase("resized negative lb", MPI_COMBINER_RESIZED);
        MPI_OK(MPI_Type_create_resized(base, -8, 16, &c->t));
        MPI_OK(MPI_Type_free(&base)); /* the derived type stays valid */
        add(c, 0, 4);
        add(c, 4, 4);
        c->lb = -8;
        c->extent = 16;
        run_case(c);
        free(c);
    }

    /* subarray C order: 4x5 ints, 2x3 at (1,2) */
    c = newcase("subarray C", MPI_COMBINER_SUBARRAY);
    {
        int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 2};
        MPI_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &c->t));
        for (int i = 1; i < 3; i++)
            for (int j = 2; j < 5; j++)
                add(c, 4 * (i * 5 + j), 4);
        c->lb = 0;
        c->extent = 80;
    }
    run_case(c);
    free(c);

    /* subarray Fortran order: 4x5 doubles (first index fastest), 2x3 at (1,2) */
    c = newcase("subarray Fortran", MPI_COMBINER_SUBARRAY);
    {
        int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 2};
        MPI_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE,
                                        &c->t));
        for (int j = 2; j < 5; j++)
            for (int i = 1; i < 3; i++)
                add(c, 8 * (i + j * 4), 8);
        c->lb = 0;
        c->extent = 160;
    }
    run_case(c);
    free(c);

    /* 3-D subarray C order: 3x4x2 chars, 2x2x1 at (1,1,1) */
    c = newcase("subarray 3D", MPI_COMBINER_SUBARRAY);
    {
        int sizes[3] = {3, 4, 2}, subs[3] = {2, 2, 1}, starts[3] = {1, 1, 1};
        MPI_OK(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_CHAR, &c->t));
        for (int i = 1; i < 3; i++)
            for (int j = 1; j < 3; j++)
                add(c, (i * 4 + j) * 2 + 1, 1);
        c->lb = 0;
        c->extent = 24;
    }
    run_case(c);
    free(c);

    /* nested: struct of vectors of indexed */
    {
        MPI_Datatype ix, vec;
        int bl[2] = {1, 2}, dp[2] = {2, 0};
        MPI_OK(MPI_Type_indexed(2, bl, dp, MPI_INT, &ix)); /* ints 2, 0, 1; extent 12 */
        MPI_OK(MPI_Type_vector(2, 1, 2, ix, &vec));          /* items at 0 and 24; extent 36 */
        int sbl[2] = {1, 2};
        MPI_Aint sdp[2] = {4, 48};
        MPI_Datatype sty[2] = {vec, MPI_INT};
        c = newcase("struct of vector of indexed", MPI_COMBINER_STRUCT);
        MPI_OK(MPI_Type_create_struct(2, sbl, sdp, sty, &c->t));
        MPI_OK(MPI_Type_free(&ix));
        MPI_OK(MPI_Type_free(&vec));
        const int iord[3] = {2, 0, 1};
        for (int v = 0; v < 2; v++)
            for (int j = 0; j < 3; j++)
                add(c, 4 + 24 * v + 4 * iord[j], 4);
        add(c, 48, 4);
        add(c, 52, 4);
        c->lb = 4;
        c->extent = 52;
        run_case(c);
        free(c);
    }

    /* nested: resized with a negative lb inside a contiguous */
    {
        MPI_Datatype v, r;
        MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &v));   /* ints 0 and 3 */
        MPI_OK(MPI_Type_create_resized(v, -4, 24, &r)); /* lb -4, extent 24 */
        c = newcase("contiguous of resized negative lb", MPI_COMBINER_CONTIGUOUS);
        MPI_OK(MPI_Type_contiguous(3, r, &c->t));
        MPI_OK(MPI_Type_free(&v));
        MPI_OK(MPI_Type_free(&r));
        for (int i = 0; i < 3; i++) {
            add(c, 24 * i, 4);
            add(c, 24 * i + 12, 4);
        }
        c->lb = -4;
        c->extent = 72;
        run_case(c);
        free(c);
    }

    /* dup of a vector of doubles */
    {
        MPI_Datatype v;
        MPI_OK(MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &v));
        c = newcase("dup of vector", MPI_COMBINER_DUP);
        MPI_OK(MPI_Type_dup(v, &c->t));
        MPI_OK(MPI_Type_free(&v));
        for (int b = 0; b < 2; b++)
            for (int j = 0; j < 3; j++)
                add(c, 8 * (5 * b + j), 8);
        natural_bounds(c);
        run_case(c);
        free(c);
    }

    contents_checks();
    free_while_pending();
    t_done();
    return 0;
}
