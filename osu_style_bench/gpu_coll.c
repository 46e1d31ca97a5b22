/*
 * gpu_coll.c - sweep of the other GPU collectives on device buffers: broadcast, allgather,
 * reduce_scatter_block and reduce (float sum), blocking (MPI_*) and stream-ordered
 * (MPIX_*_enqueue on a stream communicator, calls back to back, one cudaStreamSynchronize per
 * timed batch, as gpu_allreduce's GPU_ALLREDUCE_STREAM=1).
 *
 *   GPU_COLL=bcast|allgather|reduce_scatter|reduce [GPU_COLL_STREAM=1] \
 *     mpirun -np P gpu_coll [-b 8] [-e 1G] [-f 2] [-w 5] [-n 20]
 *
 * size is the bytes of one rank's block: the broadcast message, each rank's allgather
 * contribution, each rank's reduce_scatter_block result, the reduce vector. One checked call
 * per size: the result is copied to the host and compared element by element.
 * xfloor = time / (empty kernel + sync), as gpu_allreduce. roof% = 100 * T_roof / time, where
 * T_roof is the device-memory traffic the collective must make on a GPU that k ranks share,
 * at the D2D copy roofline (bytes read + written): broadcast k*S (the root's vector read, k-1
 * copies written), allgather and reduce_scatter_block (k + k*k)*S, reduce (k + 1)*S.
 *
 * Exit status: 0 when every checked result was right, 1 otherwise.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_bench_common.h"

enum which { BCAST, ALLGATHER, REDUCE_SCATTER, REDUCE };
static const char *const names[] = {"broadcast", "allgather", "reduce_scatter_block", "reduce"};

struct sweep {
    gb_ctx *c;
    enum which coll;
    int stream_mode;
    MPI_Comm comm;  /* MPI_COMM_WORLD, or the stream communicator */
    cudaStream_t stream;
    float *send, *recv;
};

/* Elements of each buffer for a block of n elements. */
static size_t send_elems(const struct sweep *s, size_t n) { return s->coll == REDUCE_SCATTER ? n * (size_t)s->c->nranks : n; }
static size_t recv_elems(const struct sweep *s, size_t n) { return s->coll == ALLGATHER ? n * (size_t)s->c->nranks : n; }

static int one_call(const struct sweep *s, size_t n)
{
    const int cnt = (int)n, root = 0;
#ifdef MPIX_STREAM_NULL
    if (s->stream_mode) {
        switch (s->coll) {
        case BCAST: return MPIX_Bcast_enqueue(s->recv, cnt, MPI_FLOAT, root, s->comm);
        case ALLGATHER: return MPIX_Allgather_enqueue(s->send, cnt, MPI_FLOAT, s->recv, cnt, MPI_FLOAT, s->comm);
        case REDUCE_SCATTER:
            return MPIX_Reduce_scatter_block_enqueue(s->send, s->recv, cnt, MPI_FLOAT, MPI_SUM, s->comm);
        case REDUCE: return MPIX_Reduce_enqueue(s->send, s->recv, cnt, MPI_FLOAT, MPI_SUM, root, s->comm);
        }
    }
#endif
    switch (s->coll) {
    case BCAST: return MPI_Bcast(s->recv, cnt, MPI_FLOAT, root, s->comm);
    case ALLGATHER: return MPI_Allgather(s->send, cnt, MPI_FLOAT, s->recv, cnt, MPI_FLOAT, s->comm);
    case REDUCE_SCATTER: return MPI_Reduce_scatter_block(s->send, s->recv, cnt, MPI_FLOAT, MPI_SUM, s->comm);
    case REDUCE: return MPI_Reduce(s->send, s->recv, cnt, MPI_FLOAT, MPI_SUM, root, s->comm);
    }
    return MPI_ERR_OTHER;
}

static int finish(const struct sweep *s)
{
    return (s->stream_mode ? cudaStreamSynchronize(s->stream) : cudaDeviceSynchronize()) != cudaSuccess;
}

/* Element j of rank r's send buffer (or the root's broadcast vector). */
static float value(size_t j, int r) { return (float)((int)(j % 13) + r + 1); }

/* One call on fresh data, its result checked on the host: the number of wrong elements. */
static long long checked_call(struct sweep *s, size_t n)
{
    gb_ctx *c = s->c;
    const int p = c->nranks;
    const size_t ns = send_elems(s, n), nr = recv_elems(s, n);
    float *h = malloc((ns > nr ? ns : nr) * sizeof(float));
    long long wrong = 0;
    if (!h) gb_die(c, "malloc", "out of host memory");
    if (s->coll == BCAST) {
        for (size_t j = 0; j < nr; j++) h[j] = c->rank == 0 ? value(j, 0) : -1.0f;
        GB_CUDA(c, cudaMemcpy(s->recv, h, nr * sizeof(float), cudaMemcpyHostToDevice));
    } else {
        for (size_t j = 0; j < ns; j++) h[j] = value(j, c->rank);
        GB_CUDA(c, cudaMemcpy(s->send, h, ns * sizeof(float), cudaMemcpyHostToDevice));
        GB_CUDA(c, cudaMemset(s->recv, 0xff, nr * sizeof(float)));
    }
    /* cudaMemset and a pageable cudaMemcpy may return before they land; the collective's
     * stream is non-blocking, so it would not wait for them. */
    GB_CUDA(c, cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    if (one_call(s, n) != MPI_SUCCESS) wrong++;
    if (finish(s)) wrong++;
    GB_CUDA(c, cudaMemcpy(h, s->recv, nr * sizeof(float), cudaMemcpyDeviceToHost));
    const int checks = s->coll != REDUCE || c->rank == 0;
    for (size_t j = 0; checks && j < nr; j++) {
        float want = 0;
        switch (s->coll) {
        case BCAST: want = value(j, 0); break;
        case ALLGATHER: want = value(j % n, (int)(j / n)); break;
        case REDUCE_SCATTER:
        case REDUCE: {
            const size_t g = s->coll == REDUCE_SCATTER ? (size_t)c->rank * n + j : j;
            for (int r = 0; r < p; r++) want += value(g, r);
            break;
        }
        }
        if (h[j] != want) wrong++;
    }
    free(h);
    return wrong;
}

static double timed(struct sweep *s, size_t n, long long *bad)
{
    gb_ctx *c = s->c;
    double t0, t, tmax = 0;
    for (int i = 0; i < c->warmup; i++)
        if (one_call(s, n) != MPI_SUCCESS) ++*bad;
    if (finish(s)) ++*bad;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < c->iters; i++)
        if (one_call(s, n) != MPI_SUCCESS) ++*bad;
    if (finish(s)) ++*bad;
    t = (MPI_Wtime() - t0) / c->iters * 1e6;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

/* Bytes of device memory the collective must read and write on a GPU k ranks share. */
static double roof_bytes(enum which coll, double S, double k)
{
    switch (coll) {
    case BCAST: return k * S;
    case ALLGATHER:
    case REDUCE_SCATTER: return (k + k * k) * S;
    case REDUCE: return (k + 1) * S;
    }
    return 0;
}

int main(int argc, char **argv)
{
    gb_ctx c;
    gb_floors f;
    struct sweep s;
    long long errors = 0;
    memset(&s, 0, sizeof s);

    gb_init(&argc, &argv, "gpu_coll",
            "sweep of broadcast, allgather, reduce_scatter_block or reduce on device buffers (GPU_COLL)",
            "  GPU_COLL=bcast|allgather|reduce_scatter|reduce (default allgather), GPU_COLL_STREAM=1: the\n"
            "  MPIX_*_enqueue form on a stream communicator\n",
            &c);
    s.c = &c;
    const char *which = getenv("GPU_COLL");
    s.coll = ALLGATHER;
    if (which && !strcmp(which, "bcast")) s.coll = BCAST;
    else if (which && !strcmp(which, "reduce_scatter")) s.coll = REDUCE_SCATTER;
    else if (which && !strcmp(which, "reduce")) s.coll = REDUCE;
    else if (which && strcmp(which, "allgather")) gb_die(&c, "GPU_COLL", which);
    const char *stream_env = getenv("GPU_COLL_STREAM");
    s.stream_mode = stream_env && atoi(stream_env);
    s.comm = MPI_COMM_WORLD;
    s.stream = c.stream;
#ifdef MPIX_STREAM_NULL
    if (s.stream_mode) {
        MPI_Info info;
        MPIX_Stream ms;
        if (MPI_Info_create(&info) != MPI_SUCCESS || MPI_Info_set(info, "type", "cudaStream_t") != MPI_SUCCESS ||
            MPIX_Info_set_hex(info, "value", &s.stream, (int)sizeof(s.stream)) != MPI_SUCCESS ||
            MPIX_Stream_create(info, &ms) != MPI_SUCCESS ||
            MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &s.comm) != MPI_SUCCESS)
            gb_die(&c, "MPIX_Stream_comm_create", "could not make a stream communicator");
        MPI_Info_free(&info);
    }
#else
    if (s.stream_mode) gb_die(&c, "GPU_COLL_STREAM", "this MPI has no MPIX stream API");
#endif
    gb_print_setup(&c);
    gb_measure_floors(&c, &f);
    gb_print_floors(&c, &f);
    MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);

    const size_t maxn = c.max_bytes / sizeof(float) > 0 ? c.max_bytes / sizeof(float) : 1;
    GB_CUDA(&c, cudaMalloc((void **)&s.send, send_elems(&s, maxn) * sizeof(float)));
    GB_CUDA(&c, cudaMalloc((void **)&s.recv, recv_elems(&s, maxn) * sizeof(float)));
    if (c.rank == 0) {
        printf("#\n# %s%s%s, float sum, %d warm-up and %d timed iterations per size, one checked call\n",
               s.stream_mode ? "MPIX_" : "MPI_", names[s.coll], s.stream_mode ? "_enqueue" : "", c.warmup,
               c.iters);
        printf("# size: one rank's block; time: per call in us, max over ranks; xfloor = time / %.2f us;\n"
               "# roof%% = 100 * T_roof / time at %.1f GB/s, k = %d rank(s) per GPU\n",
               f.empty_us, f.copy_gbs, c.ranks_per_gpu);
        printf("# %10s %11s %8s %6s %9s %6s\n", "size(B)", "time(us)", "algbw", "#wrong", "xfloor", "roof%");
        fflush(stdout);
    }
    for (size_t bytes = c.min_bytes; bytes <= c.max_bytes;) {
        const size_t n = bytes / sizeof(float);
        if (n > 0 && n <= (size_t)INT_MAX) {
            long long bad = checked_call(&s, n), total = 0;
            const double t = timed(&s, n, &bad);
            MPI_Allreduce(&bad, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            errors += total;
            if (c.rank == 0) {
                const double S = (double)(n * sizeof(float));
                const double roof_us = roof_bytes(s.coll, S, c.ranks_per_gpu) / (f.copy_gbs * 1e3);
                printf("  %10zu %11.2f %8.2f %6lld %9.2f %6.1f\n", n * sizeof(float), t, S / (t * 1e3), total,
                       t / f.empty_us, 100.0 * roof_us / t);
                fflush(stdout);
            }
        }
        if (bytes > c.max_bytes / c.factor) break;
        bytes *= c.factor;
    }
    if (c.rank == 0) printf("# Out of bounds values : %lld %s\n", errors, errors ? "ERROR" : "OK");
    cudaFree(s.send);
    cudaFree(s.recv);
    if (s.comm != MPI_COMM_WORLD) MPI_Comm_free(&s.comm);
    return gb_finalize(&c, errors != 0);
}
