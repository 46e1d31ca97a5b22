/* Point-to-point between every pair of memory kinds (device, managed, pinned host, pageable
 * host) on both sides, sizes 0 B to 16 MiB (256 MiB with argument "large"), blocking and
 * non-blocking, every byte checked. Then the CUDA IPC cache: rank 0 sends 1,000 messages, each
 * from a freshly allocated device buffer (freed after the send, so allocations reuse addresses)
 * whose content differs per iteration; the receiver checks every message (a stale mapping would
 * show the previous content) and rank 0 checks that free device memory stays flat.
 * Without a CUDA device every rank exits with 77 (skipped). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "gpu_common.h"


enum kind { DEVICE, MANAGED, PINNED, PAGEABLE, KINDS };
static const char *kind_name[KINDS] = {"device", "managed", "pinned", "pageable"};

static void *kind_alloc(enum kind k, size_t n)
{
    void *p = NULL;
    if (n == 0) n = 1;
    switch (k) {
    case DEVICE: CUDA_OK(cudaMalloc(&p, n)); break;
    case MANAGED: CUDA_OK(cudaMallocManaged(&p, n, cudaMemAttachGlobal)); break;
    case PINNED: CUDA_OK(cudaMallocHost(&p, n)); break;
    default: p = malloc(n); if (!p) FAIL("malloc of %zu bytes", n);
    }
    return p;
}

static void kind_free(enum kind k, void *p)
{
    switch (k) {
    case DEVICE: case MANAGED: CUDA_OK(cudaFree(p)); break;
    case PINNED: CUDA_OK(cudaFreeHost(p)); break;
    default: free(p);
    }
}

static unsigned char byte_at(size_t i, int seed) { return (unsigned char)((i * 131u) ^ (i >> 9) ^ (unsigned)(seed * 29)); }

static void fill(void *buf, size_t n, int seed, unsigned char *host)
{
    for (size_t i = 0; i < n; i++) host[i] = byte_at(i, seed);
    if (n) CUDA_OK(cudaMemcpy(buf, host, n, cudaMemcpyDefault));
}

static void check(const void *buf, size_t n, int seed, unsigned char *host, const char *what)
{
    memset(host, 0xee, n);
    if (n) CUDA_OK(cudaMemcpy(host, buf, n, cudaMemcpyDefault));
    for (size_t i = 0; i < n; i++)
        if (host[i] != byte_at(i, seed)) FAIL("%s: byte %zu of %zu is %u, expected %u", what, i, n, host[i], byte_at(i, seed));
}

/* Rank 0 sends to every other rank, which answers; both directions checked. */
static void kinds_and_sizes(size_t max_bytes)
{
    const size_t sizes[] = {0, 1, 8, 1000, 4096, 16000, 65536, 1 << 20, 16 << 20, 256 << 20};
    unsigned char *host = malloc(max_bytes ? max_bytes : 1);
    int checked = 0;
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        const size_t n = sizes[si];
        if (n > max_bytes) break;
        for (int sk = 0; sk < KINDS; sk++) {
            for (int rk = 0; rk < KINDS; rk++) {
                void *sbuf = kind_alloc((enum kind)sk, n), *rbuf = kind_alloc((enum kind)rk, n);
                char what[128];
                const int seed = (int)(si * 16 + (size_t)sk * 4 + (size_t)rk);
                if (t_rank == 0) {
                    for (int peer = 1; peer < t_size; peer++) {
                        fill(sbuf, n, seed + peer, host);
                        MPI_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
                        MPI_Request req;
                        MPI_OK(MPI_Irecv(rbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req));
                        MPI_Status st;
                        MPI_OK(MPI_Wait(&req, &st));
                        int count = -1;
                        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
                        if ((size_t)count != n) FAIL("answer from %d: %d bytes, expected %zu", peer, count, n);
                        snprintf(what, sizeof what, "%zu bytes %s -> %s back from rank %d", n, kind_name[sk], kind_name[rk], peer);
                        check(rbuf, n, seed + 100 + peer, host, what);
                    }
                } else {
                    MPI_Status st;
                    MPI_OK(MPI_Recv(rbuf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
                    snprintf(what, sizeof what, "%zu bytes %s -> %s from rank 0", n, kind_name[sk], kind_name[rk]);
                    check(rbuf, n, seed + t_rank, host, what);
                    fill(sbuf, n, seed + 100 + t_rank, host);
                    MPI_Request req;
                    MPI_OK(MPI_Isend(sbuf, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req));
                    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
                }
                kind_free((enum kind)sk, sbuf);
                kind_free((enum kind)rk, rbuf);
                checked++;
            }
        }
    }
    free(host);
    if (t_rank == 0) printf("kinds x sizes: %d combinations checked against %d peers\n", checked, t_size - 1);
}

/* A fresh device buffer per message. Rank 0 sends to rank 1 only. */
static void fresh_buffers(int iterations)
{
    const size_t n = 1 << 20;
    unsigned char *host = malloc(n);
    void *rbuf = kind_alloc(DEVICE, n);
    size_t free_at_warm = 0, free_now = 0, total = 0;
    for (int it = 0; it < iterations; it++) {
        if (t_rank == 0) {
            void *sbuf = kind_alloc(DEVICE, n + (size_t)(it % 7) * 4096);
            fill(sbuf, n, it, host);
            MPI_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
            kind_free(DEVICE, sbuf);
            if (it == iterations / 5) CUDA_OK(cudaMemGetInfo(&free_at_warm, &total));
        } else if (t_rank == 1) {
            char what[64];
            MPI_OK(MPI_Recv(rbuf, (int)n, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            snprintf(what, sizeof what, "fresh buffer %d", it);
            check(rbuf, n, it, host, what);
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) {
        CUDA_OK(cudaMemGetInfo(&free_now, &total));
        const double grew_mib = ((double)free_at_warm - (double)free_now) / (1 << 20);
        printf("fresh buffers: %d messages checked; device memory in use grew by %.1f MiB from iteration %d to the end\n",
               iterations, grew_mib, iterations / 5);
        /* Unbounded mappings would pin every freed 1 MiB buffer (~2 MiB each with granularity). */
        if (grew_mib > 256) FAIL("device memory grew by %.1f MiB over %d fresh buffers: mappings are not released", grew_mib, iterations);
    }
    kind_free(DEVICE, rbuf);
    free(host);
}

int main(int argc, char **argv)
{
    t_gpu_init(&argc, &argv, "pt2pt_kinds");
    const int large = argc > 1 && strcmp(argv[1], "large") == 0;
    if (t_size < 2) FAIL("needs at least 2 ranks");
    kinds_and_sizes(large ? (256u << 20) : (16u << 20));
    fresh_buffers(1000);
    t_done();
    return 0;
}
