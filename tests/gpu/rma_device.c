/* Windows in GPU device memory (MPI_Win_create on cudaMalloc'd memory), reached through CUDA
 * IPC by the ranks of one node. Every target is a rank of the caller's node (its right
 * neighbour among them, or the node's lowest rank), so the same program checks the one-node
 * runs and the runs on two virtual nodes (WEFT_FAKE_NODES=2):
 * - fence: puts into the right neighbour's device window from a host and from a device
 *   buffer, a put with a strided target datatype, a put and a get on the own window; gets
 *   back into device and host buffers; every byte of every window checked;
 * - lock_all: int and double sums from every rank of the node onto its lowest rank (from host
 *   and device buffers, and 25 rounds onto the same 8 ints), totals exact;
 * - fetch_and_op (+1 from every rank: every value fetched exactly once), MPI_REPLACE chains,
 *   MPI_NO_OP, compare_and_swap on int64 and on a double's bits (exactly one winner) and a mismatch,
 *   with host and device origin, compare and result buffers;
 * - Get_accumulate (sum, no_op) with device and host origin and result buffers;
 * - a host window (MPI_Win_allocate) with device origin and result buffers: put, get,
 *   accumulate, Get_accumulate, fetch_and_op, compare_and_swap;
 * - errors: MPI_Win_attach of device memory is MPI_ERR_UNSUPPORTED_OPERATION;
 * - across nodes (two virtual nodes): every rank puts a 256 KiB slot into a device window on
 *   the other node from host and device buffers, reads it back into both, accumulates,
 *   fetches-and-adds and compares-and-swaps there, and overwrites part of it in a fence epoch;
 *   each target checks every int of its window, the sums, and that one swap won.
 * Reference values are computed locally. Window memory is never freed (the process's exit
 * releases it): peers keep their CUDA IPC mappings of it in their cache until MPI_Finalize, and
 * CUDA leaves freeing exported memory another process still maps undefined.
 * Without a CUDA device every rank exits with 77. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpu_common.h"

enum { MAXR = 64 };

static int world_leader[MAXR];  /* each world rank's node leader (its node's lowest world rank) */
static int node_members[MAXR], node_n = 0, me_in_node = 0;
static int right = 0, left = 0, leader = 0, remote = -1;
static long long checks = 0;

static void *dev_alloc(size_t n)
{
    void *p = NULL;
    CUDA_OK(cudaMalloc(&p, n ? n : 1));
    return p;
}

/* Host <-> device copies the test makes itself, finished before any MPI call reads the data. */
static void to_dev(void *dst, const void *src, size_t n)
{
    CUDA_OK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
}

static void from_dev(void *dst, const void *src, size_t n)
{
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) FAIL("malloc of %zu bytes", n);
    return p;
}

static void expect_unsupported(int rc, const char *what, const char *needle)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_UNSUPPORTED_OPERATION)
        FAIL("%s: error class %d, expected MPI_ERR_UNSUPPORTED_OPERATION (%d)", what, cls,
             MPI_ERR_UNSUPPORTED_OPERATION);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = 0;
    MPI_Error_string(rc, msg, &len);
    if (needle && !strstr(msg, needle)) FAIL("%s: the message '%s' does not say '%s'", what, msg, needle);
    checks++;
}

/* Which ranks share this rank's node, its right and left neighbours among them (cyclic in
 * world rank order), the node's lowest rank, and a rank of another node (-1: none). */
static void find_node(void)
{
    if (t_size > MAXR) FAIL("at most %d ranks", MAXR);
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank, MPI_INFO_NULL, &node));
    int nr = 0, mine = t_rank;
    MPI_OK(MPI_Comm_rank(node, &nr));
    MPI_OK(MPI_Comm_size(node, &node_n));
    int lead = t_rank;
    MPI_OK(MPI_Bcast(&lead, 1, MPI_INT, 0, node));  /* key = world rank: node rank 0 is the lowest */
    MPI_OK(MPI_Allgather(&mine, 1, MPI_INT, node_members, 1, MPI_INT, node));
    MPI_OK(MPI_Allgather(&lead, 1, MPI_INT, world_leader, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Comm_free(&node));
    me_in_node = nr;
    leader = lead;
    right = node_members[(nr + 1) % node_n];
    left = node_members[(nr + node_n - 1) % node_n];
    for (int q = 0; q < t_size; q++)
        if (world_leader[q] != leader) {
            remote = q;
            break;
        }
    for (int i = 1; i < node_n; i++)
        if (node_members[i] <= node_members[i - 1]) FAIL("node members out of order");
}

/* ---- fence: put and get ---- */

enum { P = 300000, VB = 64, VLEN = 4, VSTRIDE = 8, S = 4096 };
#define VEC_OFF ((size_t)2 * P)
#define VEC_BYTES ((size_t)VB * VSTRIDE * 4)
#define SELF_OFF (VEC_OFF + VEC_BYTES)
#define WIN_A (SELF_OFF + S + 64)
#define FILL 0x5A

static int vec_value(int origin, int k) { return origin * 100000 + k; }

static void fence_put_get(void)
{
    unsigned char *win_h = xmalloc(WIN_A);
    unsigned char *d_win = dev_alloc(WIN_A);
    CUDA_OK(cudaMemset(d_win, FILL, WIN_A));
    CUDA_OK(cudaDeviceSynchronize());
    MPI_Win win;
    MPI_OK(MPI_Win_create(d_win, (MPI_Aint)WIN_A, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    void *base = NULL;
    int flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == d_win, "MPI_WIN_BASE is %p, expected %p", base, (void *)d_win);

    unsigned char *h_src = xmalloc(P), *h_dst = xmalloc(P);
    unsigned char *d_src = dev_alloc(P), *d_dst = dev_alloc(P), *d_self = dev_alloc(S);
    int vec_src[VB * VLEN], vec_got[VB * VLEN];
    int *d_vec = dev_alloc(sizeof vec_got);
    t_fill(h_src, P, (uint32_t)t_rank, 1, 0);
    t_fill(h_dst, P, (uint32_t)t_rank, 2, 0); /* scratch: the device source's pattern */
    to_dev(d_src, h_dst, P);
    t_fill(h_dst, S, (uint32_t)t_rank, 3, 0);
    to_dev(d_self, h_dst, S);
    for (int k = 0; k < VB * VLEN; k++) vec_src[k] = vec_value(t_rank, k);
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(VB, VLEN, VSTRIDE, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));

    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(h_src, P, MPI_BYTE, right, 0, P, MPI_BYTE, win));           /* host -> device */
    MPI_OK(MPI_Put(d_src, P, MPI_BYTE, right, P, P, MPI_BYTE, win));           /* device -> device */
    MPI_OK(MPI_Put(vec_src, VB * VLEN, MPI_INT, right, (MPI_Aint)VEC_OFF, 1, vec, win));
    MPI_OK(MPI_Put(d_self, S, MPI_BYTE, t_rank, (MPI_Aint)SELF_OFF, S, MPI_BYTE, win));
    MPI_OK(MPI_Win_fence(0, win));

    /* The own window: what the left neighbour and this rank put, the fill everywhere else. */
    from_dev(win_h, d_win, WIN_A);
    CHECK_PAT(win_h, P, (uint32_t)left, 1, 0, "window bytes put from a host buffer");
    CHECK_PAT(win_h + P, P, (uint32_t)left, 2, 0, "window bytes put from a device buffer");
    const int *vw = (const int *)(win_h + VEC_OFF);
    int fill_int;
    memset(&fill_int, FILL, sizeof fill_int);
    for (int b = 0; b < VB; b++)
        for (int j = 0; j < VSTRIDE; j++) {
            const int want = j < VLEN ? vec_value(left, b * VLEN + j) : fill_int;
            if (vw[b * VSTRIDE + j] != want)
                FAIL("strided put: int %d of block %d is %d, expected %d", j, b, vw[b * VSTRIDE + j], want);
        }
    CHECK_PAT(win_h + SELF_OFF, S, (uint32_t)t_rank, 3, 0, "window bytes put by this rank to itself");
    for (size_t i = SELF_OFF + S; i < WIN_A; i++)
        CHECK(win_h[i] == FILL, "window byte %zu is %u, expected the fill", i, win_h[i]);
    checks += WIN_A;

    /* Back again: what this rank put into the right neighbour's window. */
    memset(h_dst, 0, P);
    CUDA_OK(cudaMemset(d_dst, 0, P));
    CUDA_OK(cudaMemset(d_vec, 0, sizeof vec_got));
    CUDA_OK(cudaMemset(d_self, 0, S));
    CUDA_OK(cudaDeviceSynchronize());
    MPI_OK(MPI_Get(d_dst, P, MPI_BYTE, right, 0, P, MPI_BYTE, win));            /* device <- device */
    MPI_OK(MPI_Get(h_dst, P, MPI_BYTE, right, P, P, MPI_BYTE, win));            /* host <- device */
    MPI_OK(MPI_Get(d_vec, VB * VLEN, MPI_INT, right, (MPI_Aint)VEC_OFF, 1, vec, win));
    MPI_OK(MPI_Get(d_self, S, MPI_BYTE, t_rank, (MPI_Aint)SELF_OFF, S, MPI_BYTE, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_PAT(h_dst, P, (uint32_t)t_rank, 2, 0, "get into a host buffer");
    from_dev(h_dst, d_dst, P);
    CHECK_PAT(h_dst, P, (uint32_t)t_rank, 1, 0, "get into a device buffer");
    from_dev(vec_got, d_vec, sizeof vec_got);
    for (int k = 0; k < VB * VLEN; k++)
        CHECK(vec_got[k] == vec_value(t_rank, k), "strided get: int %d is %d, expected %d", k, vec_got[k],
              vec_value(t_rank, k));
    from_dev(h_dst, d_self, S);
    CHECK_PAT(h_dst, S, (uint32_t)t_rank, 3, 0, "get from the own window into a device buffer");
    checks += 2 * P + sizeof vec_got + S;

    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Win_free(&win));
    /* d_win is not freed: see the top of the file */
    CUDA_OK(cudaFree(d_src));
    CUDA_OK(cudaFree(d_dst));
    CUDA_OK(cudaFree(d_self));
    CUDA_OK(cudaFree(d_vec));
    free(win_h);
    free(h_src);
    free(h_dst);
}

/* ---- lock_all: sums from every rank of the node onto its lowest rank ---- */

enum { NI = 1000, ND = 1000, NC = 8, ROUNDS = 25 };
/* disp_unit 4: ints at unit 0, doubles at unit NI (byte 4000), the contended ints after them */
#define D_UNIT NI
#define C_UNIT (NI + 2 * ND)
#define WIN_B ((size_t)(C_UNIT + NC) * 4)

static int a_val(int r, int i) { return (r + 1) * 1000 + i; }
static int b_val(int r, int i) { return (r + 1) * 7 - 3 * i; }
static double x_val(int r, int i) { return (r + 1) * 0.5 + i * 0.25; }
static double y_val(int r, int i) { return (r + 1) * 0.125 - i; }

static void accumulate_sums(void)
{
    char *d_win = dev_alloc(WIN_B);
    CUDA_OK(cudaMemset(d_win, 0, WIN_B));
    CUDA_OK(cudaDeviceSynchronize());
    MPI_Win win;
    MPI_OK(MPI_Win_create(d_win, (MPI_Aint)WIN_B, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *ai = xmalloc(NI * sizeof(int)), *bi = xmalloc(NI * sizeof(int));
    double *xd = xmalloc(ND * sizeof(double)), *yd = xmalloc(ND * sizeof(double));
    for (int i = 0; i < NI; i++) ai[i] = a_val(t_rank, i), bi[i] = b_val(t_rank, i);
    for (int i = 0; i < ND; i++) xd[i] = x_val(t_rank, i), yd[i] = y_val(t_rank, i);
    int *d_b = dev_alloc(NI * sizeof(int));
    double *d_x = dev_alloc(ND * sizeof(double));
    to_dev(d_b, bi, NI * sizeof(int));
    to_dev(d_x, xd, ND * sizeof(double));
    int ones[NC];
    for (int i = 0; i < NC; i++) ones[i] = t_rank + 1;
    int *d_ones = dev_alloc(sizeof ones);
    to_dev(d_ones, ones, sizeof ones);

    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Accumulate(ai, NI, MPI_INT, leader, 0, NI, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(d_b, NI, MPI_INT, leader, 0, NI, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(d_x, ND, MPI_DOUBLE, leader, D_UNIT, ND, MPI_DOUBLE, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(yd, ND, MPI_DOUBLE, leader, D_UNIT, ND, MPI_DOUBLE, MPI_SUM, win));
    for (int r = 0; r < ROUNDS; r++)
        MPI_OK(MPI_Accumulate(r % 2 ? (void *)d_ones : (void *)ones, NC, MPI_INT, leader, C_UNIT, NC, MPI_INT, MPI_SUM,
                              win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    if (t_rank == leader) {
        char *h = xmalloc(WIN_B);
        from_dev(h, d_win, WIN_B);
        const int *wi = (const int *)h;
        const double *wd = (const double *)(h + (size_t)D_UNIT * 4);
        const int *wc = (const int *)(h + (size_t)C_UNIT * 4);
        for (int i = 0; i < NI; i++) {
            int want = 0;
            for (int k = 0; k < node_n; k++) want += a_val(node_members[k], i) + b_val(node_members[k], i);
            CHECK(wi[i] == want, "int sum %d is %d, expected %d", i, wi[i], want);
        }
        for (int i = 0; i < ND; i++) {
            double want = 0;
            for (int k = 0; k < node_n; k++) want += x_val(node_members[k], i) + y_val(node_members[k], i);
            CHECK(wd[i] == want, "double sum %d is %.17g, expected %.17g", i, wd[i], want);
        }
        int want_c = 0;
        for (int k = 0; k < node_n; k++) want_c += ROUNDS * (node_members[k] + 1);
        for (int i = 0; i < NC; i++)
            CHECK(wc[i] == want_c, "contended int %d is %d, expected %d (a lost update)", i, wc[i], want_c);
        checks += NI + ND + NC;
        free(h);
    }
    MPI_OK(MPI_Win_free(&win));
    /* d_win is not freed: see the top of the file */
    CUDA_OK(cudaFree(d_b));
    CUDA_OK(cudaFree(d_x));
    CUDA_OK(cudaFree(d_ones));
    free(ai);
    free(bi);
    free(xd);
    free(yd);
}

/* ---- fetch_and_op and compare_and_swap at the node's lowest rank ---- */

enum { K = 40 };

static void atomics(void)
{
    /* slot 0: counter; 1: int64 CAS (-1); 2: mismatch, then REPLACE chain (77); 3: double CAS (1.5) */
    int64_t init[4] = {0, -1, 77, 0};
    const double dinit = 1.5;
    memcpy(&init[3], &dinit, sizeof dinit);
    int64_t *d_win = dev_alloc(sizeof init);
    to_dev(d_win, init, sizeof init);
    MPI_Win win;
    MPI_OK(MPI_Win_create(d_win, sizeof init, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank, MPI_INFO_NULL, &node));
    int64_t *d_io = dev_alloc(4 * sizeof(int64_t)); /* [0] origin, [1] compare, [2] result */

    int64_t fetched[K];
    const int64_t one = 1;
    MPI_OK(MPI_Win_lock_all(0, win));
    to_dev(&d_io[0], &one, sizeof one);
    for (int k = 0; k < K; k++) {
        if (k % 2) {
            MPI_OK(MPI_Fetch_and_op(&d_io[0], &d_io[2], MPI_INT64_T, leader, 0, MPI_SUM, win));
            from_dev(&fetched[k], &d_io[2], sizeof(int64_t));
        } else {
            MPI_OK(MPI_Fetch_and_op(&one, &fetched[k], MPI_INT64_T, leader, 0, MPI_SUM, win));
        }
        if (k > 0)
            CHECK(fetched[k] > fetched[k - 1], "fetch_and_op %d fetched %lld after %lld", k, (long long)fetched[k],
                  (long long)fetched[k - 1]);
    }
    /* One winner of each compare-and-swap; odd ranks use device buffers. The doubles go as their
     * bits (MPI_UINT64_T): MPI has no floating-point compare-and-swap. */
    int64_t cas_in[2] = {t_rank, -1}, cas_out = 0;
    double dcas_in[2] = {t_rank + 10.0, 1.5}, dcas_out = 0;
    if (t_rank % 2) {
        to_dev(d_io, cas_in, sizeof cas_in);
        MPI_OK(MPI_Compare_and_swap(&d_io[0], &d_io[1], &d_io[2], MPI_INT64_T, leader, 1, win));
        from_dev(&cas_out, &d_io[2], sizeof cas_out);
        to_dev(d_io, dcas_in, sizeof dcas_in);
        MPI_OK(MPI_Compare_and_swap(&d_io[0], &d_io[1], &d_io[2], MPI_UINT64_T, leader, 3, win));
        from_dev(&dcas_out, &d_io[2], sizeof dcas_out);
    } else {
        MPI_OK(MPI_Compare_and_swap(&cas_in[0], &cas_in[1], &cas_out, MPI_INT64_T, leader, 1, win));
        MPI_OK(MPI_Compare_and_swap(&dcas_in[0], &dcas_in[1], &dcas_out, MPI_UINT64_T, leader, 3, win));
    }
    /* A compare that never matches: slot 2 stays 77. */
    int64_t miss_in[2] = {t_rank, 5}, miss_out = 0;
    MPI_OK(MPI_Compare_and_swap(&miss_in[0], &miss_in[1], &miss_out, MPI_INT64_T, leader, 2, win));
    CHECK(miss_out == 77, "mismatched compare_and_swap returned %lld, expected 77", (long long)miss_out);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    int64_t peek = -5;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, leader, 0, win));
    MPI_OK(MPI_Fetch_and_op(NULL, &peek, MPI_INT64_T, leader, 2, MPI_NO_OP, win));
    MPI_OK(MPI_Win_unlock(leader, win));
    CHECK(peek == 77, "fetch_and_op(MPI_NO_OP) read %lld, expected 77", (long long)peek);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* A chain of replacements on slot 2: every value but the last is fetched exactly once. */
    int64_t mine = 1000 + t_rank, prev = 0;
    MPI_OK(MPI_Win_lock_all(0, win));
    if (t_rank % 2) {
        to_dev(&d_io[0], &mine, sizeof mine);
        MPI_OK(MPI_Fetch_and_op(&d_io[0], &d_io[2], MPI_INT64_T, leader, 2, MPI_REPLACE, win));
        from_dev(&prev, &d_io[2], sizeof prev);
    } else {
        MPI_OK(MPI_Fetch_and_op(&mine, &prev, MPI_INT64_T, leader, 2, MPI_REPLACE, win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    int64_t *all_fetched = xmalloc((size_t)node_n * K * sizeof(int64_t));
    int64_t mine_cas[3] = {cas_out, 0, prev}, *all_cas = xmalloc((size_t)node_n * 3 * sizeof(int64_t));
    memcpy(&mine_cas[1], &dcas_out, sizeof dcas_out);
    MPI_OK(MPI_Gather(fetched, K, MPI_INT64_T, all_fetched, K, MPI_INT64_T, 0, node));
    MPI_OK(MPI_Gather(mine_cas, 3, MPI_INT64_T, all_cas, 3, MPI_INT64_T, 0, node));
    if (t_rank == leader) {
        int64_t w[4];
        from_dev(w, d_win, sizeof w);
        const int total = K * node_n;
        CHECK(w[0] == total, "counter is %lld, expected %d", (long long)w[0], total);
        char *seen = calloc((size_t)total, 1);
        for (int i = 0; i < total; i++) {
            const int64_t v = all_fetched[i];
            CHECK(v >= 0 && v < total && !seen[v], "fetched value %lld is out of range or fetched twice", (long long)v);
            seen[v] = 1;
        }
        free(seen);
        /* int64 and double compare-and-swap: one winner, who saw the initial value; the others saw its value */
        int winners = 0, dwinners = 0;
        double dw;
        memcpy(&dw, &w[3], sizeof dw);
        for (int k = 0; k < node_n; k++) {
            const int r = node_members[k];
            double got;
            memcpy(&got, &all_cas[3 * k + 1], sizeof got);
            if (all_cas[3 * k] == -1) {
                winners++;
                CHECK(w[1] == r, "rank %d won the compare_and_swap but the slot holds %lld", r, (long long)w[1]);
            } else {
                CHECK(all_cas[3 * k] == w[1], "rank %d's compare_and_swap saw %lld, the winner wrote %lld", r,
                      (long long)all_cas[3 * k], (long long)w[1]);
            }
            if (got == 1.5) {
                dwinners++;
                CHECK(dw == r + 10.0, "rank %d won the double compare_and_swap but the slot holds %g", r, dw);
            } else {
                CHECK(got == dw, "rank %d's double compare_and_swap saw %g, the winner wrote %g", r, got, dw);
            }
        }
        CHECK(winners == 1 && dwinners == 1, "%d and %d winners of the compare_and_swaps, expected 1 each", winners,
              dwinners);
        /* The replace chain: 77 and every rank's value, each fetched once, except the final one. */
        int64_t chain[MAXR + 1];
        int n = 0, final_seen = 0;
        chain[n++] = 77;
        for (int k = 0; k < node_n; k++) chain[n++] = 1000 + node_members[k];
        for (int i = 0; i < n; i++) {
            int times = 0;
            for (int k = 0; k < node_n; k++) times += all_cas[3 * k + 2] == chain[i];
            if (chain[i] == w[2]) {
                final_seen = 1;
                CHECK(times == 0, "the final value %lld was also fetched", (long long)w[2]);
            } else {
                CHECK(times == 1, "value %lld was fetched %d times by MPI_REPLACE, expected once", (long long)chain[i],
                      times);
            }
        }
        CHECK(final_seen && w[2] != 77, "slot 2 ends as %lld, not one rank's value", (long long)w[2]);
        checks += total + 3 * node_n + 4;
    }
    free(all_fetched);
    free(all_cas);
    MPI_OK(MPI_Comm_free(&node));
    MPI_OK(MPI_Win_free(&win));
    /* d_win is not freed: see the top of the file */
    CUDA_OK(cudaFree(d_io));
}

/* ---- Get_accumulate onto the right neighbour's device window ---- */

enum { M = 2048, HALF = M / 2 };

static int g_init(int r, int i) { return 10 * r + i; }
static int g_add(int r, int i) { return (r + 1) * i; }

static void get_accumulate(void)
{
    int *h = xmalloc(M * sizeof(int)), *add = xmalloc(M * sizeof(int)), *res = xmalloc(M * sizeof(int));
    for (int i = 0; i < M; i++) h[i] = g_init(t_rank, i), add[i] = g_add(t_rank, i);
    int *d_win = dev_alloc(M * sizeof(int)), *d_add = dev_alloc(M * sizeof(int)), *d_res = dev_alloc(M * sizeof(int));
    to_dev(d_win, h, M * sizeof(int));
    to_dev(d_add, add, M * sizeof(int));
    CUDA_OK(cudaMemset(d_res, 0, M * sizeof(int)));
    CUDA_OK(cudaDeviceSynchronize());
    MPI_Win win;
    MPI_OK(MPI_Win_create(d_win, M * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    memset(res, 0, M * sizeof(int));
    MPI_OK(MPI_Win_fence(0, win));
    /* first half: host origin, device result; second half: device origin, host result */
    MPI_OK(MPI_Get_accumulate(add, HALF, MPI_INT, d_res, HALF, MPI_INT, right, 0, HALF, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(d_add + HALF, HALF, MPI_INT, res + HALF, HALF, MPI_INT, right, HALF, HALF, MPI_INT, MPI_SUM,
                              win));
    MPI_OK(MPI_Win_fence(0, win));
    from_dev(res, d_res, HALF * sizeof(int));
    for (int i = 0; i < M; i++)
        CHECK(res[i] == g_init(right, i), "Get_accumulate fetched %d at %d, expected %d", res[i], i, g_init(right, i));
    from_dev(h, d_win, M * sizeof(int));
    for (int i = 0; i < M; i++)
        CHECK(h[i] == g_init(t_rank, i) + g_add(left, i), "Get_accumulate left %d at %d, expected %d", h[i], i,
              g_init(t_rank, i) + g_add(left, i));
    /* MPI_NO_OP reads the right neighbour's new values into a device buffer. */
    CUDA_OK(cudaMemset(d_res, 0, M * sizeof(int)));
    CUDA_OK(cudaDeviceSynchronize());
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, d_res, M, MPI_INT, right, 0, M, MPI_INT, MPI_NO_OP, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    from_dev(res, d_res, M * sizeof(int));
    for (int i = 0; i < M; i++)
        CHECK(res[i] == g_init(right, i) + g_add(t_rank, i), "Get_accumulate(MPI_NO_OP) read %d at %d, expected %d",
              res[i], i, g_init(right, i) + g_add(t_rank, i));
    checks += 3 * M;
    MPI_OK(MPI_Win_free(&win));
    /* d_win is not freed: see the top of the file */
    CUDA_OK(cudaFree(d_add));
    CUDA_OK(cudaFree(d_res));
    free(h);
    free(add);
    free(res);
}

/* ---- a host window with device origin and result buffers ---- */

enum { HN = 1024 };

static int h_init(int r, int i) { return 3 * r + i; }

static void host_window(void)
{
    int *w = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(HN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    for (int i = 0; i < HN; i++) w[i] = h_init(t_rank, i);
    /* `cross`: half the job away (another node on two virtual nodes), whose writer is `cross` too */
    const int cross = (t_rank + t_size / 2) % t_size;
    int buf[HN], got[HN];
    for (int i = 0; i < HN; i++) buf[i] = t_rank * 1000 + i;
    int *d_buf = dev_alloc(sizeof buf), *d_got = dev_alloc(sizeof got);
    to_dev(d_buf, buf, sizeof buf);
    CUDA_OK(cudaMemset(d_got, 0, sizeof got));
    CUDA_OK(cudaDeviceSynchronize());

    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(d_buf, 500, MPI_INT, right, 0, 500, MPI_INT, win));
    if (t_size % 2 == 0) MPI_OK(MPI_Put(d_buf + 950, 50, MPI_INT, cross, 950, 50, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < HN; i++) {
        int want = h_init(t_rank, i);
        if (i < 500) want = left * 1000 + i;
        if (i >= 950 && i < 1000 && t_size % 2 == 0) want = cross * 1000 + i;
        CHECK(w[i] == want, "host window int %d is %d after puts from device buffers, expected %d", i, w[i], want);
    }
    MPI_OK(MPI_Get(d_got, 500, MPI_INT, right, 0, 500, MPI_INT, win));
    MPI_OK(MPI_Get(d_got + 600, 100, MPI_INT, right, 600, 100, MPI_INT, win));
    if (t_size % 2 == 0) MPI_OK(MPI_Get(d_got + 950, 50, MPI_INT, cross, 950, 50, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    from_dev(got, d_got, sizeof got);
    for (int i = 0; i < 500; i++) CHECK(got[i] == t_rank * 1000 + i, "get into a device buffer: %d at %d", got[i], i);
    for (int i = 600; i < 700; i++)
        CHECK(got[i] == h_init(right, i), "get into a device buffer: %d at %d, expected %d", got[i], i, h_init(right, i));
    if (t_size % 2 == 0)
        for (int i = 950; i < 1000; i++)
            CHECK(got[i] == t_rank * 1000 + i, "get from rank %d into a device buffer: %d at %d", cross, got[i], i);

    /* accumulate from a device buffer; Get_accumulate from and into device buffers */
    int add[100], two[100];
    for (int i = 0; i < 100; i++) add[i] = t_rank + 1, two[i] = 2;
    int *d_add = dev_alloc(sizeof add), *d_two = dev_alloc(sizeof two);
    to_dev(d_add, add, sizeof add);
    to_dev(d_two, two, sizeof two);
    CUDA_OK(cudaMemset(d_got, 0, sizeof got));
    CUDA_OK(cudaDeviceSynchronize());
    MPI_OK(MPI_Accumulate(d_add, 100, MPI_INT, right, 700, 100, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(d_two, 100, MPI_INT, d_got, 100, MPI_INT, right, 800, 100, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    from_dev(got, d_got, 100 * sizeof(int));
    for (int i = 0; i < 100; i++)
        CHECK(got[i] == h_init(right, 800 + i), "Get_accumulate into a device buffer: %d at %d, expected %d", got[i],
              i, h_init(right, 800 + i));
    for (int i = 700; i < 800; i++)
        CHECK(w[i] == h_init(t_rank, i) + left + 1, "accumulate from a device buffer: %d at %d", w[i], i);
    for (int i = 800; i < 900; i++) CHECK(w[i] == h_init(t_rank, i) + 2, "Get_accumulate: %d at %d", w[i], i);

    /* fetch_and_op and compare_and_swap with device buffers */
    int io[3] = {5, 0, 0};
    int *d_io = dev_alloc(sizeof io);
    to_dev(d_io, io, sizeof io);
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Fetch_and_op(&d_io[0], &d_io[2], MPI_INT, right, 900, MPI_SUM, win));
    MPI_OK(MPI_Win_flush(right, win));
    from_dev(&io[2], &d_io[2], sizeof(int));
    CHECK(io[2] == h_init(right, 900), "fetch_and_op into a device buffer fetched %d, expected %d", io[2],
          h_init(right, 900));
    io[0] = -1;
    io[1] = h_init(right, 901);
    to_dev(d_io, io, 2 * sizeof(int));
    MPI_OK(MPI_Compare_and_swap(&d_io[0], &d_io[1], &d_io[2], MPI_INT, right, 901, win));
    MPI_OK(MPI_Win_unlock_all(win));
    from_dev(&io[2], &d_io[2], sizeof(int));
    CHECK(io[2] == h_init(right, 901), "compare_and_swap into a device buffer fetched %d, expected %d", io[2],
          h_init(right, 901));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(w[900] == h_init(t_rank, 900) + 5, "fetch_and_op from a device buffer left %d", w[900]);
    CHECK(w[901] == -1, "compare_and_swap from device buffers left %d, expected -1", w[901]);
    checks += 2 * HN + 300 + 4;
    MPI_OK(MPI_Win_free(&win));
    CUDA_OK(cudaFree(d_buf));
    CUDA_OK(cudaFree(d_got));
    CUDA_OK(cudaFree(d_add));
    CUDA_OK(cudaFree(d_two));
    CUDA_OK(cudaFree(d_io));
}

/* ---- errors ---- */

static void errors(void)
{
    /* Device memory cannot be attached to a dynamic window. */
    char *d_buf = dev_alloc(4096);
    MPI_Win dyn;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    expect_unsupported(MPI_Win_attach(dyn, d_buf, 4096), "MPI_Win_attach of device memory", "device memory");
    MPI_OK(MPI_Win_free(&dyn));
    CUDA_OK(cudaFree(d_buf));
}

/* ---- device windows across nodes: staged, applied by the target ---- */

enum { XS = 65536, XC = 8 }; /* ints per origin's slot (256 KiB: beyond eager sizes); counter ints */

static int slot_val(int origin, int i) { return origin * 1000003 + i * 7; }

static void across_nodes(void)
{
    /* Each rank's device window: one slot per origin, then XC counters, all zero. */
    const size_t n = (size_t)t_size * XS + XC;
    int *d_win = dev_alloc(n * sizeof(int));
    CUDA_OK(cudaMemset(d_win, 0, n * sizeof(int)));
    CUDA_OK(cudaDeviceSynchronize());
    MPI_Win win;
    MPI_OK(MPI_Win_create(d_win, n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int remotes[MAXR];
    MPI_OK(MPI_Allgather(&remote, 1, MPI_INT, remotes, 1, MPI_INT, MPI_COMM_WORLD));
    const MPI_Aint slot = (MPI_Aint)t_rank * XS, counters = (MPI_Aint)t_size * XS;
    int *v = xmalloc(XS * sizeof(int)), *got = xmalloc(XS * sizeof(int));
    int *d_v = dev_alloc(XS * sizeof(int)), *d_got = dev_alloc(XS * sizeof(int));
    int fetched = -1, swapped = -1;
    if (remote >= 0) {
        for (int i = 0; i < XS; i++) v[i] = slot_val(t_rank, i);
        to_dev(d_v, v, XS * sizeof(int));
        /* Passive target: half the slot from host memory, half from device memory, read back
         * into both kinds of buffer; then accumulates, fetch-and-op and compare-and-swap. */
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, remote, 0, win));
        MPI_OK(MPI_Put(v, XS / 2, MPI_INT, remote, slot, XS / 2, MPI_INT, win));
        MPI_OK(MPI_Put(d_v + XS / 2, XS / 2, MPI_INT, remote, slot + XS / 2, XS / 2, MPI_INT, win));
        MPI_OK(MPI_Win_flush(remote, win));
        MPI_OK(MPI_Get(got, XS, MPI_INT, remote, slot, XS, MPI_INT, win));
        MPI_OK(MPI_Get(d_got, XS, MPI_INT, remote, slot, XS, MPI_INT, win));
        MPI_OK(MPI_Win_flush(remote, win));
        for (int i = 0; i < XS; i++) CHECK(got[i] == v[i], "host get of int %d across nodes: %d, expected %d", i, got[i], v[i]);
        from_dev(got, d_got, XS * sizeof(int));
        for (int i = 0; i < XS; i++) CHECK(got[i] == v[i], "device get of int %d across nodes: %d, expected %d", i, got[i], v[i]);
        checks += 2 * XS;
        int add[4] = {t_rank + 1, 2 * (t_rank + 1), 3, -(t_rank + 1)};
        MPI_OK(MPI_Accumulate(add, 4, MPI_INT, remote, counters, 4, MPI_INT, MPI_SUM, win));
        const int one = 1, mark = t_rank + 1, zero = 0;
        MPI_OK(MPI_Fetch_and_op(&one, &fetched, MPI_INT, remote, counters + 4, MPI_SUM, win));
        MPI_OK(MPI_Compare_and_swap(&mark, &zero, &swapped, MPI_INT, remote, counters + 5, win));
        MPI_OK(MPI_Win_unlock(remote, win));
    }
    /* Active target: a fence epoch overwrites the first 16 ints of the slot with their negation. */
    MPI_OK(MPI_Win_fence(0, win));
    if (remote >= 0) {
        for (int i = 0; i < 16; i++) v[i] = -slot_val(t_rank, i);
        MPI_OK(MPI_Put(v, 16, MPI_INT, remote, slot, 16, MPI_INT, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    /* Every rank checks its own window: the slots of the origins that chose it, the sums. */
    int *h = xmalloc(n * sizeof(int));
    from_dev(h, d_win, n * sizeof(int));
    int origins = 0, want[4] = {0, 0, 0, 0};
    for (int o = 0; o < t_size; o++) {
        const int *sl = h + (size_t)o * XS;
        if (remotes[o] != t_rank) {
            for (int i = 0; i < XS; i++) CHECK(sl[i] == 0, "slot of rank %d (not an origin here): int %d is %d", o, i, sl[i]);
            continue;
        }
        origins++;
        for (int i = 0; i < XS; i++) {
            const int expect = i < 16 ? -slot_val(o, i) : slot_val(o, i);
            CHECK(sl[i] == expect, "slot of rank %d: int %d is %d, expected %d", o, i, sl[i], expect);
        }
        want[0] += o + 1;
        want[1] += 2 * (o + 1);
        want[2] += 3;
        want[3] -= o + 1;
    }
    for (int k = 0; k < 4; k++) CHECK(h[counters + k] == want[k], "accumulated counter %d: %d, expected %d", k, h[counters + k], want[k]);
    CHECK(h[counters + 4] == origins, "fetch-and-op counter %d, expected %d", h[counters + 4], origins);
    const int winner = h[counters + 5];
    CHECK(origins == 0 ? winner == 0 : winner >= 1 && winner <= t_size && remotes[winner - 1] == t_rank,
          "compare-and-swap word %d: no origin of this rank wrote it", winner);
    checks += (long long)t_size * XS + 6;
    /* Each origin's fetched value was unique, and exactly one swap saw 0. */
    int all_fetched[MAXR], all_swapped[MAXR];
    MPI_OK(MPI_Allgather(&fetched, 1, MPI_INT, all_fetched, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Allgather(&swapped, 1, MPI_INT, all_swapped, 1, MPI_INT, MPI_COMM_WORLD));
    int seen[MAXR] = {0}, zeros = 0;
    for (int o = 0; o < t_size; o++) {
        if (remotes[o] != t_rank) continue;
        CHECK(all_fetched[o] >= 0 && all_fetched[o] < origins && !seen[all_fetched[o]]++,
              "rank %d fetched %d from the counter (%d origins)", o, all_fetched[o], origins);
        zeros += all_swapped[o] == 0;
        CHECK(all_swapped[o] == 0 || all_swapped[o] == winner, "rank %d's compare-and-swap saw %d (winner %d)", o,
              all_swapped[o], winner);
    }
    CHECK(origins == 0 || (zeros == 1 && all_swapped[winner - 1] == 0), "%d compare-and-swaps saw 0, expected 1", zeros);
    MPI_OK(MPI_Win_free(&win));
    /* d_win is not freed: see the top of the file */
    free(v);
    free(got);
    free(h);
    CUDA_OK(cudaFree(d_v));
    CUDA_OK(cudaFree(d_got));
    int staged = remote >= 0, total = 0;
    MPI_OK(MPI_Allreduce(&staged, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("rma_device: %d ranks wrote, read and accumulated into a device window on another node%s\n", total,
               remote >= 0 ? "" : " (one node: none)");
}

int main(int argc, char **argv)
{
    t_gpu_init(&argc, &argv, "rma_device");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)); /* windows inherit it */
    find_node();
    const char *fake = getenv("WEFT_FAKE_NODES");
    if (fake && atoi(fake) > 1 && remote < 0) FAIL("WEFT_FAKE_NODES=%s, but every rank is on this rank's node", fake);
    if (t_rank == 0)
        printf("rma_device: np %d, %d rank(s) on rank 0's node, %s\n", t_size, node_n,
               remote >= 0 ? "another node present" : "one node");
    fence_put_get();
    if (t_rank == 0) printf("rma_device: fence put/get on device windows checked\n");
    accumulate_sums();
    if (t_rank == 0) printf("rma_device: lock_all sums onto the node's lowest rank checked\n");
    atomics();
    if (t_rank == 0) printf("rma_device: fetch_and_op, replace chain, no_op, compare_and_swap checked\n");
    get_accumulate();
    if (t_rank == 0) printf("rma_device: Get_accumulate checked\n");
    host_window();
    if (t_rank == 0) printf("rma_device: host window with device origin buffers checked\n");
    errors();
    across_nodes();
    long long total = 0;
    MPI_OK(MPI_Reduce(&checks, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (t_rank == 0) printf("rma_device: %lld values checked\n", total);
    t_done();
    return 0;
}
