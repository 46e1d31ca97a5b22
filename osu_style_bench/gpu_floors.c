/*
 * gpu_floors.c - the raw CUDA floors the GPU point-to-point targets compare
 * against, measured in one run.
 *
 *   mpirun -np 2 gpu_floors [-s 4M] [-r 256M]      (or -np 1: no IPC part)
 *
 * Rank 0 alone (see gb_measure_floors): empty kernel + cudaStreamSynchronize;
 * 8-byte cudaMemcpyAsync D2D, D2H and H2D + sync (the osu_latency floors of
 * "D D", "D H", "H D"); the D2D copy roofline (256 MiB, -r).
 *
 * With 2 or more ranks, the raw CUDA IPC copy: rank 0 cudaMallocs a buffer of
 * -s bytes (default 4 MiB) and sends its cudaIpcMemHandle_t to rank 1 with
 * MPI_Send; rank 1 opens it once (cudaIpcOpenMemHandle) and, for each size
 * from 8 B to -s doubling, times
 *   latency:   one cudaMemcpyAsync from the peer buffer into its own + sync,
 *              averaged (compare with osu_latency -d cuda D D);
 *   bandwidth: a window of 64 such copies, then one sync; MB/s = 64 * size /
 *              time, 1e6 bytes (compare with osu_bw -d cuda D D, which also
 *              keeps 64 messages in flight and counts each message once).
 * Ranks above 1 only wait.  The ranks may share a GPU or use two.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_bench_common.h"

#define WINDOW 64

static void ipc_part(gb_ctx *c)
{
    cudaIpcMemHandle_t handle;
    void *mine = NULL, *peer = NULL;
    const size_t maxb = c->ipc_bytes;
    int peer_dev_same = 0;
    char peer_bus[GB_BUSID_LEN];

    memset(&handle, 0, sizeof(handle));
    memset(peer_bus, 0, sizeof(peer_bus));
    GB_CUDA(c, cudaMalloc(&mine, maxb));
    GB_CUDA(c, cudaMemset(mine, c->rank == 0 ? 0x5a : 0, maxb));
    GB_CUDA(c, cudaDeviceSynchronize());
    if (c->rank == 0) {
        GB_CUDA(c, cudaIpcGetMemHandle(&handle, mine));
        MPI_Send(&handle, (int)sizeof(handle), MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Send(c->busid, GB_BUSID_LEN, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
    } else if (c->rank == 1) {
        double t0, t_open, lat8 = 0.0, last_lat = 0.0, last_bw = 0.0;
        size_t size, last_size = 0;
        unsigned char probe[2] = {0, 0};
        MPI_Recv(&handle, (int)sizeof(handle), MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(peer_bus, GB_BUSID_LEN, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        peer_dev_same = strncmp(peer_bus, c->busid, GB_BUSID_LEN) == 0;
        t0 = MPI_Wtime();
        GB_CUDA(c, cudaIpcOpenMemHandle(&peer, handle, cudaIpcMemLazyEnablePeerAccess));
        t_open = (MPI_Wtime() - t0) * 1e6;

        /* One full copy, checked at both ends of the buffer. */
        GB_CUDA(c, cudaMemcpyAsync(mine, peer, maxb, cudaMemcpyDeviceToDevice, c->stream));
        GB_CUDA(c, cudaMemcpyAsync(&probe[0], mine, 1, cudaMemcpyDeviceToHost, c->stream));
        GB_CUDA(c, cudaMemcpyAsync(&probe[1], (char *)mine + maxb - 1, 1, cudaMemcpyDeviceToHost,
                                   c->stream));
        GB_CUDA(c, cudaStreamSynchronize(c->stream));
        if (probe[0] != 0x5a || probe[1] != 0x5a)
            gb_die(c, "IPC copy check", "data read through the IPC mapping is wrong");

        printf("#\n# Raw CUDA IPC copy: rank 1 (GPU %s) copies from rank 0's cudaMalloc buffer"
               " (GPU %s, %s)\n", c->busid, peer_bus, peer_dev_same ? "the same GPU" : "another GPU");
        printf("# opened once with cudaIpcOpenMemHandle: %.1f us\n", t_open);
        printf("# latency: one cudaMemcpyAsync + cudaStreamSynchronize, average\n");
        printf("# bandwidth: %d cudaMemcpyAsync in a row, then one sync; MB/s = %d * size / time"
               " (1e6 B/s)\n", WINDOW, WINDOW);
        printf("# %10s %16s %18s\n", "size (B)", "latency (us)", "bandwidth (MB/s)");
        for (size = 8; size <= maxb; size *= 2) {
            const int lat_reps = size <= 65536 ? 2000 : 200;
            const int bw_iters = size <= 65536 ? 50 : 10;
            double lat, bw;
            int i, w;
            for (i = 0; i < 20; ++i) {
                GB_CUDA(c, cudaMemcpyAsync(mine, peer, size, cudaMemcpyDeviceToDevice, c->stream));
                GB_CUDA(c, cudaStreamSynchronize(c->stream));
            }
            t0 = MPI_Wtime();
            for (i = 0; i < lat_reps; ++i) {
                GB_CUDA(c, cudaMemcpyAsync(mine, peer, size, cudaMemcpyDeviceToDevice, c->stream));
                GB_CUDA(c, cudaStreamSynchronize(c->stream));
            }
            lat = (MPI_Wtime() - t0) / lat_reps * 1e6;
            t0 = MPI_Wtime();
            for (i = 0; i < bw_iters; ++i) {
                for (w = 0; w < WINDOW; ++w)
                    GB_CUDA(c, cudaMemcpyAsync(mine, peer, size, cudaMemcpyDeviceToDevice,
                                               c->stream));
                GB_CUDA(c, cudaStreamSynchronize(c->stream));
            }
            bw = (double)size * WINDOW * bw_iters / (MPI_Wtime() - t0) / 1e6;
            printf("  %10zu %16.2f %18.2f\n", size, lat, bw);
            fflush(stdout);
            if (size == 8)
                lat8 = lat;
            last_size = size;
            last_lat = lat;
            last_bw = bw;
            if (size > maxb / 2)
                break;
        }
        printf("# IPC lat8_us=%.2f size=%zu lat_us=%.2f bw_MBs=%.2f\n", lat8, last_size, last_lat,
               last_bw);
        GB_CUDA(c, cudaIpcCloseMemHandle(peer));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    cudaFree(mine);
}

int main(int argc, char **argv)
{
    gb_ctx c;
    gb_floors f;

    gb_init(&argc, &argv, "gpu_floors",
            "Raw CUDA floors: empty kernel, 8-byte copies, copy roofline, CUDA IPC copy (np >= 2)",
            "  -s SIZE   largest CUDA IPC copy (default 4M); gpu_floors ignores -b -e -f -t -w -n -c\n",
            &c);
    gb_print_setup(&c);
    gb_measure_floors(&c, &f);
    gb_print_floors(&c, &f);
    if (c.nranks >= 2)
        ipc_part(&c);
    else if (c.rank == 0)
        printf("# one rank: no CUDA IPC copy (run with -np 2)\n");
    return gb_finalize(&c, 0);
}
