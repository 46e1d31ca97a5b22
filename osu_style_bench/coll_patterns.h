/*
 * coll_patterns.h - the data of the broadcast, allgather and all-to-all tests, shared by their
 * blocking and non-blocking programs: what each rank sends and what it must receive, written
 * into a host buffer (bench_desc.fill / .expect).
 */
#ifndef WEFT_COLL_PATTERNS_H
#define WEFT_COLL_PATTERNS_H

#include "bench_common.h"

#define PATTERN_ROOT 0
#define PATTERN_PERIOD 97

/* Broadcast: byte i of the root's buffer for a message of `size` bytes (never 0). */
static inline size_t bcast_root_pattern(const bench_case *c, void *host)
{
    char *bytes = host;
    size_t k;
    for (k = 0; k < c->size; ++k)
        bytes[k] = (char)('a' + (c->size + k) % 26u);
    return c->size;
}

/* The root sends the pattern, the others start from a zeroed buffer. */
static inline size_t bcast_root_input(const bench_case *c, void *host)
{
    return c->opts->rank == PATTERN_ROOT ? bcast_root_pattern(c, host) : 0;
}

/* Allgather: byte i of rank r's block, 1..PATTERN_PERIOD, different from rank to rank. */
static inline char allgather_byte(int rank, size_t i)
{
    return (char)((((size_t)rank * 31u + i) % PATTERN_PERIOD) + 1u);
}

static inline size_t allgather_own_block(const bench_case *c, void *host)
{
    char *bytes = host;
    size_t k;
    for (k = 0; k < c->size; ++k)
        bytes[k] = allgather_byte(c->opts->rank, k);
    return c->size;
}

/* Block r of the result is rank r's contribution. */
static inline size_t allgather_every_block(const bench_case *c, void *host)
{
    const size_t total = c->size * (size_t)c->opts->nranks;
    char *bytes = host;
    size_t k;
    for (k = 0; k < total; ++k)
        bytes[k] = allgather_byte((int)(k / c->size), k % c->size);
    return total;
}

/* All-to-all: byte i of the block rank `src` sends to rank `dst`, 1..PATTERN_PERIOD. */
static inline char alltoall_byte(int src, int dst, size_t i)
{
    return (char)((((size_t)src * 31u + (size_t)dst * 17u + i) % PATTERN_PERIOD) + 1u);
}

/* Block d of the input goes to rank d. */
static inline size_t alltoall_blocks_sent(const bench_case *c, void *host)
{
    const size_t total = c->size * (size_t)c->opts->nranks;
    char *bytes = host;
    size_t k;
    for (k = 0; k < total; ++k)
        bytes[k] = alltoall_byte(c->opts->rank, (int)(k / c->size), k % c->size);
    return total;
}

/* Block s of the result came from rank s. */
static inline size_t alltoall_blocks_received(const bench_case *c, void *host)
{
    const size_t total = c->size * (size_t)c->opts->nranks;
    char *bytes = host;
    size_t k;
    for (k = 0; k < total; ++k)
        bytes[k] = alltoall_byte((int)(k / c->size), c->opts->rank, k % c->size);
    return total;
}

#endif
