/*
 * gpu_bench_common.c - shared driver of the GPU benchmark programs; see
 * gpu_bench_common.h.
 *
 * MPI calls used: MPI_Init, MPI_Finalize, MPI_Comm_rank, MPI_Comm_size,
 * MPI_Comm_split_type, MPI_Comm_free, MPI_Allgather, MPI_Gather,
 * MPI_Allreduce, MPI_Bcast, MPI_Barrier, MPI_Wtime, MPI_Abort, MPI_Get_library_version,
 * MPI_Get_processor_name.
 */
#include "gpu_bench_common.h"
#include "bench_util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GB_EMPTY_REPS 2000
#define GB_EMPTY_WARMUP 200
#define GB_ROOF_REPS 20

static void gb_exit(int code)
{
    fflush(stdout);
    fflush(stderr);
    MPI_Finalize();
    exit(code);
}

void gb_die(const gb_ctx *ctx, const char *what, const char *detail)
{
    fprintf(stderr, "%s: rank %d: %s failed: %s\n", ctx->prog, ctx->rank, what, detail);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

int gb_parse_bytes(const char *s, size_t *out)
{
    char *end = NULL;
    unsigned long long v, mult = 1;
    if (s == NULL || *s == '\0' || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || end == s)
        return -1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mult = 1ull << 10; ++end; break;
    case 'm': case 'M': mult = 1ull << 20; ++end; break;
    case 'g': case 'G': mult = 1ull << 30; ++end; break;
    default: return -1;
    }
    if (*end == 'B' || *end == 'b')
        ++end;
    if (*end != '\0' || (v != 0 && mult > SIZE_MAX / v))
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

/* The launcher's node-local rank, or -1 when the environment names none. */
int gb_env_local_rank(void)
{
    static const char *const names[] = {
        "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
        "PMI_LOCAL_RANK", "PMIX_LOCAL_RANK", "SLURM_LOCALID",
    };
    size_t i;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        const char *v = getenv(names[i]);
        int r;
        if (v != NULL && bench_parse_int(v, 0, &r) == 0)
            return r;
    }
    return -1;
}

static void print_usage(const gb_ctx *c, const char *what, const char *extra)
{
    printf("Usage: %s [options]\n%s\n\n", c->prog, what);
    printf("Options:\n");
    printf("  -b SIZE   smallest message in bytes (default 8; K, M, G suffixes)\n");
    printf("  -e SIZE   largest message in bytes (default 1G)\n");
    printf("  -f N      size factor between rows (default 2)\n");
    printf("  -t TYPE   int32, float (default) or double; the operation is a sum\n");
    printf("  -w N      warm-up iterations per size and placement (default 5)\n");
    printf("  -n N      timed iterations per size and placement (default 20)\n");
    printf("  -c 0|1    check the result of one call per size (default 1)\n");
    printf("  -r SIZE   buffer of the device-copy roofline (default 256M)\n");
    if (extra != NULL)
        printf("%s", extra);
    printf("  -h        print this help and exit\n\n");
    printf("Each rank uses GPU (node-local rank %% visible devices).  Times are the\n");
    printf("average over the timed iterations, maximum over the ranks.\n");
}

static void usage_error(const gb_ctx *c, const char *msg, const char *arg)
{
    if (c->rank == 0)
        fprintf(stderr, "%s: %s%s%s (try -h)\n", c->prog, msg, arg ? ": " : "", arg ? arg : "");
    gb_exit(1);
}

void gb_init(int *argc, char ***argv, const char *prog, const char *what,
             const char *usage_extra, gb_ctx *c)
{
    int i, env_rank, ndev = 0;
    char *busids;
    int same = 0, first = 1;

    memset(c, 0, sizeof(*c));
    c->prog = prog;
    c->min_bytes = 8;
    c->max_bytes = (size_t)1 << 30;
    c->factor = 2;
    c->warmup = 5;
    c->iters = 20;
    c->type = GB_FLOAT;
    c->check = 1;
    c->roof_bytes = (size_t)256 << 20;
    c->ipc_bytes = (size_t)4 << 20;

    /* Pick the device before MPI_Init when the launcher says which local rank this is,
     * so a CUDA-aware MPI sees the right current device from the start. */
    env_rank = gb_env_local_rank();
    if (env_rank >= 0 && cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0)
        cudaSetDevice(env_rank % ndev);

    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->nranks);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL,
                        &c->node_comm);
    MPI_Comm_rank(c->node_comm, &c->local_rank);
    MPI_Comm_size(c->node_comm, &c->local_size);

    for (i = 1; i < *argc; ++i) {
        const char *a = (*argv)[i];
        const char *v = (i + 1 < *argc) ? (*argv)[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (c->rank == 0)
                print_usage(c, what, usage_extra);
            gb_exit(0);
        }
        if (a[0] != '-' || a[1] == '\0' || a[2] != '\0')
            usage_error(c, "unknown argument", a);
        if (v == NULL)
            usage_error(c, "option needs a value", a);
        switch (a[1]) {
        case 'b': if (gb_parse_bytes(v, &c->min_bytes)) usage_error(c, "bad size", v); break;
        case 'e': if (gb_parse_bytes(v, &c->max_bytes)) usage_error(c, "bad size", v); break;
        case 'r': if (gb_parse_bytes(v, &c->roof_bytes) || c->roof_bytes == 0)
                      usage_error(c, "bad size", v);
                  break;
        case 's': if (usage_extra == NULL) usage_error(c, "unknown option", a);
                  if (gb_parse_bytes(v, &c->ipc_bytes) || c->ipc_bytes == 0)
                      usage_error(c, "bad size", v);
                  break;
        case 'f': {
            int f;
            if (bench_parse_int(v, 2, &f)) usage_error(c, "-f needs an integer >= 2", v);
            c->factor = (size_t)f;
            break;
        }
        case 'w': if (bench_parse_int(v, 0, &c->warmup)) usage_error(c, "bad count", v); break;
        case 'n': if (bench_parse_int(v, 1, &c->iters)) usage_error(c, "bad count", v); break;
        case 'c': if (bench_parse_int(v, 0, &c->check) || c->check > 1) usage_error(c, "-c takes 0 or 1", v); break;
        case 't':
            if (strcmp(v, "int32") == 0 || strcmp(v, "int") == 0) c->type = GB_INT32;
            else if (strcmp(v, "float") == 0 || strcmp(v, "float32") == 0) c->type = GB_FLOAT;
            else if (strcmp(v, "double") == 0 || strcmp(v, "float64") == 0) c->type = GB_DOUBLE;
            else usage_error(c, "unknown type (int32, float, double)", v);
            break;
        default:
            usage_error(c, "unknown option", a);
        }
        ++i;
    }
    if (c->min_bytes == 0)
        c->min_bytes = 1;
    if (c->max_bytes < c->min_bytes)
        usage_error(c, "-e must not be below -b", NULL);

    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        if (c->rank == 0)
            fprintf(stderr, "%s: no CUDA device is usable\n", prog);
        gb_exit(1);
    }
    c->ndevices = ndev;
    c->device = (env_rank >= 0 ? env_rank : c->local_rank) % ndev;
    GB_CUDA(c, cudaSetDevice(c->device));
    GB_CUDA(c, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    GB_CUDA(c, cudaDeviceGetPCIBusId(c->busid, GB_BUSID_LEN, c->device));

    /* Ranks sharing this rank's GPU, and distinct GPUs, from the node's bus ids. */
    busids = calloc((size_t)c->local_size, GB_BUSID_LEN);
    if (busids == NULL)
        gb_die(c, "calloc", "out of memory");
    MPI_Allgather(c->busid, GB_BUSID_LEN, MPI_CHAR, busids, GB_BUSID_LEN, MPI_CHAR, c->node_comm);
    for (i = 0; i < c->local_size; ++i) {
        if (strncmp(busids + (size_t)i * GB_BUSID_LEN, c->busid, GB_BUSID_LEN) == 0) {
            ++same;
            if (i < c->local_rank)
                first = 0;
        }
    }
    free(busids);
    MPI_Allreduce(&same, &c->ranks_per_gpu, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&first, &c->gpus_used, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

void gb_print_setup(const gb_ctx *c)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    char line[MPI_MAX_PROCESSOR_NAME + GB_BUSID_LEN + 64];
    char *all = NULL;
    int len = 0, i;
    size_t n;

    memset(host, 0, sizeof(host));
    MPI_Get_processor_name(host, &len);
    snprintf(line, sizeof(line), "%s, GPU %d of %d (PCI %s)", host, c->device, c->ndevices,
             c->busid);
    if (c->rank == 0) {
        all = malloc(sizeof(line) * (size_t)c->nranks);
        if (all == NULL)
            gb_die(c, "malloc", "out of memory");
    }
    MPI_Gather(line, (int)sizeof(line), MPI_CHAR, all, (int)sizeof(line), MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (c->rank != 0)
        return;

    n = bench_library_version(version);
    printf("# %s\n", n > 0 ? version : "(unknown MPI library)");
    {
        int rt = 0, drv = 0;
        cudaRuntimeGetVersion(&rt);
        cudaDriverGetVersion(&drv);
        printf("# CUDA runtime %d.%d, driver API %d.%d\n", rt / 1000, (rt % 1000) / 10,
               drv / 1000, (drv % 1000) / 10);
    }
    printf("# %d ranks on %d GPU(s), at most %d rank(s) per GPU\n", c->nranks, c->gpus_used,
           c->ranks_per_gpu);
    for (i = 0; i < c->nranks; ++i)
        printf("#   rank %d: %s\n", i, all + (size_t)i * sizeof(line));
    free(all);
    fflush(stdout);
}

static double time_empty(gb_ctx *c)
{
    double t0;
    int i;
    for (i = 0; i < GB_EMPTY_WARMUP; ++i) {
        GB_CUDA(c, gb_launch_empty(c->stream));
        GB_CUDA(c, cudaStreamSynchronize(c->stream));
    }
    t0 = MPI_Wtime();
    for (i = 0; i < GB_EMPTY_REPS; ++i) {
        GB_CUDA(c, gb_launch_empty(c->stream));
        GB_CUDA(c, cudaStreamSynchronize(c->stream));
    }
    return (MPI_Wtime() - t0) / GB_EMPTY_REPS * 1e6;
}

static double time_copy8(gb_ctx *c, void *dst, const void *src, enum cudaMemcpyKind kind)
{
    double t0;
    int i;
    for (i = 0; i < GB_EMPTY_WARMUP; ++i) {
        GB_CUDA(c, cudaMemcpyAsync(dst, src, 8, kind, c->stream));
        GB_CUDA(c, cudaStreamSynchronize(c->stream));
    }
    t0 = MPI_Wtime();
    for (i = 0; i < GB_EMPTY_REPS; ++i) {
        GB_CUDA(c, cudaMemcpyAsync(dst, src, 8, kind, c->stream));
        GB_CUDA(c, cudaStreamSynchronize(c->stream));
    }
    return (MPI_Wtime() - t0) / GB_EMPTY_REPS * 1e6;
}

static double time_roofline(gb_ctx *c)
{
    void *a = NULL, *b = NULL;
    cudaEvent_t e0, e1;
    float ms = 0.0f;
    int i;
    GB_CUDA(c, cudaMalloc(&a, c->roof_bytes));
    GB_CUDA(c, cudaMalloc(&b, c->roof_bytes));
    GB_CUDA(c, cudaMemsetAsync(a, 1, c->roof_bytes, c->stream));
    GB_CUDA(c, cudaMemsetAsync(b, 2, c->roof_bytes, c->stream));
    GB_CUDA(c, cudaEventCreate(&e0));
    GB_CUDA(c, cudaEventCreate(&e1));
    for (i = 0; i < 3; ++i)
        GB_CUDA(c, cudaMemcpyAsync(b, a, c->roof_bytes, cudaMemcpyDeviceToDevice, c->stream));
    GB_CUDA(c, cudaEventRecord(e0, c->stream));
    for (i = 0; i < GB_ROOF_REPS; ++i)
        GB_CUDA(c, cudaMemcpyAsync(b, a, c->roof_bytes, cudaMemcpyDeviceToDevice, c->stream));
    GB_CUDA(c, cudaEventRecord(e1, c->stream));
    GB_CUDA(c, cudaEventSynchronize(e1));
    GB_CUDA(c, cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    /* bytes read + bytes written */
    return 2.0 * (double)c->roof_bytes * GB_ROOF_REPS / (ms / 1e3) / 1e9;
}

void gb_measure_floors(gb_ctx *c, gb_floors *f)
{
    void *d = NULL;
    char host[64];
    double mine, v[5] = {0.0, 0.0, 0.0, 0.0, 0.0};

    memset(f, 0, sizeof(*f));
    memset(host, 0, sizeof(host));
    GB_CUDA(c, cudaMalloc(&d, 512));
    GB_CUDA(c, cudaMemset(d, 0, 512));
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0) {
        v[0] = time_empty(c);
        v[1] = time_copy8(c, (char *)d + 256, d, cudaMemcpyDeviceToDevice);
        v[2] = time_copy8(c, host, d, cudaMemcpyDeviceToHost);
        v[3] = time_copy8(c, d, host, cudaMemcpyHostToDevice);
        v[4] = time_roofline(c);
    }
    /* Everyone uses rank 0's numbers. */
    MPI_Bcast(v, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    f->empty_us = v[0];
    f->copy8_us = v[1];
    f->d2h8_us = v[2];
    f->h2d8_us = v[3];
    f->copy_gbs = v[4];
    MPI_Barrier(MPI_COMM_WORLD);
    mine = time_empty(c);
    MPI_Allreduce(&mine, &f->empty_all_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    cudaFree(d);
}

void gb_print_floors(const gb_ctx *c, const gb_floors *f)
{
    if (c->rank != 0)
        return;
    printf("#\n# Floors measured in this run (rank 0 alone on its GPU unless said otherwise):\n");
    printf("#   empty kernel + cudaStreamSynchronize : %8.2f us   (all %d ranks at once: %.2f us, max)\n",
           f->empty_us, c->nranks, f->empty_all_us);
    printf("#   8 B cudaMemcpyAsync D2D + sync        : %8.2f us\n", f->copy8_us);
    printf("#   8 B cudaMemcpyAsync D2H + sync        : %8.2f us   (pageable host)\n", f->d2h8_us);
    printf("#   8 B cudaMemcpyAsync H2D + sync        : %8.2f us   (pageable host)\n", f->h2d8_us);
    printf("#   D2D copy roofline (%zu MiB memcpy)  : %8.1f GB/s counting bytes read + written\n",
           c->roof_bytes >> 20, f->copy_gbs);
    printf("# FLOOR empty_us=%.2f empty_all_us=%.2f copy8_us=%.2f d2h8_us=%.2f h2d8_us=%.2f roof_gbs=%.1f\n",
           f->empty_us, f->empty_all_us, f->copy8_us, f->d2h8_us, f->h2d8_us, f->copy_gbs);
    fflush(stdout);
}

/* One placement (out of place or in place) of one size. */
static void measure(gb_ctx *c, int inplace, void *sbuf, void *rbuf, size_t count,
                    gb_allreduce_fn op, gb_sync_fn sync, void *user,
                    unsigned long long *scratch, double *t_us, long long *wrong)
{
    const size_t bytes = count * gb_type_size(c->type);
    const void *src = inplace ? NULL : sbuf;
    long long bad = 0, total = 0;
    double t0, t, tmax = 0.0;
    int i;

    if (c->check) {
        unsigned long long w = 0;
        if (inplace)
            GB_CUDA(c, gb_fill(rbuf, count, c->type, c->rank, c->stream));
        else
            GB_CUDA(c, cudaMemsetAsync(rbuf, 0xff, bytes, c->stream)); /* NaN / -1 */
        GB_CUDA(c, cudaStreamSynchronize(c->stream));
        MPI_Barrier(MPI_COMM_WORLD);
        if (op(src, rbuf, count, c->type, user) != 0)
            ++bad;
        if (sync(user) != 0)
            ++bad;
        GB_CUDA(c, gb_check(rbuf, count, c->type, c->nranks, scratch, c->stream, &w));
        bad += (long long)w;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 0; i < c->warmup; ++i)
        if (op(src, rbuf, count, c->type, user) != 0)
            ++bad;
    if (sync(user) != 0)
        ++bad;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (i = 0; i < c->iters; ++i)
        if (op(src, rbuf, count, c->type, user) != 0)
            ++bad;
    if (sync(user) != 0)
        ++bad;
    t = (MPI_Wtime() - t0) / c->iters * 1e6;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    *t_us = tmax;
    *wrong = total;
}

static void print_cols(const gb_ctx *c, const gb_floors *f, size_t bytes, double t_us,
                       long long wrong)
{
    const double p = (double)c->nranks;
    const double algbw = (double)bytes / (t_us * 1e-6) / 1e9;
    const double busbw = algbw * (p > 1 ? 2.0 * (p - 1.0) / p : 0.0);
    /* Least device-memory time: every rank's input read once and output written once,
     * in the memory of the GPU that holds the most ranks. */
    const double roof_us = 2.0 * (double)c->ranks_per_gpu * (double)bytes / (f->copy_gbs * 1e9) * 1e6;
    printf(" %11.2f %8.2f %8.2f %6lld %9.2f %6.2f", t_us, algbw, busbw, wrong,
           f->empty_us > 0 ? t_us / f->empty_us : 0.0, roof_us / t_us * 100.0);
}

long long gb_run_sweep(gb_ctx *c, const gb_floors *f, const char *impl, gb_allreduce_fn op,
                       gb_sync_fn sync, void *user)
{
    const size_t ts = gb_type_size(c->type);
    const size_t maxcount = c->max_bytes / ts > 0 ? c->max_bytes / ts : 1;
    void *sbuf = NULL, *rbuf = NULL;
    unsigned long long *scratch = NULL;
    long long errors = 0;
    size_t bytes;

    GB_CUDA(c, cudaMalloc(&sbuf, maxcount * ts));
    GB_CUDA(c, cudaMalloc(&rbuf, maxcount * ts));
    GB_CUDA(c, cudaMalloc((void **)&scratch, sizeof(*scratch)));
    GB_CUDA(c, gb_fill(sbuf, maxcount, c->type, c->rank, c->stream));
    GB_CUDA(c, cudaMemsetAsync(rbuf, 0, maxcount * ts, c->stream));
    GB_CUDA(c, cudaStreamSynchronize(c->stream));
    if (c->buffers_hook && c->buffers_hook(sbuf, rbuf, maxcount * ts, 1, user)) {
        fprintf(stderr, "%s: the buffers hook failed\n", c->prog);
        errors++;
    }

    if (c->rank == 0) {
        printf("#\n# %s: sum of %s, %d warm-up and %d timed iterations per size and placement%s\n",
               impl, gb_type_name(c->type), c->warmup, c->iters,
               c->check ? ", one extra checked call per size" : ", results not checked");
        printf("# time: average per call in us, max over ranks; algbw = size / time;"
               " busbw = algbw * 2(p-1)/p, p = %d\n", c->nranks);
        printf("# xfloor = time / (empty kernel + sync) = time / %.2f us\n", f->empty_us);
        printf("# roof%% = 100 * T_roof / time, T_roof(S) = 2 * k * S / (%.1f GB/s), k = %d rank(s)"
               " per GPU:\n#   the device-memory traffic every allreduce must make (each rank's"
               " input read once,\n#   its output written once) at the D2D copy roofline\n",
               f->copy_gbs, c->ranks_per_gpu);
        printf("# %35s %-53s %-53s\n", "", "                      out-of-place",
               "                        in-place");
        printf("# %10s %11s %6s %5s %11s %8s %8s %6s %9s %6s %11s %8s %8s %6s %9s %6s\n",
               "size", "count", "type", "redop",
               "time", "algbw", "busbw", "#wrong", "xfloor", "roof%",
               "time", "algbw", "busbw", "#wrong", "xfloor", "roof%");
        printf("# %10s %11s %6s %5s %11s %8s %8s %6s %9s %6s %11s %8s %8s %6s %9s %6s\n",
               "(B)", "(elements)", "", "",
               "(us)", "(GB/s)", "(GB/s)", "", "(x)", "",
               "(us)", "(GB/s)", "(GB/s)", "", "(x)", "");
        fflush(stdout);
    }

    for (bytes = c->min_bytes; bytes <= c->max_bytes;) {
        const size_t count = bytes / ts;
        if (count > 0) {
            double t_oop, t_ip;
            long long w_oop, w_ip;
            measure(c, 0, sbuf, rbuf, count, op, sync, user, scratch, &t_oop, &w_oop);
            measure(c, 1, sbuf, rbuf, count, op, sync, user, scratch, &t_ip, &w_ip);
            errors += w_oop + w_ip;
            if (c->rank == 0) {
                printf("  %10zu %11zu %6s %5s", count * ts, count, gb_type_name(c->type), "sum");
                print_cols(c, f, count * ts, t_oop, w_oop);
                print_cols(c, f, count * ts, t_ip, w_ip);
                printf("\n");
                fflush(stdout);
            }
        }
        if (bytes > c->max_bytes / c->factor)
            break;
        bytes *= c->factor;
    }
    if (c->rank == 0) {
        printf("# Out of bounds values : %lld %s\n", errors, errors ? "ERROR" : "OK");
        fflush(stdout);
    }
    if (c->buffers_hook) (void)c->buffers_hook(sbuf, rbuf, maxcount * ts, 0, user);
    cudaFree(sbuf);
    cudaFree(rbuf);
    cudaFree(scratch);
    return errors;
}

int gb_finalize(gb_ctx *c, int code)
{
    fflush(stdout);
    fflush(stderr);
    if (c->stream != NULL)
        cudaStreamDestroy(c->stream);
    MPI_Comm_free(&c->node_comm);
    MPI_Finalize();
    return code;
}
