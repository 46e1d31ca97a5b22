/* float16 (MPIX_C_FLOAT16) and bfloat16 (MPIX_BFLOAT16) on host buffers: allreduce sum, max
 * and min, reduce and reduce_scatter_block on small integers (exact in both formats, so every
 * algorithm's order gives the same bits), checked element by element. */
#include <stdint.h>
#include <string.h>

#include "common.h"

/* Bits of small integers: float16 and bfloat16 encodings of v in [-256, 256]. */
static uint16_t f16_of(int v)
{
    if (v == 0) return 0;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    unsigned a = (unsigned)(v < 0 ? -v : v);
    int e = 31 - __builtin_clz(a);
    return (uint16_t)(sign | ((e + 15) << 10) | ((a << (10 - e)) & 0x3ff));
}
static uint16_t bf16_of(int v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)(x >> 16);
}

static void run(MPI_Datatype t, uint16_t (*enc)(int), const char *name)
{
    enum { N = 1000 };
    static uint16_t in[N], out[N], blocks[N * 16];
    const int p = t_size;
    for (int i = 0; i < N; i++) in[i] = enc((i % 7) + t_rank);
    MPI_OK(MPI_Allreduce(in, out, N, t, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        const int want = p * (i % 7) + p * (p - 1) / 2;
        if (out[i] != enc(want)) FAIL("%s sum: element %d is 0x%04x, expected 0x%04x", name, i, out[i], enc(want));
    }
    MPI_OK(MPI_Allreduce(in, out, N, t, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        if (out[i] != enc((i % 7) + p - 1)) FAIL("%s max: element %d is 0x%04x", name, i, out[i]);
    MPI_OK(MPI_Allreduce(in, out, N, t, MPI_MIN, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        if (out[i] != enc(i % 7)) FAIL("%s min: element %d is 0x%04x", name, i, out[i]);
    memset(out, 0, sizeof(out));
    MPI_OK(MPI_Reduce(in, out, N, t, MPI_SUM, p - 1, MPI_COMM_WORLD));
    if (t_rank == p - 1)
        for (int i = 0; i < N; i++)
            if (out[i] != enc(p * (i % 7) + p * (p - 1) / 2)) FAIL("%s reduce: element %d is 0x%04x", name, i, out[i]);
    const int per = 10;
    for (int i = 0; i < per * p; i++) blocks[i] = enc((i % 5) - t_rank);
    MPI_OK(MPI_Reduce_scatter_block(blocks, out, per, t, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < per; i++) {
        const int k = t_rank * per + i, want = p * (k % 5) - p * (p - 1) / 2;
        if (out[i] != enc(want)) FAIL("%s reduce_scatter_block: element %d is 0x%04x, expected 0x%04x", name, i, out[i], enc(want));
    }
    int size = 0;
    MPI_OK(MPI_Type_size(t, &size));
    CHECK_EQ_INT(size, 2, name);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "short_float");
    CHECK(t_size <= 16, "at most 16 ranks");
    run(MPIX_C_FLOAT16, f16_of, "MPIX_C_FLOAT16");
    run(MPIX_BFLOAT16, bf16_of, "MPIX_BFLOAT16");
    t_done();
    return 0;
}
