/* A stand-in for the CUDA driver (built as libcuda.so.1) for the tests of a build without CUDA.
 * It exports cuPointerGetAttribute and reports CU_MEMORYTYPE_DEVICE for the address ranges a
 * test marks (fake_cuda_mark_device; fake_cuda_mark_managed adds CU_POINTER_ATTRIBUTE_IS_MANAGED),
 * and CUDA_ERROR_INVALID_VALUE for every other address, as the real driver does for memory it
 * does not know. No CUDA header: the values below are cuda.h's. */
#include <stddef.h>
#include <stdint.h>

enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 };         /* CUresult */
enum { CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,                     /* CUpointer_attribute */
       CU_POINTER_ATTRIBUTE_IS_MANAGED = 8 };
enum { CU_MEMORYTYPE_DEVICE = 2 };                               /* CUmemorytype */

#define MAX_RANGES 16
static struct {
    uintptr_t begin, end;
    unsigned managed;
} ranges[MAX_RANGES];
static int n_ranges;
static unsigned long queries;

static int mark(void *p, size_t bytes, unsigned managed)
{
    if (n_ranges == MAX_RANGES) return -1;
    ranges[n_ranges].begin = (uintptr_t)p;
    ranges[n_ranges].end = (uintptr_t)p + bytes;
    ranges[n_ranges].managed = managed;
    n_ranges++;
    return 0;
}

int fake_cuda_mark_device(void *p, size_t bytes) { return mark(p, bytes, 0); }
int fake_cuda_mark_managed(void *p, size_t bytes) { return mark(p, bytes, 1); }
/* How many times cuPointerGetAttribute was called. */
unsigned long fake_cuda_queries(void) { return __atomic_load_n(&queries, __ATOMIC_RELAXED); }

/* CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) */
int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr)
{
    __atomic_fetch_add(&queries, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < n_ranges; i++) {
        if (ptr < ranges[i].begin || ptr >= ranges[i].end) continue;
        if (attribute == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
            *(unsigned *)data = CU_MEMORYTYPE_DEVICE;
            return CUDA_SUCCESS;
        }
        if (attribute == CU_POINTER_ATTRIBUTE_IS_MANAGED) {
            *(unsigned *)data = ranges[i].managed;
            return CUDA_SUCCESS;
        }
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_ERROR_INVALID_VALUE;
}
