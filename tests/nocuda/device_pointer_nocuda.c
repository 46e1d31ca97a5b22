/* A build without CUDA, in a process that has the CUDA driver loaded (a fake libcuda.so.1,
 * fake_libcuda.c, which calls the range this test marks device memory): every point-to-point
 * and collective call on a device buffer returns an error of class MPI_ERR_BUFFER with a
 * message (MPI_ERRORS_RETURN), never touching the buffer (the range is mapped PROT_NONE, so a
 * dereference is a segfault), and the same calls on host and managed memory still work.
 * Built twice: linked with the fake driver, and with WEFT_FAKE_CUDA_LATE (its path), which
 * loads it with dlopen only after MPI_Init and a first MPI call. */
#define _DEFAULT_SOURCE
#include <sys/mman.h>

#include "common.h"

/* CHECK with printf arguments (common.h's CHECK appends the condition after them). */
#define EXPECT(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond)) FAIL(__VA_ARGS__);                                      \
    } while (0)

#ifdef WEFT_FAKE_CUDA_LATE
#include <dlfcn.h>
#else
int fake_cuda_mark_device(void *p, size_t bytes);
int fake_cuda_mark_managed(void *p, size_t bytes);
unsigned long fake_cuda_queries(void);
#endif

static int (*mark_device)(void *, size_t);
static int (*mark_managed)(void *, size_t);
static unsigned long (*queries)(void);

static void load_fake_driver(void)
{
#ifdef WEFT_FAKE_CUDA_LATE
    void *lib = dlopen(WEFT_FAKE_CUDA_LATE, RTLD_NOW | RTLD_GLOBAL);
    EXPECT(lib != NULL, "dlopen(%s): %s", WEFT_FAKE_CUDA_LATE, dlerror());
    *(void **)&mark_device = dlsym(lib, "fake_cuda_mark_device");
    *(void **)&mark_managed = dlsym(lib, "fake_cuda_mark_managed");
    *(void **)&queries = dlsym(lib, "fake_cuda_queries");
    EXPECT(mark_device && mark_managed && queries, "fake driver symbols missing");
#else
    mark_device = fake_cuda_mark_device;
    mark_managed = fake_cuda_mark_managed;
    queries = fake_cuda_queries;
#endif
}

enum { N = 64 };

static void expect_buffer_error(int rc, const char *call)
{
    int cls = -1, len = 0;
    char es[MPI_MAX_ERROR_STRING];
    EXPECT(rc != MPI_SUCCESS, "%s on a device buffer returned MPI_SUCCESS", call);
    MPI_OK(MPI_Error_class(rc, &cls));
    es[0] = 0;
    MPI_OK(MPI_Error_string(rc, es, &len));
    EXPECT(cls == MPI_ERR_BUFFER, "%s: error class %d (%s), expected MPI_ERR_BUFFER", call, cls, es);
    EXPECT(len > 0 && (int)strlen(es) == len, "%s: empty error string", call);
    EXPECT(strstr(es, "CUDA device memory") && strstr(es, "without CUDA"),
          "%s: error string does not say why: '%s'", call, es);
    if (t_rank == 0 && !strcmp(call, "MPI_Send")) printf("error string: %s\n", es);
}

/* Host (or managed) buffers: a ring by send and receive, Isend/Irecv, Allreduce and Bcast. */
static void host_calls(int *a, int *b, const char *what)
{
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    MPI_Request rq[2];
    for (int i = 0; i < N; i++) a[i] = t_rank * 1000 + i;
    memset(b, 0, N * sizeof(int));
    if (t_size == 1) {
        MPI_OK(MPI_Isend(a, N, MPI_INT, 0, 1, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Recv(b, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    } else if (t_rank % 2 == 0) {
        MPI_OK(MPI_Send(a, N, MPI_INT, right, 1, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(b, N, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        MPI_OK(MPI_Recv(b, N, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(a, N, MPI_INT, right, 1, MPI_COMM_WORLD));
    }
    for (int i = 0; i < N; i++) EXPECT(b[i] == left * 1000 + i, "%s Send/Recv: element %d is %d", what, i, b[i]);
    memset(b, 0, N * sizeof(int));
    MPI_OK(MPI_Irecv(b, N, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Isend(a, N, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) EXPECT(b[i] == left * 1000 + i, "%s Isend/Irecv: element %d is %d", what, i, b[i]);
    MPI_OK(MPI_Allreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        EXPECT(b[i] == 1000 * t_size * (t_size - 1) / 2 + t_size * i, "%s Allreduce: element %d is %d", what, i, b[i]);
    if (t_rank != 0) memset(a, 0, N * sizeof(int));
    MPI_OK(MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) EXPECT(a[i] == i, "%s Bcast: element %d is %d", what, i, a[i]);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "device_pointer_nocuda");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int)), *h = malloc(N * (size_t)t_size * sizeof(int));
    EXPECT(a && b && h, "malloc");
#ifdef WEFT_FAKE_CUDA_LATE
    host_calls(a, b, "host before the driver is loaded");
#endif
    load_fake_driver();
    /* "Device memory": reserved, never accessible from the host. */
    const size_t dev_bytes = 1 << 20;
    int *dev = mmap(NULL, dev_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT(dev != MAP_FAILED, "mmap");
    EXPECT(mark_device(dev, dev_bytes) == 0, "fake_cuda_mark_device");
    int *dev2 = dev + dev_bytes / sizeof(int) / 2;
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    MPI_Request rq = MPI_REQUEST_NULL;

    expect_buffer_error(MPI_Send(dev, N, MPI_INT, right, 3, MPI_COMM_WORLD), "MPI_Send");
    expect_buffer_error(MPI_Ssend(dev2, N, MPI_INT, right, 3, MPI_COMM_WORLD), "MPI_Ssend");
    expect_buffer_error(MPI_Recv(dev, N, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    expect_buffer_error(MPI_Isend(dev, N, MPI_INT, right, 3, MPI_COMM_WORLD, &rq), "MPI_Isend");
    expect_buffer_error(MPI_Irecv(dev, N, MPI_INT, left, 3, MPI_COMM_WORLD, &rq), "MPI_Irecv");
    expect_buffer_error(MPI_Send_init(dev, N, MPI_INT, right, 3, MPI_COMM_WORLD, &rq), "MPI_Send_init");
    expect_buffer_error(MPI_Sendrecv(a, N, MPI_INT, right, 3, dev, N, MPI_INT, left, 3, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE), "MPI_Sendrecv");
    expect_buffer_error(MPI_Sendrecv_replace(dev, N, MPI_INT, right, 3, left, 3, MPI_COMM_WORLD,
                                             MPI_STATUS_IGNORE), "MPI_Sendrecv_replace");
    /* Every rank passes device memory, so no rank waits for another. */
    expect_buffer_error(MPI_Allreduce(dev, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce (send)");
    expect_buffer_error(MPI_Allreduce(a, dev, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce (recv)");
    expect_buffer_error(MPI_Allreduce(MPI_IN_PLACE, dev, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce (in place)");
    expect_buffer_error(MPI_Bcast(dev, N, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    expect_buffer_error(MPI_Reduce(dev, b, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
    expect_buffer_error(MPI_Allgather(a, N, MPI_INT, dev, N, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    expect_buffer_error(MPI_Iallreduce(dev, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq), "MPI_Iallreduce");
    /* The same calls on host memory, and on managed memory (host accessible), still work. */
    host_calls(a, b, "host");
    int *managed = malloc(2 * N * sizeof(int));
    EXPECT(managed && mark_managed(managed, 2 * N * sizeof(int)) == 0, "fake_cuda_mark_managed");
    host_calls(managed, managed + N, "managed");
    EXPECT(queries() > 0, "weft never asked the driver");
    MPI_OK(MPI_Allgather(a, N, MPI_INT, h, N, MPI_INT, MPI_COMM_WORLD));
    free(managed);
    free(h);
    free(b);
    free(a);
    munmap(dev, dev_bytes);
    t_done();
    return 0;
}
