/* MPI_Allreduce on GPU device buffers through the GPU-native algorithms (coll/gpu). CTest runs
 * it once per algorithm, forced with WEFT_COLL_TUNE, with a 1 MiB workspace (two 512 KiB
 * slots, so the largest size runs in several pieces) and WEFT_REQUIRE_FAST_PATH=1 (a call
 * staged through host memory is an error). Every type x op x size, in place and out of
 * place, is checked element by element against a host reference; then calls of different
 * sizes back to back on separate buffers, checked afterwards; then rank 0 on memory from the
 * stream-ordered pool (no IPC handle: gpu_direct falls back to gpu_two_shot on every rank).
 * Without a CUDA device every rank exits with 77, which CTest reports as skipped. */
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "gpu_common.h"


enum kind { I8, I16, I32, I64, F32, F64 };
struct type {
    MPI_Datatype dt;
    const char *name;
    enum kind kind;
    size_t size;
};
struct op {
    MPI_Op op;
    const char *name;
    int integer_only;
};

static void put(const struct type *t, void *buf, size_t i, int64_t v)
{
    switch (t->kind) {
    case I8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case I16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case I64: ((int64_t *)buf)[i] = v; break;
    case F32: ((float *)buf)[i] = (float)v; break;
    case F64: ((double *)buf)[i] = (double)v; break;
    }
}

/* Every value is an integer that the type holds exactly. */
static int64_t get(const struct type *t, const void *buf, size_t i)
{
    switch (t->kind) {
    case I8: return ((const int8_t *)buf)[i];
    case I16: return ((const int16_t *)buf)[i];
    case I32: return ((const int32_t *)buf)[i];
    case I64: return ((const int64_t *)buf)[i];
    case F32: return (int64_t)((const float *)buf)[i];
    case F64: return (int64_t)((const double *)buf)[i];
    }
    return 0;
}

/* Rank r's element i, small enough that sums (<= 4 x 7) and products (<= 2^4) stay exact. */
static int64_t value(MPI_Op op, int rank, size_t i)
{
    if (op == MPI_SUM) return (int64_t)((i * 3 + (size_t)rank * 5) % 8);
    if (op == MPI_PROD) return (i + (size_t)rank) % 3 == 0 ? 2 : 1;
    if (op == MPI_BAND) return (int64_t)((i * 0x9E3779B97F4A7C15ull + (uint64_t)rank * 0xBF58476D1CE4E5B9ull) >> 7);
    return (int64_t)((i * 7 + (size_t)rank * 13) % 101) - 50; /* max, min */
}

static int64_t combine(MPI_Op op, int64_t a, int64_t b)
{
    if (op == MPI_SUM) return a + b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_BAND) return a & b;
    if (op == MPI_MAX) return a > b ? a : b;
    return a < b ? a : b;
}

static size_t checked = 0;

/* Fills `host` with this rank's values (as the type holds them). */
static void fill(const struct type *t, MPI_Op op, void *host, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++) put(t, host, i, value(op, rank, i));
}

static void verify(const struct type *t, MPI_Op op, const char *opname, const void *got, size_t n, const char *how)
{
    void *one = malloc(t->size);
    for (size_t i = 0; i < n; i++) {
        int64_t want = 0;
        for (int q = 0; q < t_size; q++) {
            put(t, one, 0, value(op, q, i)); /* as the type holds it */
            const int64_t v = get(t, one, 0);
            want = q == 0 ? v : combine(op, want, v);
        }
        put(t, one, 0, want);
        want = get(t, one, 0);
        const int64_t have = get(t, got, i);
        if (have != want)
            FAIL("%s %s %s n=%zu: element %zu is %lld, expected %lld", how, t->name, opname, n, i, (long long)have,
                 (long long)want);
    }
    free(one);
    checked++;
}

static void run_one(const struct type *t, const struct op *o, size_t n, int in_place, void *host, void *dsend,
                    void *drecv)
{
    fill(t, o->op, host, n, t_rank);
    if (in_place) {
        CUDA_OK(cudaMemcpy(drecv, host, n * t->size, cudaMemcpyHostToDevice));
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, drecv, (int)n, t->dt, o->op, MPI_COMM_WORLD));
    } else {
        CUDA_OK(cudaMemcpy(dsend, host, n * t->size, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(drecv, 0x5a, n * t->size + 1));
        MPI_OK(MPI_Allreduce(dsend, drecv, (int)n, t->dt, o->op, MPI_COMM_WORLD));
    }
    CUDA_OK(cudaMemcpy(host, drecv, n * t->size, cudaMemcpyDeviceToHost));
    verify(t, o->op, o->name, host, n, in_place ? "in place" : "out of place");
}

int main(int argc, char **argv)
{
    t_gpu_init(&argc, &argv, "allreduce_gpu");
    const struct type types[] = {
        {MPI_INT8_T, "int8", I8, 1},   {MPI_SHORT, "short", I16, 2}, {MPI_INT32_T, "int32", I32, 4},
        {MPI_INT64_T, "int64", I64, 8}, {MPI_FLOAT, "float", F32, 4}, {MPI_DOUBLE, "double", F64, 8},
    };
    const struct op ops[] = {
        {MPI_SUM, "sum", 0}, {MPI_MAX, "max", 0}, {MPI_MIN, "min", 0}, {MPI_PROD, "prod", 0}, {MPI_BAND, "band", 1},
    };
    /* 600000 elements exceed a 512 KiB slot for every type (WEFT_GPU_COLL_SCRATCH=1m); 3001
     * and 20000 are middle sizes (the one-shot's multi-block grid, an uneven last chunk). */
    const size_t sizes[] = {0, 1, 7, 1023, 3001, 20000, 65536, 600000};
    const size_t most = 600000 * 8;
    void *host = malloc(most), *dsend = NULL, *drecv = NULL;
    CUDA_OK(cudaMalloc(&dsend, most + 1));
    CUDA_OK(cudaMalloc(&drecv, most + 1));
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
            const int floating = types[ti].kind == F32 || types[ti].kind == F64;
            if (ops[oi].integer_only && floating) continue;
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                for (int in_place = 0; in_place < 2; in_place++)
                    run_one(&types[ti], &ops[oi], sizes[si], in_place, host, dsend, drecv);
        }
    /* Back to back: different sizes (and so pieces and slots), checked only afterwards. */
    const size_t b2b[] = {5, 70000, 9000, 1, 600000, 33, 3001, 131072, 20000, 2};
    enum { NB = sizeof b2b / sizeof b2b[0] };
    void *bufs[NB];
    const struct type *i32 = &types[2];
    for (int k = 0; k < NB; k++) {
        CUDA_OK(cudaMalloc(&bufs[k], b2b[k] * 4));
        fill(i32, MPI_SUM, host, b2b[k], t_rank);
        CUDA_OK(cudaMemcpy(bufs[k], host, b2b[k] * 4, cudaMemcpyHostToDevice));
    }
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < NB; k++) {
            fill(i32, MPI_SUM, host, b2b[k], t_rank);
            CUDA_OK(cudaMemcpy(bufs[k], host, b2b[k] * 4, cudaMemcpyHostToDevice));
        }
        for (int k = 0; k < NB; k++) MPI_OK(MPI_Allreduce(MPI_IN_PLACE, bufs[k], (int)b2b[k], MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD));
        for (int k = 0; k < NB; k++) {
            CUDA_OK(cudaMemcpy(host, bufs[k], b2b[k] * 4, cudaMemcpyDeviceToHost));
            verify(i32, MPI_SUM, "sum", host, b2b[k], "back to back");
        }
    }
    for (int k = 0; k < NB; k++) CUDA_OK(cudaFree(bufs[k]));
    /* Rank 0's buffers come from the stream-ordered pool, which has no legacy IPC handle:
     * gpu_direct must notice on every rank and run as gpu_two_shot; the others copy through
     * the workspace anyway. */
    {
        const size_t n = 600000;
        void *psend = NULL, *precv = NULL;
        if (t_rank == 0) {
            CUDA_OK(cudaMallocAsync(&psend, n * 4 + 1, 0));
            CUDA_OK(cudaMallocAsync(&precv, n * 4 + 1, 0));
            CUDA_OK(cudaStreamSynchronize(0));
        } else {
            CUDA_OK(cudaMalloc(&psend, n * 4 + 1));
            CUDA_OK(cudaMalloc(&precv, n * 4 + 1));
        }
        for (int in_place = 0; in_place < 2; in_place++)
            run_one(i32, &ops[0], n, in_place, host, psend, precv);
        if (t_rank == 0) {
            CUDA_OK(cudaFreeAsync(psend, 0));
            CUDA_OK(cudaFreeAsync(precv, 0));
            CUDA_OK(cudaStreamSynchronize(0));
        } else {
            CUDA_OK(cudaFree(psend));
            CUDA_OK(cudaFree(precv));
        }
    }
    /* A communicator of its own (its own workspace), freed again: its mappings are closed. */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    fill(i32, MPI_SUM, host, 1023, t_rank);
    CUDA_OK(cudaMemcpy(drecv, host, 1023 * 4, cudaMemcpyHostToDevice));
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, drecv, 1023, MPI_INT32_T, MPI_SUM, dup));
    CUDA_OK(cudaMemcpy(host, drecv, 1023 * 4, cudaMemcpyDeviceToHost));
    verify(i32, MPI_SUM, "sum", host, 1023, "dup");
    MPI_OK(MPI_Comm_free(&dup));
    /* ALLREDUCE_GPU_TIMING=1: rank 0 prints the mean time of an 8-byte and a large float
     * allreduce, and of an 8-byte device-to-device copy plus sync (the floor) for comparison. */
    if (getenv("ALLREDUCE_GPU_TIMING")) {
        const size_t big = most / 4;
        const int reps[2] = {2000, 20};
        const size_t counts[2] = {2, big};
        for (int k = 0; k < 2; k++) {
            for (int w = 0; w < 10; w++) MPI_OK(MPI_Allreduce(dsend, drecv, (int)counts[k], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            const double t0 = MPI_Wtime();
            for (int r = 0; r < reps[k]; r++) MPI_OK(MPI_Allreduce(dsend, drecv, (int)counts[k], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
            const double us = (MPI_Wtime() - t0) / reps[k] * 1e6;
            if (t_rank == 0) printf("timing: allreduce of %zu bytes: %.2f us (algbw %.1f GB/s)\n", counts[k] * 4, us, counts[k] * 4 / us / 1e3);
        }
        const double t0 = MPI_Wtime();
        for (int r = 0; r < 2000; r++) {
            CUDA_OK(cudaMemcpyAsync(drecv, dsend, 8, cudaMemcpyDeviceToDevice, 0));
            CUDA_OK(cudaStreamSynchronize(0));
        }
        if (t_rank == 0) printf("timing: 8-byte device copy + sync: %.2f us\n", (MPI_Wtime() - t0) / 2000 * 1e6);
    }
    CUDA_OK(cudaFree(dsend));
    CUDA_OK(cudaFree(drecv));
    free(host);
    if (t_rank == 0) printf("allreduce_gpu: %zu calls checked at np %d\n", checked, t_size);
    MPI_Finalize();
    return 0;
}
