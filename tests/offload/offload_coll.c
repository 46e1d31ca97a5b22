/* Collectives through the in-network offload path (coll/offload), on virtual nodes, checked
 * against references computed locally. tests/offload/run.sh starts weft-aggd and names the
 * plugin; the mode (argv[1]) says what to run and expect:
 * - supported: allreduce (int32 sum, int64 max, unsigned bxor, int band, double sum of small
 *   integers, float min; in place and not; 1 to 70,000 elements, many fragments), reduce_scatter_block
 *   and reduce_scatter with unequal counts (a rank with none), allgather and allgatherv (in place
 *   too), barriers (every rank has written its mark to a file before any leaves). Integers must
 *   match bit for bit; a double sum of non-integral values within 1e-12 relative.
 * - unsupported: calls the offload cannot take (MPI_LAND, MPI_MAXLOC, MPI_SHORT sums): still
 *   correct (host algorithms; run.sh checks the INFO line saying so).
 * - require_fail: under WEFT_OFFLOAD=require with a plugin that declines, MPI_Allreduce fails
 *   on every rank with MPI_ERR_UNSUPPORTED_OPERATION naming the offload.
 * - until_error: large allreduces until one fails (run.sh kills the daemon meanwhile); each
 *   rank prints one "error seen" line, and must see it within 60 s of its first call. */
#include <math.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static long long checks = 0;

static int32_t iv(int r, size_t i) { return (int32_t)((uint32_t)(r + 1) * 2654435761u + (uint32_t)i * 40503u); }

static void allreduce_cases(void)
{
    const size_t counts[] = {1, 7, 1000, 70000};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        const size_t n = counts[c];
        int32_t *a = malloc(n * 4), *b = malloc(n * 4);
        int64_t *la = malloc(n * 8), *lb = malloc(n * 8);
        unsigned *ua = malloc(n * sizeof(unsigned)), *ub = malloc(n * sizeof(unsigned));
        double *da = malloc(n * 8), *db = malloc(n * 8);
        float *fa = malloc(n * 4), *fb = malloc(n * 4);
        for (size_t i = 0; i < n; i++) {
            a[i] = iv(t_rank, i);
            la[i] = (int64_t)iv(t_rank, i) * 1000003 - (int64_t)t_rank * (int64_t)i;
            ua[i] = (unsigned)iv(t_rank, i + 17);
            da[i] = (double)((t_rank + 1) * (int)(i % 1000)) - 3.0 * t_rank;
            fa[i] = (float)(t_rank * 7 - (int)(i % 13)) * 0.5f;
        }
        /* int32 sum out of place, wrapping: compare with unsigned arithmetic. */
        MPI_OK(MPI_Allreduce(a, b, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD));
        for (size_t i = 0; i < n; i++) {
            uint32_t want = 0;
            for (int r = 0; r < t_size; r++) want += (uint32_t)iv(r, i);
            CHECK((uint32_t)b[i] == want, "int32 sum, n %zu, element %zu: %d, expected %d", n, i, b[i], (int32_t)want);
        }
        /* int64 max in place. */
        memcpy(lb, la, n * 8);
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, lb, (int)n, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
        for (size_t i = 0; i < n; i++) {
            int64_t want = INT64_MIN;
            for (int r = 0; r < t_size; r++) {
                const int64_t v = (int64_t)iv(r, i) * 1000003 - (int64_t)r * (int64_t)i;
                if (v > want) want = v;
            }
            CHECK(lb[i] == want, "int64 max, n %zu, element %zu", n, i);
        }
        /* unsigned bxor, int band. */
        MPI_OK(MPI_Allreduce(ua, ub, (int)n, MPI_UNSIGNED, MPI_BXOR, MPI_COMM_WORLD));
        MPI_OK(MPI_Allreduce(a, b, (int)n, MPI_INT, MPI_BAND, MPI_COMM_WORLD));
        for (size_t i = 0; i < n; i++) {
            unsigned wx = 0;
            int32_t wa = -1;
            for (int r = 0; r < t_size; r++) {
                wx ^= (unsigned)iv(r, i + 17);
                wa &= iv(r, i);
            }
            CHECK(ub[i] == wx, "unsigned bxor, n %zu, element %zu", n, i);
            CHECK(b[i] == wa, "int band, n %zu, element %zu", n, i);
        }
        /* double sum of small integers (exact in any order), float min. */
        MPI_OK(MPI_Allreduce(da, db, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        MPI_OK(MPI_Allreduce(fa, fb, (int)n, MPI_FLOAT, MPI_MIN, MPI_COMM_WORLD));
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            float wmin = INFINITY;
            for (int r = 0; r < t_size; r++) {
                want += (double)((r + 1) * (int)(i % 1000)) - 3.0 * r;
                const float f = (float)(r * 7 - (int)(i % 13)) * 0.5f;
                if (f < wmin) wmin = f;
            }
            CHECK(db[i] == want, "double sum, n %zu, element %zu: %g, expected %g", n, i, db[i], want);
            CHECK(fb[i] == wmin, "float min, n %zu, element %zu", n, i);
        }
        /* A double sum whose rounding depends on the order: within 1e-12 relative. */
        for (size_t i = 0; i < n; i++) da[i] = 1.0 / (double)(t_rank + 3) + (double)i * 1e-3;
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, da, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int r = 0; r < t_size; r++) want += 1.0 / (double)(r + 3) + (double)i * 1e-3;
            CHECK(fabs(da[i] - want) <= 1e-12 * fabs(want), "rounded double sum, element %zu: %.17g vs %.17g", i,
                  da[i], want);
        }
        checks += 7 * (long long)n;
        free(a); free(b); free(la); free(lb); free(ua); free(ub); free(da); free(db); free(fa); free(fb);
    }
}

static void reduce_scatter_cases(void)
{
    /* Blocks of k ints per rank. */
    const int ks[] = {1, 5000};
    for (size_t c = 0; c < 2; c++) {
        const int k = ks[c];
        const size_t n = (size_t)k * t_size;
        int32_t *in = malloc(n * 4), *out = malloc((size_t)k * 4);
        for (size_t i = 0; i < n; i++) in[i] = iv(t_rank, i);
        MPI_OK(MPI_Reduce_scatter_block(in, out, k, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD));
        for (int j = 0; j < k; j++) {
            uint32_t want = 0;
            for (int r = 0; r < t_size; r++) want += (uint32_t)iv(r, (size_t)t_rank * k + j);
            CHECK((uint32_t)out[j] == want, "reduce_scatter_block k %d, element %d", k, j);
        }
        checks += k;
        free(in);
        free(out);
    }
    /* Unequal counts, rank 1 receiving none. */
    int *counts = malloc(sizeof(int) * t_size);
    size_t total = 0, mine_at = 0;
    for (int r = 0; r < t_size; r++) {
        counts[r] = r == 1 ? 0 : 100 * (r + 1) + 3;
        if (r < t_rank) mine_at += (size_t)counts[r];
        total += (size_t)counts[r];
    }
    int64_t *in = malloc(total * 8), *out = malloc((size_t)(counts[t_rank] + 1) * 8);
    for (size_t i = 0; i < total; i++) in[i] = (int64_t)iv(t_rank, i) * (1 << 20); /* a multiply: shifting a negative value is undefined */
    MPI_OK(MPI_Reduce_scatter(in, out, counts, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD));
    for (int j = 0; j < counts[t_rank]; j++) {
        int64_t want = INT64_MAX;
        for (int r = 0; r < t_size; r++) {
            const int64_t v = (int64_t)iv(r, mine_at + (size_t)j) * (1 << 20);
            if (v < want) want = v;
        }
        CHECK(out[j] == want, "reduce_scatter (unequal counts), element %d", j);
    }
    checks += counts[t_rank];
    free(counts);
    free(in);
    free(out);
}

static void allgather_cases(void)
{
    const int ks[] = {1, 1000, 20000};
    for (size_t c = 0; c < 3; c++) {
        const int k = ks[c];
        int32_t *mine = malloc((size_t)k * 4), *all = malloc((size_t)k * t_size * 4);
        for (int j = 0; j < k; j++) mine[j] = iv(t_rank, (size_t)j);
        MPI_OK(MPI_Allgather(mine, k, MPI_INT32_T, all, k, MPI_INT32_T, MPI_COMM_WORLD));
        for (int r = 0; r < t_size; r++)
            for (int j = 0; j < k; j++) CHECK(all[(size_t)r * k + j] == iv(r, (size_t)j), "allgather k %d, rank %d, %d", k, r, j);
        /* In place. */
        memset(all, 0, (size_t)k * t_size * 4);
        memcpy(all + (size_t)t_rank * k, mine, (size_t)k * 4);
        MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, k, MPI_INT32_T, MPI_COMM_WORLD));
        for (int r = 0; r < t_size; r++)
            for (int j = 0; j < k; j++)
                CHECK(all[(size_t)r * k + j] == iv(r, (size_t)j), "in-place allgather k %d, rank %d, %d", k, r, j);
        checks += 2LL * k * t_size;
        free(mine);
        free(all);
    }
    /* Allgatherv: rank r contributes 3r + 1 bytes, placed in reverse rank order. */
    int *counts = malloc(sizeof(int) * t_size), *displs = malloc(sizeof(int) * t_size);
    int total = 0;
    for (int r = t_size - 1; r >= 0; r--) {
        counts[r] = 3 * r + 1;
        displs[r] = total;
        total += counts[r];
    }
    unsigned char *mine = malloc((size_t)counts[t_rank]), *all = malloc((size_t)total);
    for (int j = 0; j < counts[t_rank]; j++) mine[j] = (unsigned char)(t_rank * 31 + j);
    MPI_OK(MPI_Allgatherv(mine, counts[t_rank], MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD));
    for (int r = 0; r < t_size; r++)
        for (int j = 0; j < counts[r]; j++)
            CHECK(all[displs[r] + j] == (unsigned char)(r * 31 + j), "allgatherv rank %d byte %d", r, j);
    checks += total;
    free(counts); free(displs); free(mine); free(all);
}

/* Every rank appends its mark to one file before the barrier; after it, every mark is there. */
static void barrier_cases(void)
{
    char path[256] = {0};
    if (t_rank == 0) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/weft_offload_barrier_%d", dir && *dir ? dir : "/tmp", (int)getpid());
    }
    MPI_OK(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));
    for (int round = 0; round < 20; round++) {
        FILE *f = fopen(path, "a");
        CHECK(f != NULL, "cannot open %s", path);
        fprintf(f, "%d %d\n", round, t_rank);
        fclose(f);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        f = fopen(path, "r");
        CHECK(f != NULL, "cannot read %s", path);
        int r0, who, seen = 0;
        while (fscanf(f, "%d %d", &r0, &who) == 2) seen += r0 == round;
        fclose(f);
        CHECK(seen == t_size, "barrier round %d: %d of %d marks written before it ended", round, seen, t_size);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));  /* nobody writes the next round's mark before all have read */
        checks++;
    }
    if (t_rank == 0) unlink(path);
}

static void unsupported_cases(void)
{
    const int n = 5000;
    int *a = malloc(n * sizeof(int)), *b = malloc(n * sizeof(int));
    short *s = malloc(n * sizeof(short)), *sb = malloc(n * sizeof(short));
    struct { int v, i; } *p = malloc(n * sizeof *p), *pb = malloc(n * sizeof *pb);
    for (int i = 0; i < n; i++) {
        a[i] = (i + t_rank) % 3 != 0;
        s[i] = (short)(t_rank * 3 + i % 100);
        p[i].v = (i * 7 + t_rank * 13) % 101;
        p[i].i = t_rank;
    }
    MPI_OK(MPI_Allreduce(a, b, n, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce(s, sb, n, MPI_SHORT, MPI_SUM, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce(p, pb, n, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) {
        int land = 1, best = -1, at = 0;
        short sum = 0;
        for (int r = 0; r < t_size; r++) {
            land = land && (i + r) % 3 != 0;
            sum = (short)(sum + (short)(r * 3 + i % 100));
            const int v = (i * 7 + r * 13) % 101;
            if (v > best) best = v, at = r;
        }
        CHECK(b[i] == land, "land element %d", i);
        CHECK(sb[i] == sum, "short sum element %d", i);
        CHECK(pb[i].v == best && pb[i].i == at, "maxloc element %d", i);
    }
    checks += 3LL * n;
    free(a); free(b); free(s); free(sb); free(p); free(pb);
}

static void require_fail(void)
{
    int x = t_rank, y = 0;
    const int rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Allreduce under require with a declining plugin: class %d", cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, "offload") != NULL, "the message '%s' does not name the offload", msg);
    printf("offload_coll rank %d: refused as required: %s\n", t_rank, msg);
    checks++;
}

static void until_error(void)
{
    const int n = 1 << 20;
    int32_t *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4);
    for (int i = 0; i < n; i++) a[i] = iv(t_rank, (size_t)i);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long it = 0;; it++) {
        const int rc = MPI_Allreduce(a, b, n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, msg, &len);
            printf("offload_coll rank %d: error seen after %ld allreduces, %.1f s: %s\n", t_rank, it, s, msg);
            fflush(stdout);
            break;
        }
        CHECK(s < 60.0, "no error within 60 s (%ld allreduces)", it);
        if (it == 2) {
            printf("offload_coll rank %d: running\n", t_rank); /* run.sh kills the daemon after every rank says so */
            fflush(stdout);
        }
    }
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "offload_coll");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const char *mode = argc > 1 ? argv[1] : "supported";
    if (!strcmp(mode, "supported")) {
        allreduce_cases();
        reduce_scatter_cases();
        allgather_cases();
        barrier_cases();
    } else if (!strcmp(mode, "unsupported")) {
        unsupported_cases();
        allreduce_cases();
    } else if (!strcmp(mode, "require_fail")) {
        require_fail();
    } else if (!strcmp(mode, "until_error")) {
        /* Leaders may fail at different calls (one finished the call the daemon died in), so
         * no collective follows: the ranks' collective sequences no longer agree. */
        until_error();
        MPI_Finalize();
        return 0;
    } else {
        FAIL("unknown mode %s", mode);
    }
    long long total = 0;
    MPI_OK(MPI_Reduce(&checks, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (t_rank == 0) printf("offload_coll %s: %lld values checked at np %d\n", mode, total, t_size);
    MPI_Finalize();
    return 0;
}
