/* Shared helpers for weft's multi-rank tests (plain C11, header only). */
#ifndef WEFT_TESTS_MPI_COMMON_H
#define WEFT_TESTS_MPI_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_rank = -1;
static int t_size = 0;
static const char *t_name = "test";

static inline void t_init(int *argc, char ***argv, const char *name)
{
    t_name = name;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
}

/* Print a failure message tagged with the rank and abort the job. */
static inline void t_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "[%s rank %d] FAIL %s:%d: ", t_name, t_rank, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define FAIL(...) t_fail(__FILE__, __LINE__, __VA_ARGS__)
/* The condition goes first, on its own line: the message's arguments follow its format. */
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "[%s rank %d] check '%s' failed\n", t_name,      \
                    t_rank, #cond);                                          \
            FAIL(__VA_ARGS__);                                               \
        }                                                                    \
    } while (0)
/* An MPI call that must succeed (the handler may be ERRORS_RETURN). */
#define MPI_OK(call)                                                         \
    do {                                                                     \
        int t_rc_ = (call);                                                  \
        if (t_rc_ != MPI_SUCCESS) {                                          \
            char t_es_[MPI_MAX_ERROR_STRING];                                \
            int t_el_ = 0;                                                   \
            t_es_[0] = 0;                                                    \
            MPI_Error_string(t_rc_, t_es_, &t_el_);                          \
            FAIL("%s returned %d (%s)", #call, t_rc_, t_es_);                \
        }                                                                    \
    } while (0)
#define CHECK_EQ_INT(got, exp, what)                                         \
    do {                                                                     \
        long long t_g_ = (long long)(got), t_e_ = (long long)(exp);          \
        if (t_g_ != t_e_)                                                    \
            FAIL("%s: expected %lld, got %lld", (what), t_e_, t_g_);         \
    } while (0)

/* Deterministic byte pattern for message content. */
static inline unsigned char t_pat(uint32_t a, uint32_t b, uint32_t c, size_t i)
{
    uint32_t x = a * 0x9E3779B1u ^ b * 0x85EBCA77u ^ c * 0xC2B2AE3Du ^ (uint32_t)i * 0x27D4EB2Fu;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return (unsigned char)(x ^ (x >> 8) ^ (uint32_t)(i >> 8));
}

static inline void t_fill(unsigned char *buf, size_t n, uint32_t a, uint32_t b, uint32_t c)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = t_pat(a, b, c, i);
}

/* Verify a buffer filled by t_fill; reports the first mismatch and aborts. */
#define CHECK_PAT(buf, n, a, b, c, what)                                     \
    do {                                                                     \
        const unsigned char *t_b_ = (const unsigned char *)(buf);            \
        size_t t_n_ = (size_t)(n);                                           \
        for (size_t t_i_ = 0; t_i_ < t_n_; t_i_++) {                         \
            unsigned char t_e_ = t_pat((a), (b), (c), t_i_);                 \
            if (t_b_[t_i_] != t_e_)                                          \
                FAIL("%s: byte %zu of %zu: expected 0x%02x, got 0x%02x "     \
                     "(pattern %u/%u/%u)", (what), t_i_, t_n_, t_e_,         \
                     t_b_[t_i_], (unsigned)(a), (unsigned)(b), (unsigned)(c)); \
        }                                                                    \
    } while (0)

/* 1 when running on Open MPI. Used only to downgrade a few known Open MPI
 * 4.1 deviations from the standard to warnings, so the tests can be
 * validated against Open MPI while staying strict for weft. */
static inline int t_is_openmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    v[0] = 0;
    MPI_Get_library_version(v, &len);
    return strstr(v, "Open MPI") != NULL;
}

/* Report a known deviation of the reference implementation, or fail. */
#define KNOWN_BUG_OR_FAIL(is_known, ...)                                     \
    do {                                                                     \
        if (is_known) {                                                      \
            fprintf(stderr, "[%s rank %d] WARNING (known Open MPI bug, "     \
                    "tolerated): ", t_name, t_rank);                         \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        } else {                                                             \
            FAIL(__VA_ARGS__);                                               \
        }                                                                    \
    } while (0)

static inline void t_done(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("%s: OK (np %d)\n", t_name, t_size);
    MPI_Finalize();
}

/* xorshift64* PRNG, deterministic per seed. */
static inline uint64_t t_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#endif
