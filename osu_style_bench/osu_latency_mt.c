/*
 * osu_latency_mt.c - OSU-style multi-threaded latency and message rate (weft; plain C11 +
 * pthreads + MPI, builds against any MPI).
 *
 * Two ranks, T threads each (-t, default 1); thread k of rank 0 and thread k of rank 1 form a
 * pair on tag k.  Two tests:
 *   latency (default): each pair ping-pongs; the one-way latency averaged over the pairs.
 *   rate (-r): each thread of rank 0 sends windows of 64 non-blocking messages to its partner,
 *   which receives them with non-blocking receives and answers each window with one byte;
 *   the total messages per second over all threads (osu_mbw_mr's method with threads).
 * The thread level asked for is -l single|funneled|serialized|multiple (default multiple);
 * more than one thread needs multiple.  The first message of every size is checked byte by
 * byte; a mismatch exits 1.
 *
 * Options: -t threads, -r (rate), -l level, -m min:max sizes (default 1:4096 latency,
 * 1:65536 rate), -i iterations (default 10000; rate: windows, default 1000), -x warm-up.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define MAX_THREADS 64

static int rank, nthreads = 1, rate_mode, iters = -1, warmup = -1;
static size_t min_size = 1, max_size = 0;
static pthread_barrier_t barrier;
static double results[MAX_THREADS];

static unsigned char pattern(size_t size, int thread, size_t i) { return (unsigned char)((size * 7 + (size_t)thread * 13 + i) % 251); }

static void fill(unsigned char *b, size_t size, int thread)
{
    for (size_t i = 0; i < size; ++i) b[i] = pattern(size, thread, i);
}

static void verify(const unsigned char *b, size_t size, int thread)
{
    for (size_t i = 0; i < size; ++i)
        if (b[i] != pattern(size, thread, i)) {
            fprintf(stderr, "osu_latency_mt: rank %d thread %d size %zu: byte %zu is %u, expected %u\n", rank, thread,
                    size, i, b[i], pattern(size, thread, i));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

/* Once every thread has its result for `size`: rank 0's thread 0 prints the row (latency: the
 * average over the threads; rate: the sum, and the bandwidth it makes). */
static void report_row(int t, size_t size)
{
    pthread_barrier_wait(&barrier);
    if (t == 0 && rank == 0) {
        double sum = 0;
        for (int k = 0; k < nthreads; ++k) sum += results[k];
        if (rate_mode) printf("%-10zu %18.0f %18.2f\n", size, sum, sum * (double)size / 1e6);
        else printf("%-10zu %18.2f\n", size, sum / nthreads);
        fflush(stdout);
    }
    pthread_barrier_wait(&barrier);
}

static void *latency_thread(void *arg)
{
    const int t = (int)(intptr_t)arg, peer = 1 - rank;
    unsigned char *sbuf = malloc(max_size ? max_size : 1), *rbuf = malloc(max_size ? max_size : 1);
    for (size_t size = min_size; size <= max_size; size = size ? size * 2 : 1) {
        fill(sbuf, size, t);
        double t0 = 0;
        for (int i = 0; i < iters + warmup; ++i) {
            if (i == warmup) {
                pthread_barrier_wait(&barrier);
                t0 = MPI_Wtime();
            }
            if (rank == 0) {
                MPI_Send(sbuf, (int)size, MPI_BYTE, peer, t, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)size, MPI_BYTE, peer, t, MPI_COMM_WORLD);
            }
            if (i == 0) verify(rbuf, size, t);
        }
        results[t] = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
        report_row(t, size);
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

static void *rate_thread(void *arg)
{
    const int t = (int)(intptr_t)arg, peer = 1 - rank;
    unsigned char *buf = malloc(max_size * WINDOW), ack = 0;
    MPI_Request req[WINDOW];
    for (size_t size = min_size; size <= max_size; size *= 2) {
        double t0 = 0;
        for (int i = 0; i < iters + warmup; ++i) {
            if (i == warmup) {
                pthread_barrier_wait(&barrier);
                t0 = MPI_Wtime();
            }
            if (rank == 0) {
                for (int w = 0; w < WINDOW; ++w) {
                    fill(buf + (size_t)w * size, i == 0 ? size : 0, t);
                    MPI_Isend(buf + (size_t)w * size, (int)size, MPI_BYTE, peer, t, MPI_COMM_WORLD, &req[w]);
                }
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Recv(&ack, 1, MPI_BYTE, peer, t + MAX_THREADS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int w = 0; w < WINDOW; ++w)
                    MPI_Irecv(buf + (size_t)w * size, (int)size, MPI_BYTE, peer, t, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                if (i == 0)
                    for (int w = 0; w < WINDOW; ++w) verify(buf + (size_t)w * size, size, t);
                MPI_Send(&ack, 1, MPI_BYTE, peer, t + MAX_THREADS, MPI_COMM_WORLD);
            }
        }
        results[t] = (double)iters * WINDOW / (MPI_Wtime() - t0);
        report_row(t, size);
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int level = MPI_THREAD_MULTIPLE, provided, size;
    const char *level_name = "multiple";
    for (int a = 1; a < argc; ++a) {
        const char *v = a + 1 < argc ? argv[a + 1] : "";
        if (!strcmp(argv[a], "-t")) nthreads = atoi(v), ++a;
        else if (!strcmp(argv[a], "-r")) rate_mode = 1;
        else if (!strcmp(argv[a], "-i")) iters = atoi(v), ++a;
        else if (!strcmp(argv[a], "-x")) warmup = atoi(v), ++a;
        else if (!strcmp(argv[a], "-m")) {
            if (sscanf(v, "%zu:%zu", &min_size, &max_size) != 2) min_size = max_size = (size_t)atol(v);
            ++a;
        } else if (!strcmp(argv[a], "-l")) {
            level_name = v;
            level = !strcmp(v, "single") ? MPI_THREAD_SINGLE
                    : !strcmp(v, "funneled") ? MPI_THREAD_FUNNELED
                    : !strcmp(v, "serialized") ? MPI_THREAD_SERIALIZED
                    : MPI_THREAD_MULTIPLE;
            ++a;
        } else {
            fprintf(stderr, "usage: osu_latency_mt [-t threads] [-r] [-l level] [-m min:max] [-i iters] [-x warmup]\n");
            return 2;
        }
    }
    MPI_Init_thread(&argc, &argv, level, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || nthreads < 1 || nthreads > MAX_THREADS || (nthreads > 1 && provided < MPI_THREAD_MULTIPLE)) {
        if (rank == 0)
            fprintf(stderr, "osu_latency_mt: needs 2 ranks, 1..%d threads, and MPI_THREAD_MULTIPLE for more than one "
                            "(provided %d)\n", MAX_THREADS, provided);
        MPI_Finalize();
        return 2;
    }
    if (!max_size) max_size = rate_mode ? 65536 : 4096;
    if (rate_mode && min_size == 0) min_size = 1;
    if (iters < 0) iters = rate_mode ? 1000 : 10000;
    if (warmup < 0) warmup = iters / 10;
    if (rank == 0) {
        printf("# OSU-style multi-threaded %s test: %d thread%s per rank, level %s (provided %d)\n",
               rate_mode ? "message rate" : "latency", nthreads, nthreads > 1 ? "s" : "", level_name, provided);
        printf(rate_mode ? "%-10s %18s %18s\n" : "%-10s %18s\n", "# Size", rate_mode ? "Messages/s" : "Latency (us)",
               "MB/s");
        fflush(stdout);
    }
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    pthread_t th[MAX_THREADS];
    for (int t = 0; t < nthreads; ++t)
        pthread_create(&th[t], NULL, rate_mode ? rate_thread : latency_thread, (void *)(intptr_t)t);
    for (int t = 0; t < nthreads; ++t) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&barrier);
    MPI_Finalize();
    return 0;
}
