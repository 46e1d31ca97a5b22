/*
 * nccl_allreduce.c - the gpu_allreduce sweep with ncclAllReduce, for side-by-side
 * comparison: same options, same sizes and iteration counts, same columns.
 *
 *   mpirun -np P nccl_allreduce [-b 8] [-e 1G] [-f 2] [-t float] [-w 5] [-n 20]
 *
 * One rank per GPU (GPU = node-local rank % visible devices).  Rank 0 makes the
 * ncclUniqueId and broadcasts it with MPI_Bcast; each call is an ncclAllReduce
 * on the rank's stream, and a timed batch ends with cudaStreamSynchronize (as
 * nccl-tests does).  MPI only bootstraps, synchronises and gathers times, so any
 * MPI will do.
 *
 * NCCL refuses a communicator in which two ranks use the same GPU; when the
 * job places two ranks on one GPU the program says so and exits 0 without
 * measuring anything.  NCCL_NVLS_ENABLE defaults to 0 (no NVLink multicast)
 * unless the environment sets it.
 *
 * Exit status: 0 when every checked result was right (or the job shares a GPU),
 * 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <stdio.h>
#include <stdlib.h>

#include <nccl.h>

#include "gpu_bench_common.h"

typedef struct {
    ncclComm_t comm;
    cudaStream_t stream;
} nccl_state;

static ncclDataType_t nccl_type(gb_type t)
{
    switch (t) {
    case GB_INT32: return ncclInt32;
    case GB_FLOAT: return ncclFloat32;
    case GB_DOUBLE: return ncclFloat64;
    }
    return ncclFloat32;
}

static int nccl_allreduce(const void *sbuf, void *rbuf, size_t count, gb_type t, void *user)
{
    nccl_state *s = user;
    return ncclAllReduce(sbuf != NULL ? sbuf : rbuf, rbuf, count, nccl_type(t), ncclSum,
                         s->comm, s->stream) != ncclSuccess;
}

static int stream_sync(void *user)
{
    nccl_state *s = user;
    return cudaStreamSynchronize(s->stream) != cudaSuccess;
}

int main(int argc, char **argv)
{
    gb_ctx c;
    gb_floors f;
    nccl_state s;
    ncclUniqueId id;
    ncclResult_t r;
    long long errors;
    int version = 0;

    /* Never NVLink multicast unless asked for (the GPU machine's rule). */
    setenv("NCCL_NVLS_ENABLE", "0", 0);

    gb_init(&argc, &argv, "nccl_allreduce",
            "GPU allreduce sweep with ncclAllReduce (nccl-tests style), for comparison", NULL, &c);
    gb_print_setup(&c);
    if (c.ranks_per_gpu > 1) {
        if (c.rank == 0)
            printf("# nccl_allreduce: %d ranks share one GPU; NCCL does not allow two ranks of one"
                   " communicator on the same GPU.\n# Run one rank per GPU (np <= GPUs per node)."
                   " Nothing measured.\n", c.ranks_per_gpu);
        return gb_finalize(&c, 0);
    }

    if (c.rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
        gb_die(&c, "ncclGetUniqueId", "failed");
    MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    s.stream = c.stream;
    r = ncclCommInitRank(&s.comm, c.nranks, id, c.rank);
    if (r != ncclSuccess) {
        if (r == ncclInvalidUsage) {
            if (c.rank == 0)
                printf("# nccl_allreduce: ncclCommInitRank refused the job (%s); NCCL needs one"
                       " rank per GPU. Nothing measured.\n", ncclGetErrorString(r));
            return gb_finalize(&c, 0);
        }
        gb_die(&c, "ncclCommInitRank", ncclGetErrorString(r));
    }
    ncclGetVersion(&version);
    if (c.rank == 0) {
        const char *nvls = getenv("NCCL_NVLS_ENABLE");
        printf("# NCCL %d.%d.%d, NCCL_NVLS_ENABLE=%s\n", version / 10000, (version / 100) % 100,
               version % 100, nvls != NULL ? nvls : "(unset)");
    }

    gb_measure_floors(&c, &f);
    gb_print_floors(&c, &f);
    errors = gb_run_sweep(&c, &f, "ncclAllReduce", nccl_allreduce, stream_sync, &s);
    ncclCommDestroy(s.comm);
    return gb_finalize(&c, errors != 0);
}
