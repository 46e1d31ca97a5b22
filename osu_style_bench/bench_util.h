/*
 * bench_util.h - what the MPI benchmark driver (bench_common.c) and the GPU one
 * (gpu_bench_common.c) share: command-line number parsing and the library's version line.
 * Plain C11, header only, so that each driver still builds on its own (compare.sh compiles
 * bench_common.c alone).
 */
#ifndef WEFT_OSU_BENCH_UTIL_H
#define WEFT_OSU_BENCH_UTIL_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* A decimal int from `minimum` to 10^9.  Returns 0 on success. */
static inline int bench_parse_int(const char *s, int minimum, int *out)
{
    char *end = NULL;
    long v;
    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < minimum || v > 1000000000L)
        return -1;
    *out = (int)v;
    return 0;
}

/* The first line of MPI_Get_library_version into version (MPI_MAX_LIBRARY_VERSION_STRING + 1
 * bytes); returns its length. */
static inline size_t bench_library_version(char *version)
{
    int len = 0;
    size_t n;
    memset(version, 0, MPI_MAX_LIBRARY_VERSION_STRING + 1);
    MPI_Get_library_version(version, &len);
    if (len < 0)
        len = 0;
    if (len > MPI_MAX_LIBRARY_VERSION_STRING)
        len = MPI_MAX_LIBRARY_VERSION_STRING;
    version[len] = '\0';
    n = strcspn(version, "\r\n");
    version[n] = '\0';
    return n;
}

#endif
