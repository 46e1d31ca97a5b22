/*
 * gpu_allreduce.c - nccl-tests-style allreduce sweep on GPU device buffers
 * through MPI_Allreduce (weft, or any CUDA-aware MPI).
 *
 *   mpirun -np P gpu_allreduce [-b 8] [-e 1G] [-f 2] [-t float] [-w 5] [-n 20]
 *
 * Every rank allocates its buffers with cudaMalloc on GPU (node-local rank %
 * visible devices) and calls MPI_Allreduce(MPI_SUM) on them, out of place and
 * in place (MPI_IN_PLACE).  Before the sweep it measures the floors the
 * project's targets compare against, in the same run:
 *   - empty kernel + cudaStreamSynchronize (the 8-byte allreduce floor);
 *   - 8-byte cudaMemcpyAsync device-to-device + sync (the pt2pt floor);
 *   - the device copy roofline: cudaMemcpyAsync D2D of 256 MiB (-r), GB/s
 *     counting bytes read + written.
 * Per size it prints time, algbw, busbw and #wrong as nccl-tests does, plus
 * xfloor = time / empty-kernel floor and roof% = the least device-memory time
 * of any allreduce / time, where the least time is
 *     T_roof(S) = 2 * k * S / roofline,  k = most ranks sharing one GPU:
 * whatever the algorithm, every rank's S-byte input must be read at least
 * once and its S-byte output written at least once, all in that GPU's memory
 * (2kS bytes).  The bound is reachable on one GPU: rank j reduces slice j of
 * every input and writes the reduced slice into every output (read S, write
 * S per rank).  A one-shot moves k(k+1)S, a two-shot through a separate
 * buffer (3k-1)S.  With one rank per GPU (k = 1) it is only the local-memory
 * bound; the links (busbw) bound such runs.
 *
 * Exit status: 0 when every checked result was right, 1 otherwise.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu_bench_common.h"

static MPI_Datatype mpi_type(gb_type t)
{
    switch (t) {
    case GB_INT32: return MPI_INT;
    case GB_FLOAT: return MPI_FLOAT;
    case GB_DOUBLE: return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

static int mpi_allreduce(const void *sbuf, void *rbuf, size_t count, gb_type t, void *user)
{
    (void)user;
    if (count > (size_t)INT_MAX)
        return 1;
    return MPI_Allreduce(sbuf != NULL ? sbuf : MPI_IN_PLACE, rbuf, (int)count, mpi_type(t),
                         MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
}

/* MPI_Allreduce is complete on return; the device sync only keeps the timing
 * honest should an implementation leave work queued. */
static int device_sync(void *user)
{
    (void)user;
    return cudaDeviceSynchronize() != cudaSuccess;
}

#ifdef MPIX_STREAM_NULL
/* GPU_ALLREDUCE_STREAM=1: MPIX_Allreduce_enqueue on a stream communicator, calls
 * back to back on one CUDA stream and one cudaStreamSynchronize per timed batch,
 * as nccl_allreduce times ncclAllReduce (the MPICH stream API).
 * GPU_ALLREDUCE_STREAM=2: the same call, synchronised after each one: what a
 * blocking call built on the enqueued one could cost at best. */
struct stream_mode {
    cudaStream_t stream;
    MPI_Comm comm;
    void *handles[2];
    int sync_each; /* GPU_ALLREDUCE_STREAM=2: cudaStreamSynchronize after every call */
};

#ifdef WEFT
/* GPU_ALLREDUCE_REGISTER=1 (with GPU_ALLREDUCE_STREAM=1): the sweep's buffers are registered
 * with the stream communicator (MPIX_Comm_register_buffer), as a framework registers its
 * gradient buckets once. */
static int register_hook(void *sbuf, void *rbuf, size_t bytes, int attach, void *user)
{
    struct stream_mode *m = user;
    void *bufs[2] = {sbuf, rbuf};
    for (int k = 0; k < 2; k++) {
        if (attach && MPIX_Comm_register_buffer(m->comm, bufs[k], (MPI_Aint)bytes, &m->handles[k]) != MPI_SUCCESS)
            return 1;
        if (!attach && MPIX_Comm_deregister_buffer(m->comm, m->handles[k]) != MPI_SUCCESS)
            return 1;
    }
    return 0;
}
#endif

static int enqueue_allreduce(const void *sbuf, void *rbuf, size_t count, gb_type t, void *user)
{
    const struct stream_mode *m = user;
    if (count > (size_t)INT_MAX)
        return 1;
    if (MPIX_Allreduce_enqueue(sbuf != NULL ? sbuf : MPI_IN_PLACE, rbuf, (int)count, mpi_type(t), MPI_SUM,
                               m->comm) != MPI_SUCCESS)
        return 1;
    return m->sync_each && cudaStreamSynchronize(m->stream) != cudaSuccess;
}

static int stream_sync(void *user)
{
    const struct stream_mode *m = user;
    return cudaStreamSynchronize(m->stream) != cudaSuccess;
}

static int stream_mode_init(struct stream_mode *m)
{
    MPI_Info info;
    MPIX_Stream ms;
    if (cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking) != cudaSuccess)
        return 1;
    if (MPI_Info_create(&info) != MPI_SUCCESS || MPI_Info_set(info, "type", "cudaStream_t") != MPI_SUCCESS ||
        MPIX_Info_set_hex(info, "value", &m->stream, (int)sizeof(m->stream)) != MPI_SUCCESS ||
        MPIX_Stream_create(info, &ms) != MPI_SUCCESS ||
        MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &m->comm) != MPI_SUCCESS)
        return 1;
    MPI_Info_free(&info);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    gb_ctx c;
    gb_floors f;
    long long errors;

    gb_init(&argc, &argv, "gpu_allreduce",
            "GPU allreduce sweep on device buffers through MPI_Allreduce (nccl-tests style)",
            NULL, &c);
    gb_print_setup(&c);
    gb_measure_floors(&c, &f);
    gb_print_floors(&c, &f);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#ifdef MPIX_STREAM_NULL
    const char *stream_env = getenv("GPU_ALLREDUCE_STREAM");
    if (stream_env && atoi(stream_env)) {
        struct stream_mode m = {0};
        m.sync_each = atoi(stream_env) == 2;
        if (stream_mode_init(&m)) {
            fprintf(stderr, "gpu_allreduce: could not make a stream communicator\n");
            return gb_finalize(&c, 1);
        }
#ifdef WEFT
        const char *reg_env = getenv("GPU_ALLREDUCE_REGISTER");
        if (reg_env && atoi(reg_env))
            c.buffers_hook = register_hook;
#endif
        errors = gb_run_sweep(&c, &f,
                              m.sync_each      ? "MPIX_Allreduce_enqueue + cudaStreamSynchronize per call"
                              : c.buffers_hook ? "MPIX_Allreduce_enqueue (registered buffers)"
                                               : "MPIX_Allreduce_enqueue",
                              enqueue_allreduce, stream_sync, &m);
        MPI_Comm_free(&m.comm);
        return gb_finalize(&c, errors != 0);
    }
#endif
    errors = gb_run_sweep(&c, &f, "MPI_Allreduce", mpi_allreduce, device_sync, NULL);
    return gb_finalize(&c, errors != 0);
}
