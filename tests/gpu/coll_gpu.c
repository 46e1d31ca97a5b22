/* MPI_Bcast, MPI_Allgather, MPI_Reduce_scatter(_block) and MPI_Reduce on GPU device buffers
 * through the GPU-native algorithms (coll/gpu). CTest runs it with a 1 MiB workspace (two
 * 512 KiB slots, so the largest size runs in several pieces) and WEFT_REQUIRE_FAST_PATH=1 (a
 * call staged through host memory is an error): with the algorithms chosen by the rule, each
 * family forced with WEFT_COLL_TUNE (one-shot, two-shot, ring), and in the copy-engine
 * variant (WEFT_GPU_COLL_MODE=copy_engine, what ranks sharing a GPU without MPS get). Every
 * collective x root (first and last) x type x op (sum, max) x size, in place where MPI allows
 * it, is checked element by element against a host reference, and out of place the byte after
 * the result must be untouched; MPI_Reduce_scatter with a different share per rank, also with
 * none (and a NULL buffer) at rank 0; then different collectives back to back on one
 * communicator (slot reuse across calls), checked afterwards, and the same on a duplicated
 * communicator that is freed again; last, the non-blocking forms, several outstanding at once,
 * and a persistent allreduce started three times (not in the copy-engine variant, where they
 * are staged: COLL_GPU_NONBLOCKING=0). With COLL_GPU_ACROSS_NODES=1 (run on virtual nodes)
 * the blocking calls run, which have GPU stages inside each node and host staging between the
 * nodes; the non-blocking ones (staged there) do not.
 * Without a CUDA device every rank exits with 77, which CTest reports as skipped. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "gpu_common.h"


enum kind { I8, I16, I32, F32, F64 };
struct type {
    MPI_Datatype dt;
    const char *name;
    enum kind kind;
    size_t size;
};

static void put(const struct type *t, void *buf, size_t i, int64_t v)
{
    switch (t->kind) {
    case I8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case I16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case I32: ((int32_t *)buf)[i] = (int32_t)v; break;
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
    case F32: return (int64_t)((const float *)buf)[i];
    case F64: return (int64_t)((const double *)buf)[i];
    }
    return 0;
}

/* Rank r's element i: sums of up to 4 ranks stay within int8 (<= 4 x 7). MPI_OP_NULL: the
 * data of bcast and allgather. */
static int64_t value(MPI_Op op, int rank, size_t i)
{
    if (op == MPI_SUM) return (int64_t)((i * 3 + (size_t)rank * 5) % 8);
    return (int64_t)((i * 7 + (size_t)rank * 13) % 101) - 50;
}

static int64_t reduced(MPI_Op op, size_t i)
{
    int64_t want = 0;
    for (int q = 0; q < t_size; q++) {
        const int64_t v = value(op, q, i);
        want = q == 0 ? v : op == MPI_SUM ? want + v : (v > want ? v : want);
    }
    return want;
}

static size_t checked = 0;
static const unsigned char kGuard = 0x5a;

static void fill(const struct type *t, MPI_Op op, void *host, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++) put(t, host, i, value(op, rank, i));
}

/* got[i] == want(i) for i < n; guard: the byte after them must still be kGuard. */
static void expect(const struct type *t, const char *what, const void *got, size_t n, int guard,
                   int64_t (*want)(MPI_Op, size_t, size_t), MPI_Op op, size_t arg)
{
    for (size_t i = 0; i < n; i++) {
        const int64_t w = want(op, i, arg), have = get(t, got, i);
        if (have != w)
            FAIL("%s %s n=%zu: element %zu is %lld, expected %lld", what, t->name, n, i, (long long)have,
                 (long long)w);
    }
    if (guard && ((const unsigned char *)got)[n * t->size] != kGuard)
        FAIL("%s %s n=%zu: the byte after the result was overwritten", what, t->name, n);
    checked++;
}

static int64_t want_value(MPI_Op op, size_t i, size_t rank) { return value(op, (int)rank, i); }
static int64_t want_gathered(MPI_Op op, size_t i, size_t block) { return value(op, (int)(i / block), i % block); }
static int64_t want_reduced(MPI_Op op, size_t i, size_t shift) { return reduced(op, i + shift); }

/* The reference values as the type holds them (put then get). */
static const struct type *cur;
static int64_t (*cur_want)(MPI_Op, size_t, size_t);
static int64_t as_held(MPI_Op op, size_t i, size_t arg)
{
    int64_t one = 0;
    put(cur, &one, 0, cur_want(op, i, arg));
    return get(cur, &one, 0);
}
static void check(const struct type *t, const char *what, const void *got, size_t n, int guard,
                  int64_t (*want)(MPI_Op, size_t, size_t), MPI_Op op, size_t arg)
{
    cur = t;
    cur_want = want;
    expect(t, what, got, n, guard, as_held, op, arg);
}

static void *host, *dsend, *drecv;

static void to_device(void *dev, size_t bytes) { CUDA_OK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice)); }
static void from_device(const void *dev, size_t bytes) { CUDA_OK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost)); }
static void guard(void *dev, size_t bytes) { CUDA_OK(cudaMemset(dev, kGuard, bytes)); }

static void run_bcast(const struct type *t, size_t n, int root)
{
    char what[64];
    snprintf(what, sizeof what, "bcast root %d", root);
    guard(drecv, n * t->size + 1);
    if (t_rank == root) {
        fill(t, MPI_OP_NULL, host, n, root);
        to_device(drecv, n * t->size);
    }
    MPI_OK(MPI_Bcast(drecv, (int)n, t->dt, root, MPI_COMM_WORLD));
    from_device(drecv, n * t->size + 1);
    check(t, what, host, n, 1, want_value, MPI_OP_NULL, (size_t)root);
}

static void run_allgather(const struct type *t, size_t n, int in_place)
{
    const size_t p = (size_t)t_size, me = (size_t)t_rank;
    guard(drecv, p * n * t->size + 1);
    fill(t, MPI_OP_NULL, host, n, t_rank);
    if (in_place) {
        to_device((char *)drecv + me * n * t->size, n * t->size);
        MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, drecv, (int)n, t->dt, MPI_COMM_WORLD));
    } else {
        to_device(dsend, n * t->size);
        MPI_OK(MPI_Allgather(dsend, (int)n, t->dt, drecv, (int)n, t->dt, MPI_COMM_WORLD));
    }
    from_device(drecv, p * n * t->size + 1);
    check(t, in_place ? "allgather in place" : "allgather", host, p * n, 1, want_gathered, MPI_OP_NULL, n);
}

static void run_reduce_scatter_block(const struct type *t, MPI_Op op, size_t n, int in_place)
{
    const size_t p = (size_t)t_size, me = (size_t)t_rank;
    char what[64];
    snprintf(what, sizeof what, "reduce_scatter_block %s%s", op == MPI_SUM ? "sum" : "max", in_place ? " in place" : "");
    fill(t, op, host, p * n, t_rank);
    if (in_place) {
        to_device(drecv, p * n * t->size);
        MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, drecv, (int)n, t->dt, op, MPI_COMM_WORLD));
    } else {
        to_device(dsend, p * n * t->size);
        guard(drecv, n * t->size + 1);
        MPI_OK(MPI_Reduce_scatter_block(dsend, drecv, (int)n, t->dt, op, MPI_COMM_WORLD));
    }
    from_device(drecv, n * t->size + 1);
    check(t, what, host, n, !in_place, want_reduced, op, me * n);
}

static void run_reduce(const struct type *t, MPI_Op op, size_t n, int root, int in_place)
{
    char what[64];
    snprintf(what, sizeof what, "reduce %s root %d%s", op == MPI_SUM ? "sum" : "max", root, in_place ? " in place" : "");
    fill(t, op, host, n, t_rank);
    const int is_root = t_rank == root;
    if (in_place && is_root) {
        to_device(drecv, n * t->size);
        MPI_OK(MPI_Reduce(MPI_IN_PLACE, drecv, (int)n, t->dt, op, root, MPI_COMM_WORLD));
    } else {
        to_device(dsend, n * t->size);
        guard(drecv, n * t->size + 1);
        MPI_OK(MPI_Reduce(dsend, is_root ? drecv : NULL, (int)n, t->dt, op, root, MPI_COMM_WORLD));
    }
    if (!is_root) return;
    from_device(drecv, n * t->size + 1);
    check(t, what, host, n, !in_place, want_reduced, op, 0);
}

/* MPI_Reduce_scatter with a different share per rank (rank q gets n + 3q elements; rank 0
 * none when zero_first, and passes a NULL receive buffer then). */
static void run_reduce_scatter_v(const struct type *t, MPI_Op op, size_t n, int in_place, int zero_first)
{
    const size_t p = (size_t)t_size, me = (size_t)t_rank;
    int counts[64];
    size_t total = 0, first = 0;
    for (size_t q = 0; q < p; q++) {
        counts[q] = zero_first && q == 0 ? 0 : (int)(n + 3 * q);
        if (q < me) first += (size_t)counts[q];
        total += (size_t)counts[q];
    }
    const size_t mine = (size_t)counts[me];
    char what[80];
    snprintf(what, sizeof what, "reduce_scatter %s%s%s", op == MPI_SUM ? "sum" : "max",
             in_place ? " in place" : "", zero_first ? " (rank 0 gets none)" : "");
    fill(t, op, host, total, t_rank);
    void *out = mine || in_place ? drecv : NULL;
    if (in_place) {
        to_device(drecv, total * t->size);
        MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, drecv, counts, t->dt, op, MPI_COMM_WORLD));
    } else {
        to_device(dsend, total * t->size);
        guard(drecv, mine * t->size + 1);
        MPI_OK(MPI_Reduce_scatter(dsend, out, counts, t->dt, op, MPI_COMM_WORLD));
    }
    if (!mine) return;
    from_device(drecv, mine * t->size + 1);
    check(t, what, host, mine, !in_place, want_reduced, op, first);
}

/* The non-blocking and persistent forms on device buffers: several calls outstanding at
 * once (their device work is enqueued in call order), then a persistent allreduce started
 * three times with new data. */
static void nonblocking(const struct type *i32, size_t n)
{
    const size_t p = (size_t)t_size, me = (size_t)t_rank;
    const int last = t_size - 1;
    enum { NB = 5 };
    void *in[NB], *out[NB];
    for (int k = 0; k < NB; k++) {
        CUDA_OK(cudaMalloc(&in[k], p * n * 4 + 1));
        CUDA_OK(cudaMalloc(&out[k], p * n * 4 + 1));
        const MPI_Op op = k == 0 || k == 1 ? MPI_OP_NULL : k % 2 ? MPI_MAX : MPI_SUM;
        fill(i32, op, host, p * n, t_rank);
        to_device(in[k], p * n * 4);
        guard(out[k], p * n * 4 + 1);
    }
    if (t_rank == last) CUDA_OK(cudaMemcpy(out[0], in[0], n * 4, cudaMemcpyDeviceToDevice));
    MPI_Request req[NB];
    MPI_OK(MPI_Ibcast(out[0], (int)n, MPI_INT32_T, last, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Iallgather(in[1], (int)n, MPI_INT32_T, out[1], (int)n, MPI_INT32_T, MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Ireduce(in[2], out[2], (int)n, MPI_INT32_T, MPI_SUM, 0, MPI_COMM_WORLD, &req[2]));
    MPI_OK(MPI_Ireduce_scatter_block(in[3], out[3], (int)n, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD, &req[3]));
    MPI_OK(MPI_Iallreduce(in[4], out[4], (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, &req[4]));
    MPI_OK(MPI_Waitall(NB, req, MPI_STATUSES_IGNORE));
    from_device(out[0], n * 4 + 1);
    check(i32, "ibcast", host, n, 1, want_value, MPI_OP_NULL, (size_t)last);
    from_device(out[1], p * n * 4 + 1);
    check(i32, "iallgather", host, p * n, 1, want_gathered, MPI_OP_NULL, n);
    if (t_rank == 0) {
        from_device(out[2], n * 4 + 1);
        check(i32, "ireduce", host, n, 1, want_reduced, MPI_SUM, 0);
    }
    from_device(out[3], n * 4 + 1);
    check(i32, "ireduce_scatter_block", host, n, 1, want_reduced, MPI_MAX, me * n);
    from_device(out[4], n * 4 + 1);
    check(i32, "iallreduce", host, n, 1, want_reduced, MPI_SUM, 0);

    /* Persistent: new input before every start (element i of round k is value + k). */
    MPI_Request preq;
    MPI_OK(MPI_Allreduce_init(in[4], out[4], (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq));
    for (int round = 0; round < 3; round++) {
        int32_t *h = host;
        for (size_t i = 0; i < n; i++) h[i] = (int32_t)(value(MPI_SUM, t_rank, i) + round);
        to_device(in[4], n * 4);
        MPI_OK(MPI_Start(&preq));
        MPI_OK(MPI_Wait(&preq, MPI_STATUS_IGNORE));
        from_device(out[4], n * 4);
        for (size_t i = 0; i < n; i++)
            if (h[i] != (int32_t)(reduced(MPI_SUM, i) + round * t_size))
                FAIL("persistent allreduce round %d n=%zu: element %zu is %d, expected %lld", round, n, i, h[i],
                     (long long)(reduced(MPI_SUM, i) + round * t_size));
        checked++;
    }
    MPI_OK(MPI_Request_free(&preq));
    for (int k = 0; k < NB; k++) {
        CUDA_OK(cudaFree(in[k]));
        CUDA_OK(cudaFree(out[k]));
    }
}

/* Different collectives back to back on comm, each on buffers of its own, checked only after
 * the last: pieces of one call share slots with the next call's. */
static void back_to_back(MPI_Comm comm, const struct type *i32)
{
    const size_t p = (size_t)t_size, me = (size_t)t_rank;
    const int last = t_size - 1;
    enum { NB = 8 };
    const size_t n[NB] = {70000, 5, 600000, 33, 1023, 1, 131072, 300000};
    void *in[NB], *out[NB];
    for (int k = 0; k < NB; k++) {
        CUDA_OK(cudaMalloc(&in[k], p * n[k] * 4 + 1));
        CUDA_OK(cudaMalloc(&out[k], p * n[k] * 4 + 1));
    }
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < NB; k++) {
            const MPI_Op op = k % 4 == 0 || k % 4 == 1 ? MPI_OP_NULL : k % 2 ? MPI_MAX : MPI_SUM;
            fill(i32, op, host, p * n[k], t_rank);
            to_device(in[k], p * n[k] * 4);
            guard(out[k], p * n[k] * 4 + 1);
        }
        /* Data for the bcasts: from the root's own input. */
        const int root0 = round % 2 ? last : 0, root4 = round % 2 ? 0 : last;
        if (t_rank == root0) CUDA_OK(cudaMemcpy(out[0], in[0], n[0] * 4, cudaMemcpyDeviceToDevice));
        if (t_rank == root4) CUDA_OK(cudaMemcpy(out[4], in[4], n[4] * 4, cudaMemcpyDeviceToDevice));
        MPI_OK(MPI_Bcast(out[0], (int)n[0], MPI_INT32_T, root0, comm));
        MPI_OK(MPI_Allgather(in[1], (int)n[1], MPI_INT32_T, out[1], (int)n[1], MPI_INT32_T, comm));
        MPI_OK(MPI_Reduce(in[2], out[2], (int)n[2], MPI_INT32_T, MPI_SUM, last, comm));
        MPI_OK(MPI_Reduce_scatter_block(in[3], out[3], (int)n[3], MPI_INT32_T, MPI_MAX, comm));
        MPI_OK(MPI_Bcast(out[4], (int)n[4], MPI_INT32_T, root4, comm));
        MPI_OK(MPI_Allgather(in[5], (int)n[5], MPI_INT32_T, out[5], (int)n[5], MPI_INT32_T, comm));
        MPI_OK(MPI_Reduce_scatter_block(in[6], out[6], (int)n[6], MPI_INT32_T, MPI_SUM, comm));
        MPI_OK(MPI_Allreduce(in[7], out[7], (int)n[7], MPI_INT32_T, MPI_MAX, comm));
        from_device(out[0], n[0] * 4 + 1);
        check(i32, "back to back bcast", host, n[0], 1, want_value, MPI_OP_NULL, (size_t)root0);
        from_device(out[1], p * n[1] * 4 + 1);
        check(i32, "back to back allgather", host, p * n[1], 1, want_gathered, MPI_OP_NULL, n[1]);
        if (t_rank == last) {
            from_device(out[2], n[2] * 4 + 1);
            check(i32, "back to back reduce", host, n[2], 1, want_reduced, MPI_SUM, 0);
        }
        from_device(out[3], n[3] * 4 + 1);
        check(i32, "back to back reduce_scatter_block", host, n[3], 1, want_reduced, MPI_MAX, me * n[3]);
        from_device(out[4], n[4] * 4 + 1);
        check(i32, "back to back bcast", host, n[4], 1, want_value, MPI_OP_NULL, (size_t)root4);
        from_device(out[5], p * n[5] * 4 + 1);
        check(i32, "back to back allgather", host, p * n[5], 1, want_gathered, MPI_OP_NULL, n[5]);
        from_device(out[6], n[6] * 4 + 1);
        check(i32, "back to back reduce_scatter_block", host, n[6], 1, want_reduced, MPI_SUM, me * n[6]);
        from_device(out[7], n[7] * 4 + 1);
        check(i32, "back to back allreduce", host, n[7], 1, want_reduced, MPI_MAX, 0);
    }
    for (int k = 0; k < NB; k++) {
        CUDA_OK(cudaFree(in[k]));
        CUDA_OK(cudaFree(out[k]));
    }
}

int main(int argc, char **argv)
{
    t_gpu_init(&argc, &argv, "coll_gpu");
    const struct type types[] = {
        {MPI_INT8_T, "int8", I8, 1},     {MPI_SHORT, "short", I16, 2}, {MPI_INT32_T, "int32", I32, 4},
        {MPI_FLOAT, "float", F32, 4}, {MPI_DOUBLE, "double", F64, 8},
    };
    const MPI_Op ops[] = {MPI_SUM, MPI_MAX};
    /* 600000 elements exceed a 512 KiB slot for every type (WEFT_GPU_COLL_SCRATCH=1m). */
    const size_t sizes[] = {1, 7, 1023, 65536, 600000};
    const size_t most = 600000 * 8 * (size_t)t_size + 4096;
    host = malloc(most);
    CUDA_OK(cudaMalloc(&dsend, most));
    CUDA_OK(cudaMalloc(&drecv, most));
    const int roots[] = {0, t_size - 1};
    /* Across (virtual) nodes the blocking calls have GPU stages inside each node; the
     * non-blocking ones are staged. */
    const char *across_env = getenv("COLL_GPU_ACROSS_NODES");
    const int across = across_env && atoi(across_env) != 0;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const struct type *t = &types[ti];
            const size_t n = sizes[si];
            for (int r = 0; r < 2; r++) run_bcast(t, n, roots[r]);
            for (int in_place = 0; in_place < 2; in_place++) run_allgather(t, n, in_place);
            for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    run_reduce_scatter_block(t, ops[oi], n, in_place);
                    for (int zero_first = 0; zero_first < 2; zero_first++)
                        run_reduce_scatter_v(t, ops[oi], n, in_place, zero_first);
                    for (int r = 0; r < 2; r++) run_reduce(t, ops[oi], n, roots[r], in_place);
                }
        }
    back_to_back(MPI_COMM_WORLD, &types[2]);
    const char *nb = getenv("COLL_GPU_NONBLOCKING");
    if (!across && (!nb || strcmp(nb, "0") != 0)) {
        nonblocking(&types[2], 5);
        nonblocking(&types[2], 300000);
    } else if (t_rank == 0) {
        printf("coll_gpu: non-blocking and persistent calls not run (COLL_GPU_NONBLOCKING=0)\n");
    }
    /* A communicator of its own (its own workspace), freed again: its mappings are closed. */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    back_to_back(dup, &types[2]);
    MPI_OK(MPI_Comm_free(&dup));
    CUDA_OK(cudaFree(dsend));
    CUDA_OK(cudaFree(drecv));
    free(host);
    if (t_rank == 0) printf("coll_gpu: %zu results checked at np %d\n", checked, t_size);
    MPI_Finalize();
    return 0;
}
