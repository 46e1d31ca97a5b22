/*
 * osu_mbw_mr.c - OSU-style multiple bandwidth / message rate test (weft; plain C11 + MPI,
 * builds against any MPI).
 *
 * An even number of ranks form pairs: rank i (i < np/2) sends to rank i + np/2. Per iteration
 * every sender posts a window of MPI_Isend (default 64, -W), its receiver the matching window of
 * MPI_Irecv; both complete them with MPI_Waitall, and the receiver answers with a zero-byte
 * acknowledgement. All pairs start each timed run together (a barrier). Reported per size: the
 * aggregate bandwidth of all pairs (MB/s, 1e6 bytes per second) and the aggregate message rate
 * (messages per second). The first window of every size is checked byte by byte at every
 * receiver; a mismatch exits 1.
 *
 * Options: -m min:max sizes (default 1:4194304), -i iterations (windows; default 1000, 100
 * from 64 KiB), -x warm-up windows (default 10), -W window (1..1024), --csv (size,MB/s,msgs/s).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define MAX_WINDOW 1024
#define TAG_DATA 1
#define TAG_ACK 2

static unsigned char pattern(size_t size, int sender, size_t i) { return (unsigned char)((size * 3 + (size_t)sender * 17 + i) % 253); }

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-m min:max] [-i iterations] [-x warmup] [-W window] [--csv]\n", prog);
}

static int parse_sizes(const char *s, size_t *lo, size_t *hi)
{
    char *end = NULL;
    unsigned long long a = strtoull(s, &end, 10), b;
    if (end == s || *end != ':')
        return -1;
    b = strtoull(end + 1, &end, 10);
    if (*end != '\0' || a == 0 || b < a)
        return -1;
    *lo = (size_t)a;
    *hi = (size_t)b;
    return 0;
}

/* One run of `n` windows of `size` bytes; returns the seconds this rank took. */
static double run_windows(int sender, int peer, unsigned char *buf, size_t size, int window, int slots, int n,
                          MPI_Request *reqs)
{
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
        for (int w = 0; w < window; ++w) {
            if (sender)
                MPI_Isend(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
            else
                MPI_Irecv(buf + (size_t)(w % slots) * size, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
        }
        MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
        if (sender)
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD);
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    int rank, np, csv = 0, window = 64, iters = -1, warmup = 10;
    size_t min_size = 1, max_size = 4194304;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int a = 1; a < argc; ++a) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(argv[a], "--csv") == 0) {
            csv = 1;
        } else if (strcmp(argv[a], "-m") == 0 && v && parse_sizes(v, &min_size, &max_size) == 0) {
            ++a;
        } else if (strcmp(argv[a], "-i") == 0 && bench_parse_int(v, 1, &iters) == 0) {
            ++a;
        } else if (strcmp(argv[a], "-x") == 0 && bench_parse_int(v, 0, &warmup) == 0) {
            ++a;
        } else if (strcmp(argv[a], "-W") == 0 && bench_parse_int(v, 1, &window) == 0 && window <= MAX_WINDOW) {
            ++a;
        } else {
            if (rank == 0)
                usage(argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (np < 2 || np % 2 != 0) {
        if (rank == 0)
            fprintf(stderr, "%s: needs an even number of ranks (got %d)\n", argv[0], np);
        MPI_Finalize();
        return 2;
    }
    const int pairs = np / 2, sender = rank < pairs, peer = sender ? rank + pairs : rank - pairs;
    /* A receiver keeps the window's messages apart (up to 64 MiB of them), so that every byte
     * can be checked. */
    const size_t cap = (size_t)64 << 20;
    int slots = window;
    if (max_size * (size_t)window > cap)
        slots = max_size >= cap ? 1 : (int)(cap / max_size);
    unsigned char *buf = malloc(max_size * (size_t)slots);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)window);
    if (!buf || !reqs) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        if (csv)
            printf("# size,MB/s,messages/s (%d pairs, window %d)\n", pairs, window);
        else
            printf("# OSU-style MPI Multiple Bandwidth / Message Rate Test (weft)\n# [ pairs: %d ] [ window size: %d ]\n"
                   "# Size                  MB/s        Messages/s\n", pairs, window);
    }
    int failed = 0;
    for (size_t size = min_size; size <= max_size; size *= 2) {
        const int n = iters > 0 ? iters : size >= 65536 ? 100 : 1000;
        /* The checked window: every message carries the sender's pattern. */
        if (sender)
            for (size_t i = 0; i < size; ++i) buf[i] = pattern(size, rank, i);
        else
            memset(buf, 0, size * (size_t)slots);
        MPI_Barrier(MPI_COMM_WORLD);
        run_windows(sender, peer, buf, size, window, slots, 1, reqs);
        int bad = 0;
        if (!sender)
            for (int w = 0; w < slots && !bad; ++w)
                for (size_t i = 0; i < size; ++i)
                    if (buf[(size_t)w * size + i] != pattern(size, peer, i)) {
                        fprintf(stderr, "%s: rank %d, size %zu: message %d byte %zu is %u, expected %u\n", argv[0], rank,
                                size, w, i, buf[(size_t)w * size + i], pattern(size, peer, i));
                        bad = 1;
                        break;
                    }
        int any_bad = 0;
        MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any_bad) {
            failed = 1;
            break;
        }
        run_windows(sender, peer, buf, size, window, slots, warmup, reqs);
        MPI_Barrier(MPI_COMM_WORLD);
        const double mine = run_windows(sender, peer, buf, size, window, slots, n, reqs);
        double slowest = 0.0;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            const double messages = (double)pairs * window * n;
            const double rate = messages / slowest, mbps = rate * (double)size / 1e6;
            if (csv)
                printf("%zu,%.2f,%.0f\n", size, mbps, rate);
            else
                printf("%-10zu %18.2f %17.0f\n", size, mbps, rate);
            fflush(stdout);
        }
    }
    free(buf);
    free(reqs);
    MPI_Finalize();
    return failed;
}
