/* Registered device buffers (MPIX_Comm_register_buffer) and the fused allreduce pieces.
 *   1. Float sums at three sizes (one fused single-block call, one piece, several pieces of the
 *      test's 1 MiB workspace), each: MPIX_Allreduce_enqueue on registered buffers out of place,
 *      in place, at an offset inside the registration; on buffers no rank registered; mixed
 *      (rank 0 registered, the others not); and blocking MPI_Allreduce on registered buffers.
 *   2. A persistent MPI_Allreduce_init on device buffers (its buffers registered by the init),
 *      started three times with new data.
 *   3. float16 sums accumulate in float: rank 0 gives 1.0, every other rank 2^-11 + 2^-13;
 *      rounding after every step would give a larger result from 4 ranks on.
 *   4. MPIX_Allreduce_enqueue on unregistered buffers captured into a CUDA graph (out of place
 *      and in place; with WEFT_GPU_FUSED the capture registers them), replayed three times with
 *      new data.
 *   5. 320 calls on two pairs of unregistered buffers (A, then B, then A), past the point where
 *      automatic registration settles and agrees on only some calls.
 *   5b. A stream-ordered call registers its buffers' whole allocations (input and output in two,
 *      then in one): later calls on other parts of them (a larger count, an offset) make no
 *      registration of their own.
 *   6. Errors: a host buffer fails on every rank (no hang), a bogus or dropped handle is
 *      MPI_ERR_ARG; after every handle is dropped the calls still give the right sums.
 *   7. MPIX_Reduce_scatter_block_enqueue (float sum) at three sizes (one launch, and above it
 *      the fused reduce-scatter pieces, one with blocks not 16-byte aligned): registered input
 *      (folded whole from the peers' inputs), unregistered (registered by the call itself where
 *      automatic registration is on), mixed (rank 0 registered; truly mixed only where automatic
 *      registration is off), in place, blocking MPI_Reduce_scatter_block on the registered
 *      input, and captured into a CUDA graph (which registers its input) replayed three times.
 *   8. The bound: 64 registrations of the user's evict the calls' own, a 65th is refused.
 * Every result is copied back and checked element by element. Variants set
 * WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN (one-shot or direct pieces), WEFT_GPU_FUSED,
 * WEFT_GPU_FUSED_SPLIT_MIN and WEFT_GPU_AUTO_REGISTER_MIN (by default the "unregistered" calls
 * of 256 KiB and more register their buffers themselves; 0: they run on the slots). Without a
 * CUDA device every rank exits with 77 (skipped). */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpu_common.h"

static cudaStream_t st;
static MPIX_Stream ms;
static MPI_Comm sc;

static float input_of(size_t i, int r, int salt) { return (float)((int)(i % 97) + r + salt); }
static float sum_of(size_t i, int salt)
{
    float s = 0;
    for (int r = 0; r < t_size; r++) s += input_of(i, r, salt);
    return s;
}

static void fill(float *dev, size_t n, int salt)
{
    float *h = malloc(n * sizeof(float) + 1);
    for (size_t i = 0; i < n; i++) h[i] = input_of(i, t_rank, salt);
    CUDA_OK(cudaMemcpy(dev, h, n * sizeof(float), cudaMemcpyHostToDevice));
    free(h);
}

static void check(const float *dev, size_t n, int salt, const char *what)
{
    float *h = malloc(n * sizeof(float) + 1);
    CUDA_OK(cudaMemcpy(h, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        if (h[i] != sum_of(i, salt)) FAIL("%s: element %zu of %zu is %g, expected %g", what, i, n, h[i], sum_of(i, salt));
    free(h);
}

static void sync_and_check(const float *dev, size_t n, int salt, const char *what)
{
    CUDA_OK(cudaStreamSynchronize(st));
    check(dev, n, salt, what);
}

/* Rank t_rank's block of a reduce-scatter of `n` elements per rank. */
static void check_scatter(const float *dev, size_t n, int salt, const char *what)
{
    float *h = malloc(n * sizeof(float) + 1);
    CUDA_OK(cudaStreamSynchronize(st));
    CUDA_OK(cudaMemcpy(h, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
    const size_t at = (size_t)t_rank * n;
    for (size_t i = 0; i < n; i++)
        if (h[i] != sum_of(at + i, salt))
            FAIL("%s: element %zu of %zu is %g, expected %g", what, i, n, h[i], sum_of(at + i, salt));
    free(h);
}

static void *reg(void *buf, size_t bytes)
{
    void *h = NULL;
    MPI_OK(MPIX_Comm_register_buffer(sc, buf, (MPI_Aint)bytes, &h));
    CHECK(h != NULL, "MPIX_Comm_register_buffer gave a NULL handle");
    return h;
}

/* Error codes carry their message: compare classes. */
static int error_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

static void test_sizes(void)
{
    const size_t sizes[] = {1000, 100000, 1000000};
    for (int k = 0; k < 3; k++) {
        const size_t n = sizes[k], pad = 16, bytes = (n + pad) * sizeof(float);
        char what[128];
        float *in, *out, *plain_in, *plain_out;
        CUDA_OK(cudaMalloc((void **)&in, bytes));
        CUDA_OK(cudaMalloc((void **)&out, bytes));
        CUDA_OK(cudaMalloc((void **)&plain_in, bytes));
        CUDA_OK(cudaMalloc((void **)&plain_out, bytes));
        void *hin = reg(in, bytes), *hout = reg(out, bytes);

        fill(in, n, 1);
        MPI_OK(MPIX_Allreduce_enqueue(in, out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "registered, out of place, %zu floats", n);
        sync_and_check(out, n, 1, what);

        fill(out, n, 2);
        MPI_OK(MPIX_Allreduce_enqueue(MPI_IN_PLACE, out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "registered, in place, %zu floats", n);
        sync_and_check(out, n, 2, what);

        fill(in + pad, n, 3);
        MPI_OK(MPIX_Allreduce_enqueue(in + pad, out + pad, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "registered, at an offset, %zu floats", n);
        sync_and_check(out + pad, n, 3, what);

        fill(plain_in, n, 4);
        MPI_OK(MPIX_Allreduce_enqueue(plain_in, plain_out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "unregistered, %zu floats", n);
        sync_and_check(plain_out, n, 4, what);

        float *mi = t_rank == 0 ? in : plain_in, *mo = t_rank == 0 ? out : plain_out;
        fill(mi, n, 5);
        MPI_OK(MPIX_Allreduce_enqueue(mi, mo, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "rank 0 registered, the others not, %zu floats", n);
        sync_and_check(mo, n, 5, what);

        fill(in, n, 6);
        MPI_OK(MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "blocking MPI_Allreduce, registered, %zu floats", n);
        check(out, n, 6, what);

        MPI_OK(MPIX_Comm_deregister_buffer(sc, hin));
        MPI_OK(MPIX_Comm_deregister_buffer(sc, hout));
        MPI_OK(MPI_Comm_set_errhandler(sc, MPI_ERRORS_RETURN));
        CHECK(error_class(MPIX_Comm_deregister_buffer(sc, hin)) == MPI_ERR_ARG, "a dropped handle was accepted");
        MPI_OK(MPI_Comm_set_errhandler(sc, MPI_ERRORS_ARE_FATAL));

        fill(in, n, 7);
        MPI_OK(MPIX_Allreduce_enqueue(in, out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "after deregistering, %zu floats", n);
        sync_and_check(out, n, 7, what);
        CUDA_OK(cudaFree(in));
        CUDA_OK(cudaFree(out));
        CUDA_OK(cudaFree(plain_in));
        CUDA_OK(cudaFree(plain_out));
    }
}

static void test_persistent(void)
{
    const size_t n = 300000;
    float *in, *out;
    CUDA_OK(cudaMalloc((void **)&in, n * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&out, n * sizeof(float)));
    MPI_Request r;
    MPI_OK(MPI_Allreduce_init(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int round = 0; round < 3; round++) {
        fill(in, n, 10 + round);
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        char what[64];
        snprintf(what, sizeof(what), "persistent allreduce, start %d", round);
        check(out, n, 10 + round, what);
    }
    MPI_OK(MPI_Request_free(&r));
    CUDA_OK(cudaFree(in));
    CUDA_OK(cudaFree(out));
}

/* float16 bits of a float (normal numbers, round to nearest even), and back. */
static uint16_t to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    int exp = (int)((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = x & 0x7fffff;
    uint32_t h = ((uint32_t)exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}
static float from_half(uint16_t h)
{
    const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    uint32_t x = ((uint32_t)(h & 0x8000) << 16) | ((exp - 15 + 127) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return exp ? f : 0.0f;
}

static void test_half_accumulation(void)
{
    const size_t sizes[] = {64, 100000, 1000000};
    const uint16_t one = 0x3c00, small = 0x1100; /* 1.0 and 2^-11 + 2^-13 */
    float acc = from_half(one);
    for (int r = 1; r < t_size; r++) acc += from_half(small);
    const uint16_t want = to_half(acc);
    for (int k = 0; k < 3; k++) {
        const size_t n = sizes[k];
        uint16_t *h = malloc(n * sizeof(uint16_t));
        for (size_t i = 0; i < n; i++) h[i] = t_rank == 0 ? one : small;
        uint16_t *d;
        CUDA_OK(cudaMalloc((void **)&d, n * sizeof(uint16_t)));
        for (int blocking = 0; blocking < 2; blocking++) {
            CUDA_OK(cudaMemcpy(d, h, n * sizeof(uint16_t), cudaMemcpyHostToDevice));
            if (blocking) {
                MPI_OK(MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPIX_C_FLOAT16, MPI_SUM, sc));
            } else {
                MPI_OK(MPIX_Allreduce_enqueue(MPI_IN_PLACE, d, (int)n, MPIX_C_FLOAT16, MPI_SUM, sc));
                CUDA_OK(cudaStreamSynchronize(st));
            }
            uint16_t *got = malloc(n * sizeof(uint16_t));
            CUDA_OK(cudaMemcpy(got, d, n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < n; i++)
                if (got[i] != want)
                    FAIL("float16 sum (%s, %zu elements): element %zu is 0x%04x, expected 0x%04x (accumulated in float)",
                         blocking ? "blocking" : "enqueued", n, i, got[i], want);
            free(got);
        }
        CUDA_OK(cudaFree(d));
        free(h);
    }
}

static void test_errors(void)
{
    MPI_OK(MPI_Comm_set_errhandler(sc, MPI_ERRORS_RETURN));
    float host[64];
    void *h = (void *)1;
    const int rc = MPIX_Comm_register_buffer(sc, host, sizeof(host), &h);
    CHECK(rc != MPI_SUCCESS, "a host buffer was registered");
    CHECK(h == NULL, "a failed registration left a handle");
    int bogus = 0;
    CHECK(error_class(MPIX_Comm_deregister_buffer(sc, &bogus)) == MPI_ERR_ARG, "a bogus handle was accepted");
    CHECK(error_class(MPIX_Comm_deregister_buffer(sc, NULL)) == MPI_ERR_ARG, "a NULL handle was accepted");
    MPI_OK(MPI_Comm_set_errhandler(sc, MPI_ERRORS_ARE_FATAL));
}

/* The calls enqueue(arg) makes on st, captured into a CUDA graph and instantiated. */
static cudaGraphExec_t capture(void (*enqueue)(void *), void *arg)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamSynchronize(st));
    CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed));
    enqueue(arg);
    CUDA_OK(cudaStreamEndCapture(st, &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_OK(cudaGraphDestroy(graph));
    return exec;
}

struct captured_calls { float *in, *out, *io; size_t n; };
static void enqueue_allreduces(void *arg)
{
    const struct captured_calls *c = arg;
    MPI_OK(MPIX_Allreduce_enqueue(c->in, c->out, (int)c->n, MPI_FLOAT, MPI_SUM, sc));
    MPI_OK(MPIX_Allreduce_enqueue(MPI_IN_PLACE, c->io, (int)c->n, MPI_FLOAT, MPI_SUM, sc));
}

static void test_captured(void)
{
    const size_t sizes[] = {100000, 600000};
    for (int k = 0; k < 2; k++) {
        const size_t n = sizes[k];
        float *in, *out, *io;
        CUDA_OK(cudaMalloc((void **)&in, n * sizeof(float)));
        CUDA_OK(cudaMalloc((void **)&out, n * sizeof(float)));
        CUDA_OK(cudaMalloc((void **)&io, n * sizeof(float)));
        struct captured_calls calls = {in, out, io, n};
        cudaGraphExec_t exec = capture(enqueue_allreduces, &calls);
        for (int replay = 0; replay < 3; replay++) {
            char what[96];
            fill(in, n, 50 + replay);
            fill(io, n, 70 + replay);
            CUDA_OK(cudaGraphLaunch(exec, st));
            snprintf(what, sizeof what, "captured Allreduce_enqueue, replay %d (%zu floats)", replay, n);
            sync_and_check(out, n, 50 + replay, what);
            snprintf(what, sizeof what, "captured in-place Allreduce_enqueue, replay %d (%zu floats)", replay, n);
            check(io, n, 70 + replay, what);
        }
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaFree(in));
        CUDA_OK(cudaFree(out));
        CUDA_OK(cudaFree(io));
    }
    if (t_rank == 0) printf("captured allreduce on unregistered buffers: 2 sizes, 3 replays checked\n");
}

/* Many calls on the same buffers settle automatic registration (its host agreement then runs
 * on fewer and fewer calls); new buffers after that, and the old ones again, still sum right
 * on every call, whichever calls agree. */
static void test_settled(void)
{
    const size_t n = 300000;
    float *a_in, *a_out, *b_in, *b_out;
    CUDA_OK(cudaMalloc((void **)&a_in, n * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&a_out, n * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&b_in, n * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&b_out, n * sizeof(float)));
    const struct { float *in, *out; int calls; } phases[] = {{a_in, a_out, 150}, {b_in, b_out, 150}, {a_in, a_out, 20}};
    int salt = 0;
    for (int p = 0; p < 3; p++) {
        for (int k = 0; k < phases[p].calls; k++, salt++) {
            char what[96];
            fill(phases[p].in, n, salt % 200);
            MPI_OK(MPIX_Allreduce_enqueue(phases[p].in, phases[p].out, (int)n, MPI_FLOAT, MPI_SUM, sc));
            snprintf(what, sizeof what, "phase %d, call %d of the same buffers (%zu floats)", p, k, n);
            sync_and_check(phases[p].out, n, salt % 200, what);
        }
    }
    CUDA_OK(cudaFree(a_in));
    CUDA_OK(cudaFree(a_out));
    CUDA_OK(cudaFree(b_in));
    CUDA_OK(cudaFree(b_out));
    if (t_rank == 0) printf("settled automatic registration: %d calls on two buffer pairs checked\n", salt);
}

/* Calls on parts of `in` and `out` (each of `all` floats) on a fresh communicator, whose
 * automatic registration agrees on every call (a miss would register): the first calls make
 * `expected` registrations where registration is automatic, the later ones, on a larger count
 * and at offsets, none. */
static void calls_on_parts(float *in, float *out, size_t all, int automatic, unsigned long long expected,
                           const char *layout)
{
    const size_t n = all / 3;
    const struct { size_t off, count; } calls[] = {{0, n}, {0, n}, {0, 2 * n}, {n, n}, {2 * n, n}, {0, all}};
    MPI_Comm fresh;
    MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &fresh));
    const unsigned long long made_before = t_pvar_now("weft_gpu_registrations_made", MPI_T_PVAR_CLASS_COUNTER);
    unsigned long long made_first = 0;
    for (int k = 0; k < (int)(sizeof calls / sizeof calls[0]); k++) {
        char what[160];
        const size_t off = calls[k].off, count = calls[k].count;
        fill(in + off, count, 30 + k);
        MPI_OK(MPIX_Allreduce_enqueue(in + off, out + off, (int)count, MPI_FLOAT, MPI_SUM, fresh));
        snprintf(what, sizeof what, "%s, call %d (%zu floats at %zu)", layout, k, count, off);
        sync_and_check(out + off, count, 30 + k, what);
        const unsigned long long made = t_pvar_now("weft_gpu_registrations_made", MPI_T_PVAR_CLASS_COUNTER);
        if (k == 1) {
            made_first = made;
            if (automatic)
                CHECK(made - made_before == expected, "%s: the first calls made %llu registrations, expected %llu",
                      layout, made - made_before, expected);
        } else if (k > 1) {
            CHECK(made == made_first, "%s: call %d (%zu floats at %zu) made %llu registrations of its own", layout, k,
                  count, off, made - made_first);
        }
    }
    MPI_OK(MPI_Comm_free(&fresh));
}

/* Automatic registration covers the buffers' whole allocations: input and output in two
 * allocations (two registrations), then in one (one registration). The second communicator's
 * workspace may reuse memory of the first's freed buffers, which the first's registrations
 * kept mapped. */
static void test_whole_allocation(void)
{
    const char *fused = getenv("WEFT_GPU_FUSED");
    /* The variants leave WEFT_GPU_AUTO_REGISTER_MIN unset (256 KiB) or set it to 0. */
    const int automatic = fused && !strcmp(fused, "on") && !getenv("WEFT_GPU_AUTO_REGISTER_MIN");
    const size_t all = 300000; /* calls of 400 KB and more */
    float *in, *out, *both;
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CUDA_OK(cudaMalloc((void **)&in, all * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&out, all * sizeof(float)));
    calls_on_parts(in, out, all, automatic, 2, "two allocations");
    CUDA_OK(cudaFree(in));
    CUDA_OK(cudaFree(out));
    CUDA_OK(cudaMalloc((void **)&both, 2 * all * sizeof(float)));
    calls_on_parts(both, both + all, all, automatic, 1, "one allocation");
    CUDA_OK(cudaFree(both));
    MPI_OK(MPI_T_finalize());
    if (t_rank == 0)
        printf("calls on other parts of registered allocations: 2 layouts checked%s\n",
               automatic ? ", no registration after the first calls" : "");
}

static void enqueue_reduce_scatter(void *arg)
{
    const struct captured_calls *c = arg;
    MPI_OK(MPIX_Reduce_scatter_block_enqueue(c->in, c->out, (int)c->n, MPI_FLOAT, MPI_SUM, sc));
}

static void test_reduce_scatter(void)
{
    /* One launch; fused pieces (blocking too at 4 ranks, below gpu_reduce_scatter_direct's 4 MiB);
     * fused pieces whose blocks are not 16-byte aligned. */
    const size_t sizes[] = {20000, 150001, 300001};
    for (int k = 0; k < 3; k++) {
        const size_t n = sizes[k], all = n * (size_t)t_size, bytes = all * sizeof(float);
        char what[128];
        float *in, *out, *plain_in, *plain_out;
        CUDA_OK(cudaMalloc((void **)&in, bytes));
        CUDA_OK(cudaMalloc((void **)&out, n * sizeof(float)));
        CUDA_OK(cudaMalloc((void **)&plain_in, bytes));
        CUDA_OK(cudaMalloc((void **)&plain_out, bytes));
        void *hin = reg(in, bytes);

        fill(in, all, 11);
        MPI_OK(MPIX_Reduce_scatter_block_enqueue(in, out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "Reduce_scatter_block_enqueue, registered input, %zu floats a rank", n);
        check_scatter(out, n, 11, what);

        fill(plain_in, all, 12);
        MPI_OK(MPIX_Reduce_scatter_block_enqueue(plain_in, plain_out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "Reduce_scatter_block_enqueue, unregistered, %zu floats a rank", n);
        check_scatter(plain_out, n, 12, what);

        float *mi = t_rank == 0 ? in : plain_in;
        fill(mi, all, 13);
        MPI_OK(MPIX_Reduce_scatter_block_enqueue(mi, out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "Reduce_scatter_block_enqueue, rank 0 registered, %zu floats a rank", n);
        check_scatter(out, n, 13, what);

        fill(plain_out, all, 14);
        MPI_OK(MPIX_Reduce_scatter_block_enqueue(MPI_IN_PLACE, plain_out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "Reduce_scatter_block_enqueue in place, %zu floats a rank", n);
        check_scatter(plain_out, n, 14, what);

        fill(in, all, 15);
        MPI_OK(MPI_Reduce_scatter_block(in, out, (int)n, MPI_FLOAT, MPI_SUM, sc));
        snprintf(what, sizeof(what), "blocking MPI_Reduce_scatter_block, registered input, %zu floats a rank", n);
        check_scatter(out, n, 15, what);
        MPI_OK(MPIX_Comm_deregister_buffer(sc, hin));

        /* Captured on buffers of its own (a capture registers them), replayed with new data. */
        float *cin, *cout;
        CUDA_OK(cudaMalloc((void **)&cin, bytes));
        CUDA_OK(cudaMalloc((void **)&cout, n * sizeof(float)));
        struct captured_calls calls = {cin, cout, NULL, n};
        cudaGraphExec_t exec = capture(enqueue_reduce_scatter, &calls);
        for (int replay = 0; replay < 3; replay++) {
            fill(cin, all, 80 + replay);
            CUDA_OK(cudaGraphLaunch(exec, st));
            snprintf(what, sizeof what, "captured Reduce_scatter_block_enqueue, replay %d (%zu floats a rank)", replay, n);
            check_scatter(cout, n, 80 + replay, what);
        }
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaFree(cin));
        CUDA_OK(cudaFree(cout));
        CUDA_OK(cudaFree(in));
        CUDA_OK(cudaFree(out));
        CUDA_OK(cudaFree(plain_in));
        CUDA_OK(cudaFree(plain_out));
    }
    if (t_rank == 0) printf("reduce_scatter_block on registered and unregistered inputs: 3 sizes checked\n");
}

static unsigned long long registrations_gone(void)
{
    return t_pvar_now("weft_gpu_registrations_evicted", MPI_T_PVAR_CLASS_COUNTER) +
           t_pvar_now("weft_gpu_registrations_dropped_stale", MPI_T_PVAR_CLASS_COUNTER);
}

/* The table is bounded: with the calls' own registrations of the tests above still cached
 * (uncaptured ones live, captured ones on freed memory), the user's 64 registrations all
 * succeed (evicting them), a 65th fails on every rank with no hang, and a call on a slice sums
 * right. */
static void test_bound(void)
{
    enum { slices = 65, n = 4096 };
    float *slab;
    void *h[slices];
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    const unsigned long long live_before = t_pvar_now("weft_gpu_registrations_live", MPI_T_PVAR_CLASS_LEVEL);
    const unsigned long long gone_before = registrations_gone();
    CUDA_OK(cudaMalloc((void **)&slab, (size_t)slices * n * sizeof(float)));
    for (int k = 0; k < slices - 1; k++) h[k] = reg(slab + (size_t)k * n, n * sizeof(float));
    /* The 64 ids are the user's now: the calls' registrations live before went. */
    const unsigned long long live = t_pvar_now("weft_gpu_registrations_live", MPI_T_PVAR_CLASS_LEVEL);
    const unsigned long long gone = registrations_gone() - gone_before;
    CHECK(live >= slices - 1, "%llu registrations live after %d user registrations", live, slices - 1);
    CHECK(live_before == 0 || gone > 0, "%llu registrations were live, none was evicted or dropped", live_before);
    if (t_rank == 0) printf("registrations live before: %llu, evicted or dropped since: %llu\n", live_before, gone);
    MPI_OK(MPI_Comm_set_errhandler(sc, MPI_ERRORS_RETURN));
    h[slices - 1] = (void *)1;
    const int rc = MPIX_Comm_register_buffer(sc, slab + (size_t)(slices - 1) * n, n * sizeof(float), &h[slices - 1]);
    CHECK(rc != MPI_SUCCESS && h[slices - 1] == NULL, "a 65th registration succeeded");
    MPI_OK(MPI_Comm_set_errhandler(sc, MPI_ERRORS_ARE_FATAL));
    float *a = slab + 7 * (size_t)n, *b = slab + 40 * (size_t)n;
    fill(a, n, 90);
    MPI_OK(MPIX_Allreduce_enqueue(a, b, n, MPI_FLOAT, MPI_SUM, sc));
    sync_and_check(b, n, 90, "enqueued allreduce on two of 64 registered slices");
    for (int k = 0; k < slices - 1; k++) MPI_OK(MPIX_Comm_deregister_buffer(sc, h[k]));
    CUDA_OK(cudaFree(slab));
    MPI_OK(MPI_T_finalize());
    if (t_rank == 0) printf("64 registrations over cached ones, a 65th refused\n");
}

int main(int argc, char **argv)
{
    t_gpu_init(&argc, &argv, "registered");
    CUDA_OK(cudaStreamCreate(&st));
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "type", "cudaStream_t"));
    MPI_OK(MPIX_Info_set_hex(info, "value", &st, (int)sizeof(st)));
    MPI_OK(MPIX_Stream_create(info, &ms));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &sc));
    test_errors();
    test_sizes();
    test_persistent();
    test_half_accumulation();
    test_captured();
    test_settled();
    test_whole_allocation();
    test_reduce_scatter();
    test_bound();
    test_errors();
    MPI_OK(MPI_Comm_free(&sc));
    MPI_OK(MPIX_Stream_free(&ms));
    CUDA_OK(cudaStreamDestroy(st));
    t_done();
    return 0;
}
