/* Point-to-point and collectives on GPU device buffers (cudaMalloc): blocking, non-blocking,
 * persistent sends, Sendrecv_replace, Mprobe/Mrecv, and Allreduce (in place too), Bcast, Reduce,
 * Allgather, Alltoall and Iallreduce. Every result is copied back to the host and checked.
 * Without a CUDA device every rank exits with 77, which CTest reports as skipped. */
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "gpu_common.h"


static int *dev_alloc(size_t n)
{
    void *p = NULL;
    CUDA_OK(cudaMalloc(&p, n * sizeof(int) + 1));
    return p;
}

static void to_dev(int *dev, const int *host, size_t n) { CUDA_OK(cudaMemcpy(dev, host, n * sizeof(int), cudaMemcpyHostToDevice)); }
static void from_dev(int *host, const int *dev, size_t n) { CUDA_OK(cudaMemcpy(host, dev, n * sizeof(int), cudaMemcpyDeviceToHost)); }

static void expect(const int *got, size_t n, int (*want)(size_t, int), int arg, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want(i, arg)) FAIL("%s: element %zu is %d, expected %d", what, i, got[i], want(i, arg));
}

static int pattern(size_t i, int rank) { return (int)(i * 7) + rank * 1000; }
static int summed(size_t i, int size) { return size * (int)(i * 7) + 1000 * size * (size - 1) / 2; }

int main(int argc, char **argv)
{
    t_gpu_init(&argc, &argv, "device_buffers");
    const size_t sizes[] = {1, 1000, 1 << 18};
    for (int si = 0; si < 3; si++) {
        const size_t n = sizes[si];
        int *h = malloc(n * sizeof(int) * (size_t)t_size), *d = dev_alloc(n), *d2 = dev_alloc(n);
        int *dall = dev_alloc(n * (size_t)t_size), *dall2 = dev_alloc(n * (size_t)t_size);
        const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
        /* Blocking ring: device to device. */
        for (size_t i = 0; i < n; i++) h[i] = pattern(i, t_rank);
        to_dev(d, h, n);
        MPI_OK(MPI_Sendrecv(d, (int)n, MPI_INT, right, 1, d2, (int)n, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        from_dev(h, d2, n);
        expect(h, n, pattern, left, "Sendrecv device to device");
        /* Non-blocking: device send, host receive, and host send, device receive. */
        int *hr = malloc(n * sizeof(int));
        MPI_Request rq[2];
        MPI_OK(MPI_Irecv(hr, (int)n, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Isend(d, (int)n, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[1]));
        MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        expect(hr, n, pattern, left, "Isend device, Irecv host");
        for (size_t i = 0; i < n; i++) hr[i] = pattern(i, t_rank);
        CUDA_OK(cudaMemset(d2, 0, n * sizeof(int)));
        MPI_OK(MPI_Irecv(d2, (int)n, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Isend(hr, (int)n, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[1]));
        MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        from_dev(h, d2, n);
        expect(h, n, pattern, left, "Isend host, Irecv device");
        /* Persistent, started twice. */
        MPI_OK(MPI_Recv_init(d2, (int)n, MPI_INT, left, 4, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Send_init(d, (int)n, MPI_INT, right, 4, MPI_COMM_WORLD, &rq[1]));
        for (int k = 0; k < 2; k++) {
            CUDA_OK(cudaMemset(d2, 0, n * sizeof(int)));
            MPI_OK(MPI_Startall(2, rq));
            MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            from_dev(h, d2, n);
            expect(h, n, pattern, left, "persistent device to device");
        }
        MPI_OK(MPI_Request_free(&rq[0]));
        MPI_OK(MPI_Request_free(&rq[1]));
        /* Sendrecv_replace in device memory. */
        for (size_t i = 0; i < n; i++) h[i] = pattern(i, t_rank);
        to_dev(d2, h, n);
        MPI_OK(MPI_Sendrecv_replace(d2, (int)n, MPI_INT, right, 5, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        from_dev(h, d2, n);
        expect(h, n, pattern, left, "Sendrecv_replace device");
        /* Matched probe, received into device memory. */
        MPI_Message msg;
        CUDA_OK(cudaMemset(d2, 0, n * sizeof(int)));
        MPI_OK(MPI_Isend(d, (int)n, MPI_INT, right, 6, MPI_COMM_WORLD, &rq[1]));
        MPI_OK(MPI_Mprobe(left, 6, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Mrecv(d2, (int)n, MPI_INT, &msg, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        from_dev(h, d2, n);
        expect(h, n, pattern, left, "Mrecv device");
        /* Collectives. */
        MPI_OK(MPI_Allreduce(d, d2, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        from_dev(h, d2, n);
        expect(h, n, summed, t_size, "Allreduce device");
        for (size_t i = 0; i < n; i++) h[i] = pattern(i, t_rank);
        to_dev(d2, h, n);
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, d2, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        from_dev(h, d2, n);
        expect(h, n, summed, t_size, "Allreduce device in place");
        MPI_OK(MPI_Reduce(d, d2, (int)n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
        if (t_rank == 0) {
            from_dev(h, d2, n);
            expect(h, n, summed, t_size, "Reduce device");
        }
        MPI_Request ir;
        MPI_OK(MPI_Iallreduce(d, d2, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &ir));
        MPI_OK(MPI_Wait(&ir, MPI_STATUS_IGNORE));
        from_dev(h, d2, n);
        expect(h, n, summed, t_size, "Iallreduce device");
        const int root = 1 % t_size;
        for (size_t i = 0; i < n; i++) h[i] = pattern(i, root);
        if (t_rank == root) to_dev(d2, h, n);
        else CUDA_OK(cudaMemset(d2, 0, n * sizeof(int)));
        MPI_OK(MPI_Bcast(d2, (int)n, MPI_INT, root, MPI_COMM_WORLD));
        from_dev(h, d2, n);
        expect(h, n, pattern, root, "Bcast device");
        MPI_OK(MPI_Allgather(d, (int)n, MPI_INT, dall, (int)n, MPI_INT, MPI_COMM_WORLD));
        from_dev(h, dall, n * (size_t)t_size);
        for (int r = 0; r < t_size; r++) expect(h + (size_t)r * n, n, pattern, r, "Allgather device");
        if (n <= 1000) {
            /* Alltoall: rank q's block r holds pattern(i, 16 q + r), and lands as block q at rank r. */
            for (int r = 0; r < t_size; r++)
                for (size_t i = 0; i < n; i++) h[(size_t)r * n + i] = pattern(i, t_rank * 16 + r);
            to_dev(dall, h, n * (size_t)t_size);
            MPI_OK(MPI_Alltoall(dall, (int)n, MPI_INT, dall2, (int)n, MPI_INT, MPI_COMM_WORLD));
            from_dev(h, dall2, n * (size_t)t_size);
            for (int r = 0; r < t_size; r++) expect(h + (size_t)r * n, n, pattern, r * 16 + t_rank, "Alltoall device");
        }
        free(hr);
        free(h);
        cudaFree(d);
        cudaFree(d2);
        cudaFree(dall);
        cudaFree(dall2);
    }
    t_done();
    return 0;
}
