/*
 * bench_rma.c - windows, OSU's synchronisation loops and data checks for the
 * one-sided tests.
 */
#include "bench_rma.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_DISP 20

void bench_rma_check(int rc, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, rank = -1;
    if (rc == MPI_SUCCESS)
        return;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof(msg), "error %d", rc);
    fprintf(stderr, "rank %d: %s failed: %s\n", rank, call, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(call) bench_rma_check((call), #call)

static int peer_of(const bench_opts *o)
{
    return 1 - o->rank;
}

void bench_window_create(const bench_opts *o, size_t bytes, bench_window *w)
{
    MPI_Aint own = 0;

    memset(w, 0, sizeof(*w));
    w->bytes = bytes;
    switch (o->win) {
    case BENCH_WIN_CREATE:
        w->mem = bench_alloc_or_abort(o, bytes, BENCH_PLACE_HOST);
        w->base = w->mem;
        CHECK(MPI_Win_create(w->base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        break;
    case BENCH_WIN_ALLOCATE:
        CHECK(
            MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->base, &w->win));
        break;
    case BENCH_WIN_DYNAMIC:
        w->mem = bench_alloc_or_abort(o, bytes, BENCH_PLACE_HOST);
        w->base = w->mem;
        CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        CHECK(MPI_Win_attach(w->win, w->base, (MPI_Aint)bytes));
        /* The peer addresses this memory by its absolute address. */
        CHECK(MPI_Get_address(w->base, &own));
        CHECK(MPI_Sendrecv(&own, 1, MPI_AINT, peer_of(o), TAG_DISP, &w->peer_disp, 1, MPI_AINT,
                           peer_of(o), TAG_DISP, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        break;
    }
    memset(w->base, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
}

void bench_window_free(const bench_opts *o, bench_window *w)
{
    if (o->win == BENCH_WIN_DYNAMIC)
        CHECK(MPI_Win_detach(w->win, w->base));
    CHECK(MPI_Win_free(&w->win));
    bench_free(w->mem, BENCH_PLACE_HOST);
    memset(w, 0, sizeof(*w));
}

static int active_target(const bench_opts *o)
{
    return o->sync == BENCH_SYNC_FENCE || o->sync == BENCH_SYNC_PSCW;
}

int bench_rma_is_origin(const bench_opts *o)
{
    /* OSU's fence and pscw latency loops have rank 1 answer with the same operation. */
    return o->rank == 0 ||
           (active_target(o) && !(o->kind == BENCH_PUT_BW || o->kind == BENCH_GET_BW));
}

int bench_rma_is_target(const bench_opts *o)
{
    return o->rank == 1 ||
           (active_target(o) && !(o->kind == BENCH_PUT_BW || o->kind == BENCH_GET_BW));
}

long bench_rma_ops(const bench_opts *o, size_t size)
{
    long per_iter = (o->kind == BENCH_PUT_BW || o->kind == BENCH_GET_BW) ? o->window : 1;
    return per_iter * (long)(bench_warmup(o, size) + bench_iterations(o, size));
}

void bench_rma_check_pass(const bench_opts *o, bench_opts *check)
{
    *check = *o;
    check->iters = check->iters_large = 2;
    check->warmup = check->warmup_large = 0;
}

/* The group of the other rank, for pscw. */
static MPI_Group peer_group(const bench_opts *o)
{
    MPI_Group world, g;
    int peer = peer_of(o);
    CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK(MPI_Group_incl(world, 1, &peer, &g));
    CHECK(MPI_Group_free(&world));
    return g;
}

/* `count` operations of one iteration, each at its own slot of `stride` bytes. */
typedef struct {
    bench_rma_op op;
    void *ctx;
    int peer, count;
    MPI_Aint disp;
    size_t stride;
} op_batch;

static void issue(const op_batch *b)
{
    for (int j = 0; j < b->count; ++j)
        b->op(b->ctx, b->peer, b->disp + (MPI_Aint)((size_t)j * b->stride), j);
}

/* The passive-target modes (lock, flush, flush_local, lock_all), the same for latency and
 * bandwidth: rank 0 alone runs n iterations of the batch; the last `iters` are timed. */
static void passive_epochs(const bench_opts *o, MPI_Win win, const op_batch *b, int n, int iters,
                           double *t_start, double *t_end)
{
    int i;
    if (o->rank != 0)
        return;
    if (o->sync == BENCH_SYNC_FLUSH || o->sync == BENCH_SYNC_FLUSH_LOCAL)
        CHECK(MPI_Win_lock(MPI_LOCK_SHARED, b->peer, 0, win));
    for (i = 0; i < n; ++i) {
        if (i == n - iters)
            *t_start = bench_now();
        if (o->sync == BENCH_SYNC_LOCK)
            CHECK(MPI_Win_lock(MPI_LOCK_SHARED, b->peer, 0, win));
        else if (o->sync == BENCH_SYNC_LOCK_ALL)
            CHECK(MPI_Win_lock_all(0, win));
        issue(b);
        if (o->sync == BENCH_SYNC_LOCK)
            CHECK(MPI_Win_unlock(b->peer, win));
        else if (o->sync == BENCH_SYNC_LOCK_ALL)
            CHECK(MPI_Win_unlock_all(win));
        else if (o->sync == BENCH_SYNC_FLUSH)
            CHECK(MPI_Win_flush(b->peer, win));
        else
            CHECK(MPI_Win_flush_local(b->peer, win));
    }
    *t_end = bench_now();
    if (o->sync == BENCH_SYNC_FLUSH || o->sync == BENCH_SYNC_FLUSH_LOCAL)
        CHECK(MPI_Win_unlock(b->peer, win));
}

/* n iterations of the batch in o->sync's mode between two barriers; the last `iters` are timed
 * into *t_start and *t_end. In the active-target modes, with `answer` rank 1 issues the batch
 * back to rank 0 in an epoch of its own after rank 0's (the latency tests' round trip). */
static void timed_epochs(const bench_opts *o, MPI_Win win, const op_batch *b, int n, int iters,
                         int answer, double *t_start, double *t_end)
{
    MPI_Group group = MPI_GROUP_NULL;
    int i;

    if (o->sync == BENCH_SYNC_PSCW)
        group = peer_group(o);
    MPI_Barrier(MPI_COMM_WORLD);

    switch (o->sync) {
    case BENCH_SYNC_LOCK:
    case BENCH_SYNC_FLUSH:
    case BENCH_SYNC_FLUSH_LOCAL:
    case BENCH_SYNC_LOCK_ALL:
        passive_epochs(o, win, b, n, iters, t_start, t_end);
        break;
    case BENCH_SYNC_FENCE:
        /* Rank 0 writes in one epoch, rank 1 answers (if it does) in the next. */
        for (i = 0; i < n; ++i) {
            if (i == n - iters)
                *t_start = bench_now();
            CHECK(MPI_Win_fence(0, win));
            if (o->rank == 0)
                issue(b);
            CHECK(MPI_Win_fence(0, win));
            if (answer) {
                if (o->rank == 1)
                    issue(b);
                CHECK(MPI_Win_fence(0, win));
            }
        }
        *t_end = bench_now();
        break;
    case BENCH_SYNC_PSCW:
        for (i = 0; i < n; ++i) {
            if (o->rank == 0) {
                CHECK(MPI_Win_start(group, 0, win));
                if (i == n - iters)
                    *t_start = bench_now();
                issue(b);
                CHECK(MPI_Win_complete(win));
                if (answer) {
                    CHECK(MPI_Win_post(group, 0, win));
                    CHECK(MPI_Win_wait(win));
                }
            } else {
                CHECK(MPI_Win_post(group, 0, win));
                CHECK(MPI_Win_wait(win));
                if (answer) {
                    CHECK(MPI_Win_start(group, 0, win));
                    issue(b);
                    CHECK(MPI_Win_complete(win));
                }
            }
        }
        *t_end = bench_now();
        break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (group != MPI_GROUP_NULL)
        CHECK(MPI_Group_free(&group));
}

double bench_rma_latency(const bench_opts *o, bench_window *w, size_t size, bench_rma_op op,
                         void *ctx)
{
    const int iters = bench_iterations(o, size);
    const int n = bench_warmup(o, size) + iters;
    const op_batch one = {op, ctx, peer_of(o), 1, w->peer_disp, 0};
    double t_start = 0.0, t_end = 0.0, us = 0.0;

    timed_epochs(o, w->win, &one, n, iters, 1, &t_start, &t_end);
    us = (t_end - t_start) * 1e6 / iters;
    return active_target(o) ? us / 2.0 : us;
}

double bench_rma_bw(const bench_opts *o, bench_window *w, size_t size, bench_rma_op op, void *ctx)
{
    const int iters = bench_iterations(o, size);
    const int n = bench_warmup(o, size) + iters;
    const int window = o->window;
    const op_batch batch = {op, ctx, peer_of(o), window, w->peer_disp, size};
    double t_start = 0.0, t_end = 0.0;

    timed_epochs(o, w->win, &batch, n, iters, 0, &t_start, &t_end);
    return (double)size * window * iters / (t_end - t_start) / 1e6;
}

static unsigned char pattern_byte(size_t k, int writer, size_t size)
{
    return (unsigned char)(k * 7 + size * 13 + (size_t)writer * 101 + 1);
}

void bench_pattern_fill(void *buf, size_t bytes, int writer, size_t size)
{
    unsigned char *p = buf;
    size_t k;
    for (k = 0; k < bytes; ++k)
        p[k] = pattern_byte(k, writer, size);
}

int bench_pattern_ok(const void *buf, size_t bytes, int writer, size_t size)
{
    const unsigned char *p = buf;
    size_t k;
    for (k = 0; k < bytes; ++k)
        if (p[k] != pattern_byte(k, writer, size))
            return 0;
    return 1;
}

void bench_elem_fill(void *buf, size_t count, bench_elem elem)
{
    size_t k;
    for (k = 0; k < count; ++k) {
        const int v = (int)(k % 3) + 1;
        switch (elem) {
        case BENCH_ELEM_CHAR: ((char *)buf)[k] = (char)v; break;
        case BENCH_ELEM_INT: ((int *)buf)[k] = v; break;
        case BENCH_ELEM_LONG_LONG: ((long long *)buf)[k] = v; break;
        case BENCH_ELEM_DOUBLE: ((double *)buf)[k] = v; break;
        }
    }
}

int bench_elem_sum_ok(const void *buf, size_t count, bench_elem elem, long n)
{
    size_t k;
    for (k = 0; k < count; ++k) {
        /* Integer sums wrap: compare in unsigned arithmetic of the element's width. */
        const uint64_t want = (uint64_t)n * (uint64_t)(k % 3 + 1);
        int ok = 1;
        switch (elem) {
        case BENCH_ELEM_CHAR: ok = ((const unsigned char *)buf)[k] == (unsigned char)want; break;
        case BENCH_ELEM_INT: ok = ((const unsigned int *)buf)[k] == (unsigned int)want; break;
        case BENCH_ELEM_LONG_LONG:
            ok = ((const unsigned long long *)buf)[k] == (unsigned long long)want;
            break;
        case BENCH_ELEM_DOUBLE: ok = ((const double *)buf)[k] == (double)want; break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

void bench_rma_verify(const bench_opts *o, int ok, size_t size, const char *what)
{
    int mine[2], all[2];
    /* The failing rank with the smallest number, or -1 when every rank passed. */
    mine[0] = ok ? 1 : 0;
    mine[1] = ok ? o->nranks : o->rank;
    MPI_Allreduce(&mine[0], &all[0], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine[1], &all[1], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all[0])
        return;
    if (o->rank == 0) {
        fprintf(stderr, "validation failed at size %zu: %s on rank %d holds wrong data\n", size,
                what, all[1]);
        fflush(stderr);
    }
    /* The windows are still open: abort rather than finalize around them. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

bench_rma_row *bench_rma_begin(bench_case *c, bench_rma_op op)
{
    const bench_opts *o = c->opts;
    bench_rma_row *r = calloc(1, sizeof(*r));
    const size_t slots = (o->kind == BENCH_PUT_BW || o->kind == BENCH_GET_BW) ? (size_t)o->window : 1;

    if (r == NULL) {
        fprintf(stderr, "rank %d: cannot allocate the row state\n", o->rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    bench_window_create(o, c->size * slots, &r->w);
    r->op = op;
    r->size = c->size;
    c->state = r;
    return r;
}

double bench_rma_measure(bench_case *c)
{
    bench_rma_row *r = c->state;
    if (c->opts->kind == BENCH_PUT_BW || c->opts->kind == BENCH_GET_BW)
        return bench_rma_bw(c->opts, &r->w, c->size, r->op, r);
    return bench_rma_latency(c->opts, &r->w, c->size, r->op, r);
}

void bench_rma_end(bench_case *c)
{
    bench_rma_row *r = c->state;
    bench_window_free(c->opts, &r->w);
    free(r);
    c->state = NULL;
}

static void put_op(void *ctx, int target, MPI_Aint disp, int j)
{
    bench_rma_row *r = ctx;
    CHECK(MPI_Put(r->origin + (size_t)j * r->size, (int)r->size, MPI_CHAR, target, disp,
                  (int)r->size, MPI_CHAR, r->w.win));
}

static void get_op(void *ctx, int target, MPI_Aint disp, int j)
{
    bench_rma_row *r = ctx;
    CHECK(MPI_Get(r->origin + (size_t)j * r->size, (int)r->size, MPI_CHAR, target, disp,
                  (int)r->size, MPI_CHAR, r->w.win));
}

void bench_rma_put_setup(bench_case *c)
{
    bench_rma_row *r = bench_rma_begin(c, put_op);
    r->origin = c->sbuf;
    bench_pattern_fill(r->origin, r->w.bytes, c->opts->rank, c->size);
}

void bench_rma_put_verify(bench_case *c)
{
    const bench_rma_row *r = c->state;
    const bench_opts *o = c->opts;
    bench_rma_verify(o,
                     !bench_rma_is_target(o) ||
                         bench_pattern_ok(r->w.base, r->w.bytes, peer_of(o), c->size),
                     c->size, "the target window");
}

void bench_rma_get_setup(bench_case *c)
{
    bench_rma_row *r = bench_rma_begin(c, get_op);
    r->origin = c->rbuf;
    /* What the peer reads: stored before the loop's opening barrier. */
    bench_pattern_fill(r->w.base, r->w.bytes, c->opts->rank, c->size);
    bench_touch(r->origin, r->w.bytes, 0, BENCH_PLACE_HOST);
}

void bench_rma_get_verify(bench_case *c)
{
    const bench_rma_row *r = c->state;
    const bench_opts *o = c->opts;
    bench_rma_verify(o,
                     !bench_rma_is_origin(o) ||
                         bench_pattern_ok(r->origin, r->w.bytes, peer_of(o), c->size),
                     c->size, "the origin buffer");
}
