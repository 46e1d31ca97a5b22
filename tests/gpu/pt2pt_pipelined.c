/* Point-to-point on GPU device buffers between ranks of different (virtual) nodes, over UCX:
 * the pipelined staging through pinned host chunks (WEFT_CUDA_STAGING_CHUNK). Run it with
 * WEFT_FAKE_NODES=2, so the two halves of the ranks are two nodes talking over tcp on lo; each
 * rank's partner is the rank at the same place in the other half.
 *
 * Sizes 0, 1, chunk - 1, chunk, chunk + 1, 3.5 chunks and 64 MiB; device -> device,
 * device -> host and host -> device; blocking (Send/Recv), non-blocking (Isend/Irecv),
 * MPI_ANY_SOURCE + MPI_ANY_TAG receives, and Ssend + Mprobe/Mrecv; both directions. Every byte
 * is checked, and the bytes around each receive buffer must stay untouched (buffers start at
 * an odd offset). Then a truncated receive into device memory (MPI_ERR_TRUNCATE, and the
 * next message still arrives whole), and Sendrecv_replace and Bsend on device buffers (which
 * keep whole-message staging). The chunk size is read from WEFT_CUDA_STAGING_CHUNK like weft
 * reads it (default 1m; with 0, whole-message staging, the sizes are those of 1m).
 * Without a CUDA device every rank exits with 77 (skipped). */
#include <cuda_runtime_api.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gpu_common.h"

enum kind { DEV, HOST };
enum mode { SEND_RECV, ISEND_IRECV, ANY_SOURCE, SSEND_MRECV, MODES };
static const char *mode_name[MODES] = {"Send/Recv", "Isend/Irecv", "Isend/Recv(ANY_SOURCE, ANY_TAG)", "Ssend/Mprobe+Mrecv"};

#define OFFSET 5   /* the message starts this far into its allocation */
#define GUARD 32   /* bytes after it that must stay untouched */
#define SENTINEL 0xab

static size_t chunk_from_env(void)
{
    const char *v = getenv("WEFT_CUDA_STAGING_CHUNK");
    if (!v || !*v) return 1u << 20;
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    switch (tolower((unsigned char)*end)) {
    case 'k': n <<= 10; break;
    case 'm': n <<= 20; break;
    case 'g': n <<= 30; break;
    default: break;
    }
    if (n == 0) return 1u << 20; /* pipelining off: whole-message staging; sizes as for 1m */
    if (n < 4096) n = 4096;      /* weft raises smaller chunks to 4 KiB */
    return (size_t)n;
}

/* An allocation of OFFSET + n + GUARD bytes, filled with SENTINEL. */
static unsigned char *alloc_kind(enum kind k, size_t n)
{
    const size_t total = OFFSET + n + GUARD;
    void *p = NULL;
    if (k == DEV) {
        CUDA_OK(cudaMalloc(&p, total));
        CUDA_OK(cudaMemset(p, SENTINEL, total));
    } else {
        p = malloc(total);
        if (!p) FAIL("malloc of %zu bytes", total);
        memset(p, SENTINEL, total);
    }
    return p;
}

static void free_kind(enum kind k, void *p)
{
    if (k == DEV) CUDA_OK(cudaFree(p));
    else free(p);
}

/* The message (pattern of seed) at base + OFFSET. */
static void fill(enum kind k, unsigned char *base, size_t n, uint32_t seed, unsigned char *host)
{
    t_fill(host, n, seed, 7, 11);
    if (k == DEV) {
        if (n) CUDA_OK(cudaMemcpy(base + OFFSET, host, n, cudaMemcpyHostToDevice));
    } else {
        memcpy(base + OFFSET, host, n);
    }
}

/* Every byte of the message, and the sentinel around it. */
static void check(enum kind k, const unsigned char *base, size_t n, uint32_t seed, unsigned char *host, const char *what)
{
    const size_t total = OFFSET + n + GUARD;
    if (k == DEV) CUDA_OK(cudaMemcpy(host, base, total, cudaMemcpyDeviceToHost));
    else memcpy(host, base, total);
    for (size_t i = 0; i < OFFSET; i++)
        if (host[i] != SENTINEL) FAIL("%s: byte %zu before the buffer was overwritten", what, i);
    CHECK_PAT(host + OFFSET, n, seed, 7, 11, what);
    for (size_t i = 0; i < GUARD; i++)
        if (host[OFFSET + n + i] != SENTINEL) FAIL("%s: byte %zu after the buffer was overwritten", what, i);
}

static void check_status(const MPI_Status *st, int source, int tag, size_t n, const char *what)
{
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    if (st->MPI_SOURCE != source) FAIL("%s: source %d, expected %d", what, st->MPI_SOURCE, source);
    if (st->MPI_TAG != tag) FAIL("%s: tag %d, expected %d", what, st->MPI_TAG, tag);
    if ((size_t)count != n) FAIL("%s: %d bytes, expected %zu", what, count, n);
}

static void transfer(enum mode m, enum kind sk, enum kind rk, size_t n, int sending, int partner, int tag,
                     uint32_t seed, unsigned char *host, size_t *checked)
{
    char what[192];
    snprintf(what, sizeof what, "%s, %zu bytes, %s -> %s, rank %d -> %d", mode_name[m], n,
             sk == DEV ? "device" : "host", rk == DEV ? "device" : "host", sending ? t_rank : partner,
             sending ? partner : t_rank);
    if (sending) {
        unsigned char *s = alloc_kind(sk, n);
        fill(sk, s, n, seed, host);
        MPI_Request rq;
        switch (m) {
        case SEND_RECV: MPI_OK(MPI_Send(s + OFFSET, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD)); break;
        case ISEND_IRECV:
        case ANY_SOURCE:
            MPI_OK(MPI_Isend(s + OFFSET, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &rq));
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            break;
        default: MPI_OK(MPI_Ssend(s + OFFSET, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD)); break;
        }
        /* The send buffer must be left as it was. */
        check(sk, s, n, seed, host, what);
        free_kind(sk, s);
        return;
    }
    unsigned char *r = alloc_kind(rk, n);
    MPI_Status st;
    MPI_Request rq;
    switch (m) {
    case SEND_RECV: MPI_OK(MPI_Recv(r + OFFSET, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st)); break;
    case ISEND_IRECV:
        MPI_OK(MPI_Irecv(r + OFFSET, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Wait(&rq, &st));
        break;
    case ANY_SOURCE:
        MPI_OK(MPI_Recv(r + OFFSET, (int)n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        break;
    default: {
        MPI_Message msg;
        MPI_Status pst;
        MPI_OK(MPI_Mprobe(partner, tag, MPI_COMM_WORLD, &msg, &pst));
        check_status(&pst, partner, tag, n, what);
        MPI_OK(MPI_Mrecv(r + OFFSET, (int)n, MPI_BYTE, &msg, &st));
        break;
    }
    }
    check_status(&st, partner, tag, n, what);
    check(rk, r, n, seed, host, what);
    free_kind(rk, r);
    ++*checked;
}

/* A message of 3.5 chunks into a device buffer of one chunk: MPI_ERR_TRUNCATE; then a whole
 * chunk arrives intact in the same buffer. */
static void truncation(size_t chunk, int low, int partner, unsigned char *host)
{
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    const size_t big = chunk * 7 / 2;
    if (low) {
        unsigned char *s = alloc_kind(DEV, big);
        fill(DEV, s, big, 901, host);
        MPI_OK(MPI_Send(s + OFFSET, (int)big, MPI_BYTE, partner, 1, comm));
        fill(DEV, s, chunk, 902, host);
        MPI_OK(MPI_Send(s + OFFSET, (int)chunk, MPI_BYTE, partner, 2, comm));
        free_kind(DEV, s);
    } else {
        unsigned char *r = alloc_kind(DEV, chunk);
        MPI_Status st;
        int rc = MPI_Recv(r + OFFSET, (int)chunk, MPI_BYTE, partner, 1, comm, &st);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE) FAIL("truncated device receive: error class %d, expected MPI_ERR_TRUNCATE (%d)", cls, MPI_ERR_TRUNCATE);
        CUDA_OK(cudaMemset(r, SENTINEL, OFFSET + chunk + GUARD));
        MPI_OK(MPI_Recv(r + OFFSET, (int)chunk, MPI_BYTE, partner, 2, comm, &st));
        check_status(&st, partner, 2, chunk, "after a truncated receive");
        check(DEV, r, chunk, 902, host, "after a truncated receive");
        free_kind(DEV, r);
    }
    MPI_OK(MPI_Comm_free(&comm));
}

/* Calls that keep whole-message staging: Sendrecv_replace and Bsend from device memory. */
static void staged_calls(size_t chunk, int low, int partner, unsigned char *host)
{
    const size_t n = chunk + 1;
    unsigned char *d = alloc_kind(DEV, n);
    fill(DEV, d, n, 950u + (uint32_t)t_rank, host);
    MPI_Status st;
    MPI_OK(MPI_Sendrecv_replace(d + OFFSET, (int)n, MPI_BYTE, partner, 3, partner, 3, MPI_COMM_WORLD, &st));
    check_status(&st, partner, 3, n, "Sendrecv_replace");
    check(DEV, d, n, 950u + (uint32_t)partner, host, "Sendrecv_replace");
    const int bsize = (int)n + MPI_BSEND_OVERHEAD;
    void *attached = malloc((size_t)bsize);
    MPI_OK(MPI_Buffer_attach(attached, bsize));
    if (low) {
        fill(DEV, d, n, 960, host);
        MPI_OK(MPI_Bsend(d + OFFSET, (int)n, MPI_BYTE, partner, 4, MPI_COMM_WORLD));
    } else {
        CUDA_OK(cudaMemset(d, SENTINEL, OFFSET + n + GUARD));
        MPI_OK(MPI_Recv(d + OFFSET, (int)n, MPI_BYTE, partner, 4, MPI_COMM_WORLD, &st));
        check(DEV, d, n, 960, host, "Bsend");
    }
    void *detached;
    int dsize;
    MPI_OK(MPI_Buffer_detach(&detached, &dsize));
    free(attached);
    free_kind(DEV, d);
}

int main(int argc, char **argv)
{
    t_gpu_init(&argc, &argv, "pt2pt_pipelined");
    if (t_size < 2 || t_size % 2) FAIL("needs an even number of ranks, at least 2 (got %d)", t_size);
    const size_t chunk = chunk_from_env();
    const size_t sizes[] = {0, 1, chunk - 1, chunk, chunk + 1, chunk * 7 / 2, (size_t)64 << 20};
    const size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
    const int half = t_size / 2;
    const int low = t_rank < half;
    const int partner = low ? t_rank + half : t_rank - half;
    size_t largest = 0;
    for (size_t si = 0; si < nsizes; si++)
        if (sizes[si] > largest) largest = sizes[si];
    unsigned char *host = malloc(OFFSET + largest + GUARD);
    if (!host) FAIL("malloc");
    const enum kind pairs[3][2] = {{DEV, DEV}, {DEV, HOST}, {HOST, DEV}};
    size_t checked = 0;
    int tag = 100;
    for (size_t si = 0; si < nsizes; si++)
        for (int p = 0; p < 3; p++)
            for (int m = 0; m < MODES; m++)
                for (int dir = 0; dir < 2; dir++, tag++) {
                    const int sending = dir == 0 ? low : !low;
                    const uint32_t seed = (uint32_t)tag * 31u + (uint32_t)(sending ? t_rank : partner);
                    transfer((enum mode)m, pairs[p][0], pairs[p][1], sizes[si], sending, partner, tag, seed, host, &checked);
                }
    truncation(chunk, low, partner, host);
    staged_calls(chunk, low, partner, host);
    free(host);
    long long total = 0, mine = (long long)checked;
    MPI_OK(MPI_Reduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("pt2pt_pipelined: %lld messages checked between two nodes, chunk %zu bytes\n", total, chunk);
    t_done();
    return 0;
}
