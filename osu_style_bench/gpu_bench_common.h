/*
 * gpu_bench_common.h - shared driver of the GPU benchmark programs
 * (gpu_allreduce, nccl_allreduce, gpu_floors).
 *
 * Plain C11 on the standard MPI C API and the CUDA runtime API, so the same
 * sources build against weft and against another MPI.  It provides:
 *   - device selection: rank -> GPU (local rank % device count), where the
 *     local rank comes from the launcher's environment before MPI_Init
 *     (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, ...) or
 *     from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) after it;
 *   - the floors measured in the same run (empty kernel + sync, 8-byte
 *     device copy + sync, device copy roofline);
 *   - an nccl-tests-style allreduce sweep (sizes -b..-e times -f, -w warm-up,
 *     -n timed iterations, out of place and in place, one checked call per
 *     size) around a callback that performs one allreduce.
 */
#ifndef WEFT_GPU_BENCH_COMMON_H
#define WEFT_GPU_BENCH_COMMON_H

#include <stddef.h>

#include <mpi.h>
#include <cuda_runtime_api.h>

#include "gpu_bench_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GB_BUSID_LEN 32

typedef struct {
    const char *prog;
    int rank, nranks;
    int local_rank, local_size;   /* on this node (MPI_COMM_TYPE_SHARED) */
    int device, ndevices;         /* CUDA device of this rank, devices visible */
    char busid[GB_BUSID_LEN];     /* PCI bus id of this rank's GPU */
    int ranks_per_gpu;            /* most ranks sharing one GPU, over all nodes */
    int gpus_used;                /* distinct GPUs used by the job (node, bus id) */
    MPI_Comm node_comm;

    /* sweep options */
    size_t min_bytes, max_bytes;  /* -b, -e */
    size_t factor;                /* -f */
    int warmup, iters;            /* -w, -n */
    gb_type type;                 /* -t */
    int check;                    /* -c */
    size_t roof_bytes;            /* -r: buffer of the copy roofline */
    size_t ipc_bytes;             /* -s (gpu_floors): largest IPC copy */
    cudaStream_t stream;
    /* Optional: called with the sweep's two buffers (bytes each) once they are allocated
     * (attach 1) and before they are freed (attach 0), e.g. to register them. */
    int (*buffers_hook)(void *sbuf, void *rbuf, size_t bytes, int attach, void *user);
} gb_ctx;

/* Floors measured in the same run (rank 0 alone unless said otherwise). */
typedef struct {
    double empty_us;        /* empty kernel + cudaStreamSynchronize, rank 0 alone */
    double empty_all_us;    /* the same on every rank at once, max over ranks */
    double copy8_us;        /* 8-byte D2D cudaMemcpyAsync + sync, rank 0 alone */
    double d2h8_us;         /* 8-byte D2H cudaMemcpyAsync + sync (pageable host) */
    double h2d8_us;         /* 8-byte H2D cudaMemcpyAsync + sync (pageable host) */
    double copy_gbs;        /* D2D cudaMemcpyAsync of roof_bytes, GB/s read + write */
} gb_floors;

/* What gb_run_sweep calls: one allreduce of `count` elements; sbuf == NULL
 * means in place on rbuf.  Returns 0 on success. */
typedef int (*gb_allreduce_fn)(const void *sbuf, void *rbuf, size_t count, gb_type t,
                               void *user);
/* Wait until every allreduce issued so far is complete.  Returns 0 on success. */
typedef int (*gb_sync_fn)(void *user);

/*
 * Set the device from the launcher's local rank, MPI_Init, parse options
 * (rank 0 prints usage/errors; everyone exits on -h or a usage error), pick
 * the device when the environment gave no local rank, create ctx->stream and
 * gather the rank -> GPU map.  `usage_extra` is printed after the common
 * options (may be NULL).
 */
void gb_init(int *argc, char ***argv, const char *prog, const char *what,
             const char *usage_extra, gb_ctx *ctx);

/* Print "# ..." lines: MPI library, ranks and their GPUs.  Rank 0 only. */
void gb_print_setup(const gb_ctx *ctx);

/* Measure the floors (collective over MPI_COMM_WORLD) and print them (rank 0). */
void gb_measure_floors(gb_ctx *ctx, gb_floors *f);
void gb_print_floors(const gb_ctx *ctx, const gb_floors *f);

/* The allreduce sweep; returns the number of wrong elements plus failed calls
 * summed over all ranks and sizes (0 = all correct).  Collective. */
long long gb_run_sweep(gb_ctx *ctx, const gb_floors *f, const char *impl,
                       gb_allreduce_fn op, gb_sync_fn sync, void *user);

/* Abort the job with a message naming the rank (for CUDA or MPI failures). */
void gb_die(const gb_ctx *ctx, const char *what, const char *detail);
#define GB_CUDA(ctx, call)                                                        \
    do {                                                                          \
        cudaError_t gb_e_ = (call);                                               \
        if (gb_e_ != cudaSuccess)                                                 \
            gb_die((ctx), #call, cudaGetErrorString(gb_e_));                      \
    } while (0)

/* Destroy the stream and communicators, MPI_Finalize, return `code`. */
int gb_finalize(gb_ctx *ctx, int code);

/* This process's rank on its node as the launcher's environment gives it before MPI_Init
 * (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, ...), or -1. */
int gb_env_local_rank(void);
/* Parse "8", "64K", "256M", "1G" (powers of 1024).  Returns 0 on success. */
int gb_parse_bytes(const char *s, size_t *out);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_GPU_BENCH_COMMON_H */
