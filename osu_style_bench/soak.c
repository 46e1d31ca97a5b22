/* Soak: random mixed point-to-point, collectives and one-sided traffic for a given time, every
 * byte checked against what the sender wrote, with the process's resident memory and the
 * node's /dev/shm files sampled as it goes. Rank 0 draws each round's operation and seed and
 * broadcasts them, so every rank agrees; data are a function of (round, rank, index), so any
 * rank can check any buffer.
 *   soak [--seconds S] [--max-count N]
 * Prints, from rank 0, the rounds of each kind, and memory at the end of the first quarter and
 * at the end (every rank's maximum). Exits 1 on a wrong byte (it names the round, operation and
 * index), 2 when memory grew. scripts/soak.sh checks /dev/shm around the whole job. Plain MPI:
 * the same source builds against another MPI. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kPt2pt, kIsendIrecv, kAllreduce, kBcast, kAllgather, kAlltoall, kReduceScatter, kBarrier, kRmaPut, kRmaAcc,
       kKinds };
static const char *const kNames[kKinds] = {"sendrecv", "isend/irecv", "allreduce", "bcast", "allgather",
                                           "alltoall", "reduce_scatter", "barrier", "put/get", "accumulate"};

static int rank, size;

static int32_t value(uint64_t round, int from, size_t i) {
  uint64_t x = round * 0x9e3779b97f4a7c15ull ^ (uint64_t)from * 0xbf58476d1ce4e5b9ull ^ (uint64_t)i * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return (int32_t)(x & 0x3fffffff);  /* small enough that sums of a few ranks do not overflow */
}

static void fail(uint64_t round, int kind, size_t i, int32_t got, int32_t want) {
  fprintf(stderr, "soak: rank %d round %llu %s: element %zu is %d, expected %d\n", rank, (unsigned long long)round,
          kNames[kind], i, (int)got, (int)want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static long resident_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  if (f) fclose(f);
  return kib;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  double seconds = 60;
  size_t max_count = 1 << 18;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
    if (!strcmp(argv[i], "--max-count")) max_count = (size_t)atol(argv[i + 1]);
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int32_t *a = malloc(max_count * (size_t)size * sizeof(int32_t));
  int32_t *b = malloc(max_count * (size_t)size * sizeof(int32_t));
  /* One window for the whole run: each rank owns max_count ints. */
  int32_t *win_mem;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)(max_count * sizeof(int32_t)), sizeof(int32_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem,
                   &win);
  long counts[kKinds] = {0};
  long rss_quarter = -1;
  const double start = now();
  uint64_t round = 0;
  unsigned rng = 12345;
  for (;; ++round) {
    /* rank 0 decides: go on?, which kind, how many elements, a peer shift, a root */
    int plan[5];
    if (rank == 0) {
      rng = rng * 1103515245u + 12345u;
      plan[0] = now() - start < seconds;
      plan[1] = (int)((rng >> 8) % kKinds);
      rng = rng * 1103515245u + 12345u;
      const int scale = (int)((rng >> 8) % 19);  /* sizes 1 .. 2^18 elements, log-uniform */
      size_t n = ((size_t)1 << scale) + (rng >> 16) % ((size_t)1 << scale);
      plan[2] = (int)(n > max_count ? max_count : n);
      plan[3] = 1 + (int)((rng >> 4) % (unsigned)(size > 1 ? size - 1 : 1));
      plan[4] = (int)((rng >> 12) % (unsigned)size);
    }
    MPI_Bcast(plan, 5, MPI_INT, 0, MPI_COMM_WORLD);
    if (!plan[0]) break;
    const int kind = plan[1], shift = plan[3], root = plan[4];
    size_t n = (size_t)plan[2];
    if (kind == kAlltoall || kind == kAllgather || kind == kReduceScatter) n = n / (size_t)size + 1;
    const int to = (rank + shift) % size, from = (rank - shift + size) % size;
    switch (kind) {
      case kPt2pt:
      case kIsendIrecv:
        for (size_t i = 0; i < n; ++i) a[i] = value(round, rank, i);
        if (kind == kPt2pt) {
          MPI_Sendrecv(a, (int)n, MPI_INT32_T, to, 7, b, (int)n, MPI_INT32_T, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Request r[2];
          MPI_Irecv(b, (int)n, MPI_INT32_T, from, 8, MPI_COMM_WORLD, &r[0]);
          MPI_Isend(a, (int)n, MPI_INT32_T, to, 8, MPI_COMM_WORLD, &r[1]);
          MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        }
        for (size_t i = 0; i < n; ++i)
          if (b[i] != value(round, from, i)) fail(round, kind, i, b[i], value(round, from, i));
        break;
      case kAllreduce:
        for (size_t i = 0; i < n; ++i) a[i] = value(round, rank, i);
        MPI_Allreduce(a, b, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
        for (size_t i = 0; i < n; ++i) {
          int32_t want = 0;
          for (int r = 0; r < size; ++r) want += value(round, r, i);
          if (b[i] != want) fail(round, kind, i, b[i], want);
        }
        break;
      case kBcast:
        for (size_t i = 0; i < n; ++i) a[i] = rank == root ? value(round, root, i) : -1;
        MPI_Bcast(a, (int)n, MPI_INT32_T, root, MPI_COMM_WORLD);
        for (size_t i = 0; i < n; ++i)
          if (a[i] != value(round, root, i)) fail(round, kind, i, a[i], value(round, root, i));
        break;
      case kAllgather:
        for (size_t i = 0; i < n; ++i) a[i] = value(round, rank, i);
        MPI_Allgather(a, (int)n, MPI_INT32_T, b, (int)n, MPI_INT32_T, MPI_COMM_WORLD);
        for (int r = 0; r < size; ++r)
          for (size_t i = 0; i < n; ++i)
            if (b[(size_t)r * n + i] != value(round, r, i)) fail(round, kind, i, b[(size_t)r * n + i], value(round, r, i));
        break;
      case kAlltoall:
        for (int r = 0; r < size; ++r)
          for (size_t i = 0; i < n; ++i) a[(size_t)r * n + i] = value(round, rank, (size_t)r * n + i);
        MPI_Alltoall(a, (int)n, MPI_INT32_T, b, (int)n, MPI_INT32_T, MPI_COMM_WORLD);
        for (int r = 0; r < size; ++r)
          for (size_t i = 0; i < n; ++i) {
            const int32_t want = value(round, r, (size_t)rank * n + i);
            if (b[(size_t)r * n + i] != want) fail(round, kind, i, b[(size_t)r * n + i], want);
          }
        break;
      case kReduceScatter:
        for (size_t i = 0; i < n * (size_t)size; ++i) a[i] = value(round, rank, i);
        MPI_Reduce_scatter_block(a, b, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
        for (size_t i = 0; i < n; ++i) {
          int32_t want = 0;
          for (int r = 0; r < size; ++r) want += value(round, r, (size_t)rank * n + i);
          if (b[i] != want) fail(round, kind, i, b[i], want);
        }
        break;
      case kBarrier:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
      case kRmaPut:
      case kRmaAcc:
        /* Each rank writes its part of the target's window: n / size elements at rank * part. */
        {
          const size_t part = n / (size_t)size + 1;
          if (part * (size_t)size > max_count) break;
          /* Passive target only: each rank prepares its own window under a lock on itself. */
          MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
          for (size_t i = 0; i < part * (size_t)size; ++i) win_mem[i] = kind == kRmaAcc ? 1 : -1;
          MPI_Win_unlock(rank, win);
          MPI_Barrier(MPI_COMM_WORLD);
          for (size_t i = 0; i < part; ++i) a[i] = value(round, rank, i);
          MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win);
          if (kind == kRmaPut)
            MPI_Put(a, (int)part, MPI_INT32_T, to, (MPI_Aint)((size_t)rank * part), (int)part, MPI_INT32_T, win);
          else
            MPI_Accumulate(a, (int)part, MPI_INT32_T, to, (MPI_Aint)((size_t)rank * part), (int)part, MPI_INT32_T,
                           MPI_SUM, win);
          MPI_Win_unlock(to, win);
          MPI_Barrier(MPI_COMM_WORLD);
          MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
          for (size_t i = 0; i < part; ++i) {
            const int32_t want = value(round, from, i) + (kind == kRmaAcc ? 1 : 0);
            if (win_mem[(size_t)from * part + i] != want) fail(round, kind, i, win_mem[(size_t)from * part + i], want);
          }
          MPI_Win_unlock(rank, win);
          /* and read back what this rank wrote at its target */
          MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win);
          MPI_Get(b, (int)part, MPI_INT32_T, to, (MPI_Aint)((size_t)rank * part), (int)part, MPI_INT32_T, win);
          MPI_Win_unlock(to, win);
          for (size_t i = 0; i < part; ++i) {
            const int32_t want = value(round, rank, i) + (kind == kRmaAcc ? 1 : 0);
            if (b[i] != want) fail(round, kind, i, b[i], want);
          }
          MPI_Barrier(MPI_COMM_WORLD);
        }
        break;
    }
    ++counts[kind];
    if (rss_quarter < 0 && now() - start >= seconds / 4) rss_quarter = resident_kib();
  }
  long rss_end = resident_kib(), quarter_max = 0, end_max = 0;
  MPI_Reduce(&rss_quarter, &quarter_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&rss_end, &end_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Win_free(&win);
  free(a);
  free(b);
  MPI_Finalize();
  int status = 0;
  if (rank == 0) {
    printf("soak: %llu rounds in %.0f s on %d ranks:", (unsigned long long)round, seconds, size);
    for (int k = 0; k < kKinds; ++k) printf(" %s %ld%s", kNames[k], counts[k], k + 1 < kKinds ? "," : "\n");
    printf("soak: every byte checked; resident memory (max over ranks) %ld KiB after a quarter, %ld KiB at the end\n",
           quarter_max, end_max);
    /* Flat: at most 10% and 16 MiB above the first quarter. */
    if (end_max > quarter_max + quarter_max / 10 + 16384) {
      printf("soak: FAIL: memory grew\n");
      status = 2;
    } else {
      printf("soak: PASS\n");
    }
  }
  return status;
}
