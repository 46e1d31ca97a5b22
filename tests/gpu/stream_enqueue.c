/* Stream-ordered operations (MPIX_Stream_* and MPIX_*_enqueue) on a CUDA stream.
 *   1. A kernel spins ~200 ms, a kernel fills the input, then MPIX_Allreduce_enqueue: the host
 *      call must return while the stream is still busy (cudaStreamQuery: not ready), the
 *      allreduce must see the filled input, and a kernel enqueued after it (result * 2 + 1)
 *      must see its result.
 *   2. The same in place.
 *   3. Back-to-back Allreduce_enqueue calls of different sizes (one-shot, fused, two-shot) and
 *      ops, with no host wait between them.
 *   4. The same as 1 for the other stream-native collectives, each behind its own spin kernel:
 *      Bcast_enqueue from root 0 and from root size-1, Allgather_enqueue (out of place and in
 *      place), Reduce_scatter_block_enqueue (sum on int, out of place and in place),
 *      Reduce_scatter_enqueue with equal counts, and Reduce_enqueue to root 0 and to the last
 *      rank (out of place and in place at the root); both the result and what a kernel
 *      enqueued after the call read are checked.
 *   5. Stream-native point-to-point on device buffers, ranks in pairs (0<->1, 2<->3; a last
 *      odd rank sits out), each step behind a ~200 ms spin kernel and a fill kernel:
 *      Send_enqueue / Recv_enqueue both ways (statuses checked), then Isend/Irecv_enqueue in
 *      both directions at once with two tags posted in opposite orders (Irecv before Isend)
 *      and Waitall_enqueue, then the same with Wait_enqueue one by one. The host must return
 *      while the stream is busy, a kernel enqueued after the receive (or its wait) must see the
 *      data, and every element is checked after cudaStreamSynchronize; 0 bytes, 1000 ints and
 *      4 MiB.
 *   6. The fallbacks (stream synchronised, then the host call), on pinned host buffers:
 *      Send/Recv_enqueue, Isend/Irecv_enqueue with Waitall_enqueue and Wait_enqueue. With
 *      argument "native" (run under WEFT_REQUIRE_FAST_PATH=1) a fallback must be refused
 *      instead: Send_enqueue from host memory, Recv_enqueue from MPI_ANY_SOURCE, and
 *      Bcast_enqueue on a non-contiguous datatype.
 *   7. Errors: enqueue on MPI_COMM_WORLD and on a CPU-stream communicator, a freed stream.
 *   8. A CUDA graph that captured Allreduce_enqueue and Bcast_enqueue, replayed five times with
 *      new input each time (and uncaptured calls between replays), every replay checked.
 * Every result is copied back and checked element by element. The stream-native calls need
 * every rank on one node and the flag kernels allowed (one GPU per rank, or MPS); with
 * STREAM_ENQUEUE_ALLOW_SYNC=1 a synchronising (fallback) call is tolerated in checks 1-5.
 * Without a CUDA device every rank exits with 77 (skipped). */
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "gpu_common.h"

cudaError_t test_spin(cudaStream_t s, unsigned long long ns);
cudaError_t test_fill(int *buf, size_t n, int rank, int salt, cudaStream_t s);
cudaError_t test_derive(const int *in, int *out, size_t n, cudaStream_t s);

static const unsigned long long kSpinNs = 200ull * 1000 * 1000;
static cudaStream_t st;
static MPI_Comm sc;
static int allow_sync;

static int *dev_alloc(size_t n)
{
    void *p = NULL;
    CUDA_OK(cudaMalloc(&p, n * sizeof(int) + 16));
    CUDA_OK(cudaMemsetAsync(p, 0xff, n * sizeof(int) + 16, st)); /* -1 everywhere */
    return p;
}

/* What test_fill writes at rank r. */
static int filled(size_t i, int r, int salt) { return (int)(i % 1000) + r * 7 + salt; }
static int sum_over_ranks(size_t i, int salt) { return t_size * (int)(i % 1000) + 7 * t_size * (t_size - 1) / 2 + t_size * salt; }
static int max_over_ranks(size_t i, int salt) { return filled(i, t_size - 1, salt); }

static void check(const int *dev, size_t n, int (*want)(size_t, int), int arg, int derived, const char *what)
{
    int *h = malloc(n * sizeof(int) + 1);
    CUDA_OK(cudaMemcpy(h, dev, n * sizeof(int), cudaMemcpyDefault));
    for (size_t i = 0; i < n; i++) {
        int w = want(i, arg);
        if (derived) w = w * 2 + 1;
        if (h[i] != w) FAIL("%s: element %zu of %zu is %d, expected %d", what, i, n, h[i], w);
    }
    free(h);
}

/* Right after an enqueue call that should not wait: the stream must still be busy. */
static void expect_busy(const char *what)
{
    cudaError_t q = cudaStreamQuery(st);
    (void)cudaGetLastError();
    if (q == cudaErrorNotReady) return;
    if (q != cudaSuccess) FAIL("%s: cudaStreamQuery: %s", what, cudaGetErrorString(q));
    if (allow_sync) {
        if (t_rank == 0) printf("note: %s returned with the stream idle (synchronising fallback)\n", what);
        return;
    }
    FAIL("%s returned with the stream idle: it waited for the GPU (a fallback synchronised the stream?)", what);
}

static void test_ordered_allreduce(size_t n, int in_place)
{
    const char *what = in_place ? "Allreduce_enqueue in place" : "Allreduce_enqueue";
    int *in = dev_alloc(n), *out = dev_alloc(n), *der = dev_alloc(n);
    int *res = in_place ? in : out;
    CUDA_OK(test_spin(st, kSpinNs));
    CUDA_OK(test_fill(in, n, t_rank, 3, st)); /* after the spin: the allreduce must wait for it */
    MPI_OK(MPIX_Allreduce_enqueue(in_place ? MPI_IN_PLACE : in, res, (int)n, MPI_INT, MPI_SUM, sc));
    expect_busy(what);
    CUDA_OK(test_derive(res, der, n, st));
    CUDA_OK(cudaStreamSynchronize(st));
    check(der, n, sum_over_ranks, 3, 1, what);
    check(res, n, sum_over_ranks, 3, 0, what);
    CUDA_OK(cudaFree(in));
    CUDA_OK(cudaFree(out));
    CUDA_OK(cudaFree(der));
}

static void test_back_to_back(void)
{
    /* 1 and 1000 elements: fused one-shot; 40000: one-shot; 300000 and 3M: two-shot. */
    const size_t sizes[] = {1, 1000, 40000, 300000, 3000000, 7};
    const MPI_Op ops[] = {MPI_SUM, MPI_SUM, MPI_MAX, MPI_SUM, MPI_SUM, MPI_MAX};
    enum { K = 6 };
    int *in[K], *out[K], *der[K];
    for (int k = 0; k < K; k++) {
        in[k] = dev_alloc(sizes[k]);
        out[k] = dev_alloc(sizes[k]);
        der[k] = dev_alloc(sizes[k]);
    }
    CUDA_OK(test_spin(st, kSpinNs));
    for (int k = 0; k < K; k++) {
        CUDA_OK(test_fill(in[k], sizes[k], t_rank, k, st));
        MPI_OK(MPIX_Allreduce_enqueue(in[k], out[k], (int)sizes[k], MPI_INT, ops[k], sc));
        CUDA_OK(test_derive(out[k], der[k], sizes[k], st));
    }
    expect_busy("back-to-back Allreduce_enqueue");
    CUDA_OK(cudaStreamSynchronize(st));
    for (int k = 0; k < K; k++) {
        char what[96];
        snprintf(what, sizeof(what), "back-to-back Allreduce_enqueue #%d (%zu elements)", k, sizes[k]);
        check(der[k], sizes[k], ops[k] == MPI_SUM ? sum_over_ranks : max_over_ranks, k, 1, what);
        CUDA_OK(cudaFree(in[k]));
        CUDA_OK(cudaFree(out[k]));
        CUDA_OK(cudaFree(der[k]));
    }
}

static int pattern_of_left(size_t i, int salt) { return filled(i, (t_rank + t_size - 1) % t_size, salt); }

/* Check 4: what the calls on blocks of blk_n elements produce. */
static size_t blk_n;
static int bcast_root;
static int pattern_of_root(size_t i, int salt) { return filled(i, bcast_root, salt); }
static int gathered(size_t i, int salt) { return filled(i % blk_n, (int)(i / blk_n), salt); }
static int reduced_block(size_t i, int salt) { return sum_over_ranks((size_t)t_rank * blk_n + i, salt); }

/* One collective enqueued behind a ~200 ms kernel: the input filled after the spin, the call,
 * the stream still busy, a kernel deriving from the result; the checks after the sync. */
static void check_collective(const int *res, int *der, size_t n, int (*want)(size_t, int), int salt, const char *what)
{
    CUDA_OK(test_derive(res, der, n, st));
    CUDA_OK(cudaStreamSynchronize(st));
    check(res, n, want, salt, 0, what);
    check(der, n, want, salt, 1, what);
}

static void test_ordered_collectives(size_t n)
{
    const size_t p = (size_t)t_size;
    char what[96];
    int *buf = dev_alloc(n), *s = dev_alloc(n), *all = dev_alloc(n * p), *der = dev_alloc(n * p);
    blk_n = n;

    /* Bcast_enqueue from root 0 and from the last rank: the others' buffers hold -1. */
    for (int k = 0; k < 2; k++) {
        bcast_root = k == 0 ? 0 : t_size - 1;
        const int salt = 20 + k;
        snprintf(what, sizeof(what), "Bcast_enqueue from root %d (%zu elements)", bcast_root, n);
        CUDA_OK(cudaMemsetAsync(buf, 0xff, n * sizeof(int), st));
        CUDA_OK(test_spin(st, kSpinNs));
        if (t_rank == bcast_root) CUDA_OK(test_fill(buf, n, t_rank, salt, st));
        MPI_OK(MPIX_Bcast_enqueue(buf, (int)n, MPI_INT, bcast_root, sc));
        expect_busy(what);
        check_collective(buf, der, n, pattern_of_root, salt, what);
    }

    /* Allgather_enqueue: block q holds rank q's filled(., q, salt); in place, each rank's own
     * block is filled in recvbuf. */
    for (int in_place = 0; in_place < 2; in_place++) {
        const int salt = 22 + in_place;
        snprintf(what, sizeof(what), "Allgather_enqueue%s (%zu elements per rank)", in_place ? " in place" : "", n);
        CUDA_OK(cudaMemsetAsync(all, 0xff, n * p * sizeof(int), st));
        CUDA_OK(test_spin(st, kSpinNs));
        CUDA_OK(test_fill(in_place ? all + (size_t)t_rank * n : s, n, t_rank, salt, st));
        MPI_OK(MPIX_Allgather_enqueue(in_place ? MPI_IN_PLACE : s, (int)n, MPI_INT, all, (int)n, MPI_INT, sc));
        expect_busy(what);
        check_collective(all, der, n * p, gathered, salt, what);
    }

    /* Reduce_scatter_block_enqueue (sum): rank r gets block r of the sum of every rank's input
     * of p blocks; in place, the input is in recvbuf and the result its first block. */
    for (int in_place = 0; in_place < 2; in_place++) {
        const int salt = 24 + in_place;
        int *res = in_place ? all : buf;
        snprintf(what, sizeof(what), "Reduce_scatter_block_enqueue%s (%zu elements per rank)", in_place ? " in place" : "", n);
        CUDA_OK(cudaMemsetAsync(buf, 0xff, n * sizeof(int), st));
        CUDA_OK(test_spin(st, kSpinNs));
        CUDA_OK(test_fill(all, n * p, t_rank, salt, st));
        MPI_OK(MPIX_Reduce_scatter_block_enqueue(in_place ? MPI_IN_PLACE : all, res, (int)n, MPI_INT, MPI_SUM, sc));
        expect_busy(what);
        check_collective(res, der, n, reduced_block, salt, what);
    }

    /* Reduce_scatter_enqueue with equal recvcounts (the block form, stream-native). */
    {
        int *counts = malloc(p * sizeof(int));
        for (size_t q = 0; q < p; q++) counts[q] = (int)n;
        snprintf(what, sizeof(what), "Reduce_scatter_enqueue (%zu elements per rank)", n);
        CUDA_OK(cudaMemsetAsync(buf, 0xff, n * sizeof(int), st));
        CUDA_OK(test_spin(st, kSpinNs));
        CUDA_OK(test_fill(all, n * p, t_rank, 26, st));
        MPI_OK(MPIX_Reduce_scatter_enqueue(all, buf, counts, MPI_INT, MPI_SUM, sc));
        expect_busy(what);
        check_collective(buf, der, n, reduced_block, 26, what);
        free(counts);
    }

    /* Reduce_enqueue (sum) to root 0 and to the last rank, out of place and in place at the
     * root; only the root's result is checked (the others pass a NULL recvbuf). */
    for (int k = 0; k < 4; k++) {
        const int root = k % 2 == 0 ? 0 : t_size - 1, in_place = k >= 2, salt = 27 + k;
        snprintf(what, sizeof(what), "Reduce_enqueue to root %d%s (%zu elements)", root, in_place ? " in place" : "", n);
        CUDA_OK(cudaMemsetAsync(buf, 0xff, n * sizeof(int), st));
        CUDA_OK(test_spin(st, kSpinNs));
        const int at_root = t_rank == root;
        CUDA_OK(test_fill(at_root && in_place ? buf : s, n, t_rank, salt, st));
        MPI_OK(MPIX_Reduce_enqueue(at_root && in_place ? MPI_IN_PLACE : s, at_root ? buf : NULL, (int)n, MPI_INT,
                                   MPI_SUM, root, sc));
        expect_busy(what);
        if (at_root) {
            check_collective(buf, der, n, sum_over_ranks, salt, what);
        } else {
            CUDA_OK(cudaStreamSynchronize(st));
        }
    }

    CUDA_OK(cudaFree(buf));
    CUDA_OK(cudaFree(s));
    CUDA_OK(cudaFree(all));
    CUDA_OK(cudaFree(der));
}

/* Pinned host memory (kernels reach it), -1 everywhere once the stream's work is done. */
/* Check 8: a CUDA graph that captured Allreduce_enqueue and Bcast_enqueue, replayed five times
 * with new input before each replay, and with an uncaptured Allreduce_enqueue between some
 * replays (the flag epochs count on on the device; the slots the graph baked in stay safe). */
static void test_graph(size_t n, enum cudaStreamCaptureMode mode)
{
    int *in = dev_alloc(n), *out = dev_alloc(n), *other = dev_alloc(n), *b = dev_alloc(n);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamSynchronize(st));
    CUDA_OK(cudaStreamBeginCapture(st, mode));
    MPI_OK(MPIX_Allreduce_enqueue(in, out, (int)n, MPI_INT, MPI_SUM, sc));
    MPI_OK(MPIX_Bcast_enqueue(b, (int)n, MPI_INT, t_size - 1, sc));
    CUDA_OK(cudaStreamEndCapture(st, &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    bcast_root = t_size - 1;
    for (int k = 0; k < 5; k++) {
        char what[96];
        CUDA_OK(test_fill(in, n, t_rank, k, st));
        CUDA_OK(test_fill(b, n, t_rank, 20 + k, st));
        CUDA_OK(cudaGraphLaunch(exec, st));
        if (k % 2) MPI_OK(MPIX_Allreduce_enqueue(in, other, (int)n, MPI_INT, MPI_MAX, sc));
        CUDA_OK(cudaStreamSynchronize(st));
        snprintf(what, sizeof what, "graph replay %d: Allreduce_enqueue (%zu elements)", k, n);
        check(out, n, sum_over_ranks, k, 0, what);
        snprintf(what, sizeof what, "graph replay %d: Bcast_enqueue (%zu elements)", k, n);
        check(b, n, pattern_of_root, 20 + k, 0, what);
        if (k % 2) {
            snprintf(what, sizeof what, "Allreduce_enqueue after graph replay %d (%zu elements)", k, n);
            check(other, n, max_over_ranks, k, 0, what);
        }
    }
    if (t_rank == 0)
        printf("graph of Allreduce_enqueue + Bcast_enqueue (%s capture): %zu ints, 5 replays checked\n",
               mode == cudaStreamCaptureModeGlobal ? "global" : "relaxed", n);
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    CUDA_OK(cudaFree(in));
    CUDA_OK(cudaFree(out));
    CUDA_OK(cudaFree(other));
    CUDA_OK(cudaFree(b));
}

static int *host_alloc(size_t n)
{
    void *p = NULL;
    CUDA_OK(cudaMallocHost(&p, n * sizeof(int) + 16));
    CUDA_OK(cudaStreamSynchronize(st));
    memset(p, 0xff, n * sizeof(int) + 16);
    return p;
}

static void host_reset(int *p, size_t n)
{
    CUDA_OK(cudaStreamSynchronize(st));
    memset(p, 0xff, n * sizeof(int));
}

static void test_fallbacks(size_t n)
{
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    int *s = host_alloc(n), *r = host_alloc(n), *der = dev_alloc(n);
    /* Send/Recv_enqueue around a ring, in an order that cannot deadlock. */
    CUDA_OK(test_spin(st, kSpinNs / 4));
    CUDA_OK(test_fill(s, n, t_rank, 11, st));
    if (t_rank % 2 == 0) {
        MPI_OK(MPIX_Send_enqueue(s, (int)n, MPI_INT, right, 1, sc));
        MPI_OK(MPIX_Recv_enqueue(r, (int)n, MPI_INT, left, 1, sc, MPI_STATUS_IGNORE));
    } else {
        MPI_Status status;
        MPI_OK(MPIX_Recv_enqueue(r, (int)n, MPI_INT, left, 1, sc, &status));
        CHECK_EQ_INT(status.MPI_SOURCE, left, "Recv_enqueue status source");
        MPI_OK(MPIX_Send_enqueue(s, (int)n, MPI_INT, right, 1, sc));
    }
    CUDA_OK(test_derive(r, der, n, st));
    CUDA_OK(cudaStreamSynchronize(st));
    check(der, n, pattern_of_left, 11, 1, "Send/Recv_enqueue");

    /* Isend/Irecv_enqueue + Waitall_enqueue. */
    MPI_Request rq[2];
    host_reset(r, n);
    CUDA_OK(test_fill(s, n, t_rank, 12, st));
    MPI_OK(MPIX_Irecv_enqueue(r, (int)n, MPI_INT, left, 2, sc, &rq[0]));
    MPI_OK(MPIX_Isend_enqueue(s, (int)n, MPI_INT, right, 2, sc, &rq[1]));
    MPI_OK(MPIX_Waitall_enqueue(2, rq, MPI_STATUSES_IGNORE));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Waitall_enqueue left a request");
    CUDA_OK(test_derive(r, der, n, st));
    CUDA_OK(cudaStreamSynchronize(st));
    check(der, n, pattern_of_left, 12, 1, "Isend/Irecv_enqueue + Waitall_enqueue");

    /* ... + Wait_enqueue, one by one. */
    host_reset(r, n);
    CUDA_OK(test_fill(s, n, t_rank, 13, st));
    MPI_OK(MPIX_Irecv_enqueue(r, (int)n, MPI_INT, left, 3, sc, &rq[0]));
    MPI_OK(MPIX_Isend_enqueue(s, (int)n, MPI_INT, right, 3, sc, &rq[1]));
    MPI_Status status;
    MPI_OK(MPIX_Wait_enqueue(&rq[0], &status));
    CHECK_EQ_INT(status.MPI_TAG, 3, "Wait_enqueue status tag");
    MPI_OK(MPIX_Wait_enqueue(&rq[1], MPI_STATUS_IGNORE));
    CUDA_OK(test_derive(r, der, n, st));
    CUDA_OK(cudaStreamSynchronize(st));
    check(der, n, pattern_of_left, 13, 1, "Isend/Irecv_enqueue + Wait_enqueue");

    CUDA_OK(cudaFreeHost(s));
    CUDA_OK(cudaFreeHost(r));
    CUDA_OK(cudaFree(der));
}

/* Check 5: stream-native point-to-point between the ranks of a pair. */
static int partner;
static int pattern_of_partner(size_t i, int salt) { return filled(i, partner, salt); }

static void check_recv_status(const MPI_Status *status, int tag, size_t n, const char *what)
{
    int count = -1;
    MPI_OK(MPI_Get_count(status, MPI_INT, &count));
    if (status->MPI_SOURCE != partner || status->MPI_TAG != tag || count != (int)n)
        FAIL("%s: status source %d tag %d count %d, expected %d, %d, %zu", what, status->MPI_SOURCE,
             status->MPI_TAG, count, partner, tag, n);
}

/* The received buffers and what a kernel enqueued after the receive derived from them. */
static void check_p2p(int *const *r, int *const *der, const int *salts, int k, size_t n, const char *what)
{
    CUDA_OK(cudaStreamSynchronize(st));
    if (n == 0) return;
    for (int j = 0; j < k; j++) {
        check(r[j], n, pattern_of_partner, salts[j], 0, what);
        check(der[j], n, pattern_of_partner, salts[j], 1, what);
    }
}

static void test_p2p(size_t n)
{
    partner = t_rank ^ 1;
    if (partner >= t_size) return;
    const int even = t_rank % 2 == 0;
    const size_t m = n ? n : 1;
    char what[128];
    int *s[2], *r[2], *der[2];
    for (int j = 0; j < 2; j++) {
        s[j] = dev_alloc(m);
        r[j] = dev_alloc(m);
        der[j] = dev_alloc(m);
    }
    MPI_Status status, statuses[4];

    /* Blocking, one way then the other: even ranks send first. */
    int salts[2] = {31, 32};
    snprintf(what, sizeof(what), "Send_enqueue/Recv_enqueue (%zu ints)", n);
    CUDA_OK(test_spin(st, kSpinNs));
    CUDA_OK(test_fill(s[0], n, t_rank, salts[0], st));
    if (even) {
        MPI_OK(MPIX_Send_enqueue(s[0], (int)n, MPI_INT, partner, 5, sc));
        MPI_OK(MPIX_Recv_enqueue(r[0], (int)n, MPI_INT, partner, 5, sc, &status));
    } else {
        MPI_OK(MPIX_Recv_enqueue(r[0], (int)n, MPI_INT, partner, 5, sc, &status));
        MPI_OK(MPIX_Send_enqueue(s[0], (int)n, MPI_INT, partner, 5, sc));
    }
    expect_busy(what);
    check_recv_status(&status, 5, n, what);
    CUDA_OK(test_derive(r[0], der[0], n, st));
    check_p2p(r, der, salts, 1, n, what);

    /* Non-blocking, both directions at once: tag 7 then 8 sent, 8 then 7 received. */
    for (int one_by_one = 0; one_by_one < 2; one_by_one++) {
        MPI_Request rq[4];
        salts[0] = 33 + 2 * one_by_one;
        salts[1] = 34 + 2 * one_by_one;
        snprintf(what, sizeof(what), "Isend/Irecv_enqueue + %s (%zu ints)",
                 one_by_one ? "Wait_enqueue" : "Waitall_enqueue", n);
        for (int j = 0; j < 2; j++) CUDA_OK(cudaMemsetAsync(r[j], 0xff, m * sizeof(int), st));
        CUDA_OK(test_spin(st, kSpinNs));
        for (int j = 0; j < 2; j++) CUDA_OK(test_fill(s[j], n, t_rank, salts[j], st));
        MPI_OK(MPIX_Irecv_enqueue(r[1], (int)n, MPI_INT, partner, 8, sc, &rq[0]));
        MPI_OK(MPIX_Irecv_enqueue(r[0], (int)n, MPI_INT, partner, 7, sc, &rq[1]));
        MPI_OK(MPIX_Isend_enqueue(s[0], (int)n, MPI_INT, partner, 7, sc, &rq[2]));
        MPI_OK(MPIX_Isend_enqueue(s[1], (int)n, MPI_INT, partner, 8, sc, &rq[3]));
        if (one_by_one) {
            for (int j = 0; j < 4; j++) MPI_OK(MPIX_Wait_enqueue(&rq[j], &statuses[j]));
        } else {
            MPI_OK(MPIX_Waitall_enqueue(4, rq, statuses));
        }
        expect_busy(what);
        for (int j = 0; j < 4; j++) CHECK(rq[j] == MPI_REQUEST_NULL, "a wait left a request");
        check_recv_status(&statuses[0], 8, n, what);
        check_recv_status(&statuses[1], 7, n, what);
        for (int j = 0; j < 2; j++) CUDA_OK(test_derive(r[j], der[j], n, st));
        check_p2p(r, der, salts, 2, n, what);
    }

    for (int j = 0; j < 2; j++) {
        CUDA_OK(cudaFree(s[j]));
        CUDA_OK(cudaFree(r[j]));
        CUDA_OK(cudaFree(der[j]));
    }
}

/* A blocking exchange with the partner on tag: even ranks send first. */
static void exchange(int *sbuf, int *rbuf, size_t n, int tag, MPI_Status *status)
{
    if (t_rank % 2 == 0) {
        MPI_OK(MPIX_Send_enqueue(sbuf, (int)n, MPI_INT, partner, tag, sc));
        MPI_OK(MPIX_Recv_enqueue(rbuf, (int)n, MPI_INT, partner, tag, sc, status));
    } else {
        MPI_OK(MPIX_Recv_enqueue(rbuf, (int)n, MPI_INT, partner, tag, sc, status));
        MPI_OK(MPIX_Send_enqueue(sbuf, (int)n, MPI_INT, partner, tag, sc));
    }
}

/* Check 9: point-to-point enqueue calls captured into a CUDA graph between the ranks of a pair
 * (a blocking exchange both ways, and Isend/Irecv with Waitall_enqueue), replayed five times
 * with new data before each replay, with an uncaptured exchange between some replays. */
static void test_graph_p2p(size_t n, enum cudaStreamCaptureMode mode)
{
    partner = t_rank ^ 1;
    if (partner >= t_size) return;
    const int even = t_rank % 2 == 0;
    int *s0 = dev_alloc(n), *s1 = dev_alloc(n), *r0 = dev_alloc(n), *r1 = dev_alloc(n), *u = dev_alloc(n);
    MPI_Request rq[2];
    MPI_Status status;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamSynchronize(st));
    CUDA_OK(cudaStreamBeginCapture(st, mode));
    if (even) {
        MPI_OK(MPIX_Send_enqueue(s0, (int)n, MPI_INT, partner, 5, sc));
        MPI_OK(MPIX_Recv_enqueue(r0, (int)n, MPI_INT, partner, 6, sc, &status));
    } else {
        MPI_OK(MPIX_Recv_enqueue(r0, (int)n, MPI_INT, partner, 5, sc, &status));
        MPI_OK(MPIX_Send_enqueue(s0, (int)n, MPI_INT, partner, 6, sc));
    }
    MPI_OK(MPIX_Irecv_enqueue(r1, (int)n, MPI_INT, partner, 9, sc, &rq[0]));
    MPI_OK(MPIX_Isend_enqueue(s1, (int)n, MPI_INT, partner, 9, sc, &rq[1]));
    MPI_OK(MPIX_Waitall_enqueue(2, rq, MPI_STATUSES_IGNORE));
    CUDA_OK(cudaStreamEndCapture(st, &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    check_recv_status(&status, even ? 6 : 5, n, "captured Recv_enqueue");
    for (int k = 0; k < 5; k++) {
        char what[96];
        CUDA_OK(cudaMemsetAsync(r0, 0xff, n * sizeof(int), st));
        CUDA_OK(cudaMemsetAsync(r1, 0xff, n * sizeof(int), st));
        CUDA_OK(test_fill(s0, n, t_rank, 40 + k, st));
        CUDA_OK(test_fill(s1, n, t_rank, 60 + k, st));
        CUDA_OK(cudaGraphLaunch(exec, st));
        if (k % 2) { /* uncaptured messages of the same pair between replays */
            CUDA_OK(test_fill(s0, n, t_rank, 80 + k, st));
            exchange(s0, u, n, 5, MPI_STATUS_IGNORE);
        }
        CUDA_OK(cudaStreamSynchronize(st));
        snprintf(what, sizeof what, "graph replay %d: Send/Recv_enqueue (%zu ints)", k, n);
        check(r0, n, pattern_of_partner, 40 + k, 0, what);
        snprintf(what, sizeof what, "graph replay %d: Isend/Irecv_enqueue + Waitall_enqueue (%zu ints)", k, n);
        check(r1, n, pattern_of_partner, 60 + k, 0, what);
        if (k % 2) {
            snprintf(what, sizeof what, "Send/Recv_enqueue after graph replay %d (%zu ints)", k, n);
            check(u, n, pattern_of_partner, 80 + k, 0, what);
        }
    }
    if (t_rank == 0)
        printf("graph of point-to-point enqueue calls (%s capture): %zu ints, 5 replays checked\n",
               mode == cudaStreamCaptureModeGlobal ? "global" : "relaxed", n);
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    CUDA_OK(cudaFree(s0));
    CUDA_OK(cudaFree(s1));
    CUDA_OK(cudaFree(r0));
    CUDA_OK(cudaFree(r1));
    CUDA_OK(cudaFree(u));
}

/* An uncaptured exchange maps the partner's buffer; both free it and allocate again (the
 * driver tends to give the same memory back), then a captured exchange of the new buffers: the
 * receiver's cache still holds the old mapping, which it must close during the capture. */
static void test_graph_p2p_reused(size_t n)
{
    partner = t_rank ^ 1;
    if (partner >= t_size) return;
    for (int round = 0; round < 2; round++) {
        int *sbuf = dev_alloc(n), *rbuf = dev_alloc(n);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        char what[96];
        const int salt = 120 + 2 * round;
        CUDA_OK(test_fill(sbuf, n, t_rank, salt, st));
        if (round == 0) {
            exchange(sbuf, rbuf, n, 11, MPI_STATUS_IGNORE);
            CUDA_OK(cudaStreamSynchronize(st));
            snprintf(what, sizeof what, "Send/Recv_enqueue before the buffers are freed (%zu ints)", n);
            check(rbuf, n, pattern_of_partner, salt, 0, what);
        } else {
            CUDA_OK(cudaStreamSynchronize(st));
            CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
            exchange(sbuf, rbuf, n, 12, MPI_STATUS_IGNORE);
            CUDA_OK(cudaStreamEndCapture(st, &graph));
            CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
            for (int k = 0; k < 3; k++) {
                CUDA_OK(cudaMemsetAsync(rbuf, 0xff, n * sizeof(int), st));
                CUDA_OK(test_fill(sbuf, n, t_rank, salt + 10 * k, st));
                CUDA_OK(cudaGraphLaunch(exec, st));
                CUDA_OK(cudaStreamSynchronize(st));
                snprintf(what, sizeof what, "captured Send/Recv_enqueue into reused memory, replay %d (%zu ints)", k, n);
                check(rbuf, n, pattern_of_partner, salt + 10 * k, 0, what);
            }
            CUDA_OK(cudaGraphExecDestroy(exec));
            CUDA_OK(cudaGraphDestroy(graph));
        }
        CUDA_OK(cudaFree(sbuf));
        CUDA_OK(cudaFree(rbuf));
    }
    if (t_rank == 0) printf("captured point-to-point into a freed buffer's memory: %zu ints, 3 replays checked\n", n);
    /* Whether the driver gave the freed memory back (then the cache closed the old mapping
     * during the capture) is the driver's choice: reported, not asserted. */
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    const unsigned long long remaps = t_pvar_now("weft_gpu_ipc_cache_remaps", MPI_T_PVAR_CLASS_COUNTER);
    MPI_OK(MPI_T_finalize());
    printf("rank %d: %llu CUDA IPC opens refused as already mapped and retried so far\n", t_rank, remaps);
}

static void expect_error(int rc, int cls, const char *what)
{
    int got = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING];
    msg[0] = 0;
    if (rc == MPI_SUCCESS) FAIL("%s: succeeded, expected an error", what);
    MPI_Error_class(rc, &got);
    MPI_Error_string(rc, msg, &len);
    if (got != cls) FAIL("%s: error class %d, expected %d (%s)", what, got, cls, msg);
    if (t_rank == 0) printf("ok: %s -> %s\n", what, msg);
}

static MPIX_Stream wrap(cudaStream_t s)
{
    MPI_Info info;
    MPIX_Stream ms = MPIX_STREAM_NULL;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "type", "cudaStream_t"));
    MPI_OK(MPIX_Info_set_hex(info, "value", &s, (int)sizeof(s)));
    MPI_OK(MPIX_Stream_create(info, &ms));
    MPI_OK(MPI_Info_free(&info));
    return ms;
}

int main(int argc, char **argv)
{
    const int devices = t_gpu_devices_or_skip();
    const int native_only = argc > 1 && !strcmp(argv[1], "native");
    const char *as = getenv("STREAM_ENQUEUE_ALLOW_SYNC");
    allow_sync = as && atoi(as) != 0;
    t_init(&argc, &argv, native_only ? "stream_enqueue(native)" : "stream_enqueue");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CUDA_OK(cudaSetDevice(t_local_rank() % devices));
    CUDA_OK(cudaStreamCreate(&st));

    MPIX_Stream ms = wrap(st);
    MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &sc));

    for (int in_place = 0; in_place < 2; in_place++) {
        test_ordered_allreduce(1000, in_place);
        test_ordered_allreduce(1 << 20, in_place);
    }
    test_back_to_back();
    test_ordered_collectives(7);
    test_ordered_collectives(1000);
    test_ordered_collectives(1 << 18);
    test_p2p(0);
    test_p2p(1000);
    test_p2p(1 << 20); /* 4 MiB */
    test_graph(1000, cudaStreamCaptureModeRelaxed);   /* fused one-shot */
    test_graph(300000, cudaStreamCaptureModeRelaxed); /* two-shot */
    test_graph_p2p(1000, cudaStreamCaptureModeRelaxed);
    test_graph_p2p(1 << 20, cudaStreamCaptureModeRelaxed);
    /* The default mode of cudaStreamBeginCapture and of PyTorch's graphs. */
    test_graph(1000, cudaStreamCaptureModeGlobal);
    test_graph_p2p(1000, cudaStreamCaptureModeGlobal);
    test_graph_p2p_reused(1 << 20);
    if (!native_only) {
        test_fallbacks(1000);
        test_fallbacks(1 << 18);
    } else {
        /* Fallbacks are refused before they touch the stream or the peers. */
        int *d = dev_alloc(4), h[4] = {0, 0, 0, 0};
        MPI_Datatype strided;
        MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &strided));
        MPI_OK(MPI_Type_commit(&strided));
        expect_error(MPIX_Send_enqueue(h, 1, MPI_INT, (t_rank + 1) % t_size, 0, sc), MPI_ERR_UNSUPPORTED_OPERATION,
                     "Send_enqueue from host memory (a fallback) under WEFT_REQUIRE_FAST_PATH");
        expect_error(MPIX_Recv_enqueue(d, 1, MPI_INT, MPI_ANY_SOURCE, 0, sc, MPI_STATUS_IGNORE),
                     MPI_ERR_UNSUPPORTED_OPERATION, "Recv_enqueue from MPI_ANY_SOURCE (a fallback) under WEFT_REQUIRE_FAST_PATH");
        expect_error(MPIX_Bcast_enqueue(d, 1, strided, 0, sc), MPI_ERR_UNSUPPORTED_OPERATION,
                     "Bcast_enqueue on a non-contiguous datatype (a fallback) under WEFT_REQUIRE_FAST_PATH");
        MPI_OK(MPI_Type_free(&strided));
        CUDA_OK(cudaStreamSynchronize(st));
        CUDA_OK(cudaFree(d));
    }

    /* Errors. */
    int *d = dev_alloc(4);
    expect_error(MPIX_Allreduce_enqueue(MPI_IN_PLACE, d, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_ARG,
                 "Allreduce_enqueue on MPI_COMM_WORLD");
    expect_error(MPIX_Send_enqueue(d, 4, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_ARG, "Send_enqueue on MPI_COMM_WORLD");
    MPIX_Stream cpu;
    MPI_Comm cpu_comm;
    MPI_OK(MPIX_Stream_create(MPI_INFO_NULL, &cpu));
    MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, cpu, &cpu_comm));
    expect_error(MPIX_Allreduce_enqueue(MPI_IN_PLACE, d, 4, MPI_INT, MPI_SUM, cpu_comm), MPI_ERR_ARG,
                 "Allreduce_enqueue on a CPU-stream communicator");
    MPI_OK(MPI_Comm_free(&cpu_comm));
    MPI_OK(MPIX_Stream_free(&cpu));
    cudaStream_t st2;
    CUDA_OK(cudaStreamCreate(&st2));
    MPIX_Stream ms2 = wrap(st2), saved = ms2;
    MPI_OK(MPIX_Stream_free(&ms2));
    CHECK(ms2 == MPIX_STREAM_NULL, "MPIX_Stream_free did not reset the handle");
    MPI_Comm bad = MPI_COMM_NULL;
    expect_error(MPIX_Stream_comm_create(MPI_COMM_WORLD, saved, &bad), MPI_ERR_ARG, "Stream_comm_create with a freed stream");
    expect_error(MPIX_Stream_free(&saved), MPI_ERR_ARG, "Stream_free twice");
    CUDA_OK(cudaStreamDestroy(st2));
    CUDA_OK(cudaStreamSynchronize(st));
    CUDA_OK(cudaFree(d));

    /* MPICH allows freeing a GPU stream its communicators still use: they keep working. */
    MPI_OK(MPIX_Stream_free(&ms));
    test_ordered_allreduce(5000, 0);

    MPI_OK(MPI_Comm_free(&sc));
    CUDA_OK(cudaStreamDestroy(st));
    t_done();
    return 0;
}
