/* Memory kinds before and after CUDA is initialised. MPI_Init must leave CUDA uninitialised
 * (checked with the driver, which answers CUDA_ERROR_NOT_INITIALIZED until then) and MPI sends
 * host buffers; then another thread initialises CUDA, makes the primary context and allocates
 * device and managed memory, and this thread, which has no current context, sends and receives
 * them: the data must arrive intact, so telling host memory from device memory must notice CUDA
 * initialised elsewhere after MPI_Init. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_common.h"

enum { kBytes = 1 << 16, kSmall = 8 };

static int g_device;
static unsigned char *g_dev_send, *g_dev_recv, *g_managed;

static void *allocate_elsewhere(void *arg)
{
    (void)arg;
    CUDA_OK(cudaSetDevice(g_device));
    CUDA_OK(cudaMalloc((void **)&g_dev_send, kBytes));
    CUDA_OK(cudaMalloc((void **)&g_dev_recv, kBytes));
    CUDA_OK(cudaMallocManaged((void **)&g_managed, kBytes, cudaMemAttachGlobal));
    unsigned char *host = malloc(kBytes);
    t_fill(host, kBytes, 1, (uint32_t)t_rank, 0);
    CUDA_OK(cudaMemcpy(g_dev_send, host, kBytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(g_dev_recv, 0, kBytes));
    CUDA_OK(cudaDeviceSynchronize());
    free(host);
    return NULL;
}

/* Rank 0 and 1 swap `bytes` of send for recv; others take no part. */
static void swap(const void *send, void *recv, int bytes)
{
    if (t_rank > 1) return;
    const int peer = 1 - t_rank;
    MPI_OK(MPI_Sendrecv(send, bytes, MPI_BYTE, peer, 7, recv, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
}

/* The device count, asked in a child process so that this one does not initialise CUDA. */
static int devices_or_skip_without_init(void)
{
    fflush(stdout);
    const pid_t child = fork();
    if (child < 0) FAIL("fork failed");
    if (child == 0) {
        int n = 0;
        _exit(cudaGetDeviceCount(&n) == cudaSuccess ? (n > 100 ? 100 : n) : 0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) FAIL("the device-count child failed");
    if (WEXITSTATUS(status) == 0) {
        printf("SKIP: no CUDA device\n");
        exit(77);
    }
    return WEXITSTATUS(status);
}

/* Whether the driver is initialised in this process (without initialising it). */
static int cuda_initialised(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) return 0;
    CUresult (*count)(int *) = (CUresult(*)(int *))dlsym(lib, "cuDeviceGetCount");
    int n = 0;
    const int initialised = count && count(&n) != CUDA_ERROR_NOT_INITIALIZED;
    dlclose(lib);
    return initialised;
}

int main(int argc, char **argv)
{
    const int devices = devices_or_skip_without_init();
    t_init(&argc, &argv, "memkind_gate");
    if (cuda_initialised()) FAIL("MPI_Init initialised CUDA");
    if (t_size < 2) FAIL("needs at least 2 ranks");
    g_device = t_local_rank() % devices;
    const int peer = 1 - t_rank;

    /* CUDA not initialised yet: host buffers, small and large. */
    unsigned char *hs = malloc(kBytes), *hr = malloc(kBytes);
    for (int bytes = kSmall; bytes <= kBytes; bytes *= 64) {
        t_fill(hs, (size_t)bytes, 0, (uint32_t)t_rank, (uint32_t)bytes);
        memset(hr, 0, kBytes);
        swap(hs, hr, bytes);
        if (t_rank <= 1) CHECK_PAT(hr, (size_t)bytes, 0, (uint32_t)peer, (uint32_t)bytes, "host buffer, no context");
    }
    if (cuda_initialised()) FAIL("sending host buffers initialised CUDA");

    pthread_t th;
    if (pthread_create(&th, NULL, allocate_elsewhere, NULL) != 0) FAIL("pthread_create failed");
    pthread_join(th, NULL);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Device memory from a context this thread does not have current. */
    swap(g_dev_send, g_dev_recv, kBytes);
    if (t_rank <= 1) {
        CUDA_OK(cudaMemcpy(hr, g_dev_recv, kBytes, cudaMemcpyDeviceToHost));
        CHECK_PAT(hr, kBytes, 1, (uint32_t)peer, 0, "device buffer made on another thread");
    }

    /* Managed memory, and host memory again once a context exists. */
    t_fill(hs, kSmall, 2, (uint32_t)t_rank, 0);
    memset(g_managed, 0, kBytes);
    swap(hs, g_managed, kSmall);
    if (t_rank <= 1) CHECK_PAT(g_managed, kSmall, 2, (uint32_t)peer, 0, "managed buffer");
    t_fill(hs, kBytes, 3, (uint32_t)t_rank, 0);
    memset(hr, 0, kBytes);
    swap(hs, hr, kBytes);
    if (t_rank <= 1) CHECK_PAT(hr, kBytes, 3, (uint32_t)peer, 0, "host buffer after the context");

    CUDA_OK(cudaFree(g_dev_send));
    CUDA_OK(cudaFree(g_dev_recv));
    CUDA_OK(cudaFree(g_managed));
    free(hs);
    free(hr);
    t_done();
    return 0;
}
