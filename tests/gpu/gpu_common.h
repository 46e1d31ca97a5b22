/* Shared by the GPU tests: CUDA_OK, the start every GPU test makes, and reading one of weft's
 * MPI_T performance variables. Without a CUDA device
 * every rank exits with 77, which CTest reports as skipped; otherwise each rank takes GPU
 * (local rank mod devices), then MPI is initialised. */
#pragma once
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define CUDA_OK(call)                                                                     \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) FAIL("%s failed: %s", #call, cudaGetErrorString(e_));      \
    } while (0)

/* The CUDA devices; without one every rank exits with 77 (skipped). */
static inline int t_gpu_devices_or_skip(void)
{
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        printf("SKIP: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        exit(77);
    }
    return devices;
}

/* This rank's index on its node, from the launcher (0 when it does not say). */
static inline int t_local_rank(void)
{
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!lr) lr = getenv("SLURM_LOCALID");
    return lr ? atoi(lr) : 0;
}

static inline void t_gpu_init(int *argc, char ***argv, const char *name)
{
    const int devices = t_gpu_devices_or_skip();
    const int local = t_local_rank();
    /* Before MPI_Init, so that weft's streams and contexts are made on this rank's GPU. */
    cudaError_t e = cudaSetDevice(local % devices);
    if (e != cudaSuccess) {
        fprintf(stderr, "cudaSetDevice(%d) failed: %s\n", local % devices, cudaGetErrorString(e));
        exit(1);
    }
    t_init(argc, argv, name);
}

/* One of weft's MPI_T performance variables, read now (between MPI_T_init_thread and
 * MPI_T_finalize). */
static inline unsigned long long t_pvar_now(const char *name, int var_class)
{
    int idx, count;
    unsigned long long v = 0;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    MPI_OK(MPI_T_pvar_get_index(name, var_class, &idx));
    MPI_OK(MPI_T_pvar_session_create(&s));
    MPI_OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
    MPI_OK(MPI_T_pvar_read(s, h, &v));
    MPI_OK(MPI_T_pvar_handle_free(s, &h));
    MPI_OK(MPI_T_pvar_session_free(&s));
    return v;
}
