/*
 * ddp_overlap.c - a data-parallel training step's gradient all-reduce, overlapped with the
 * backward pass as PyTorch DDP does it (plain C11 + MPI; builds against any MPI).
 *
 * The model is a table of parameter tensors (models/resnet50.txt, models/gpt2_small.txt: one
 * "name count" line per tensor, in forward order).  The backward pass visits the tensors in
 * reverse order; each is a compute phase of its share of the backward time (in proportion to
 * its parameters), after which its gradient (float) is written.  Gradients are grouped, in
 * backward order, into buckets of at most the bucket size; a bucket is all-reduced
 * (MPI_Iallreduce, MPI_SUM, in place) as soon as its last tensor is done, and the step ends
 * when every bucket is reduced.  The baseline is one MPI_Allreduce of all gradients after the
 * whole backward pass.
 *
 * Per bucket size the program reports, averaged over the ranks and iterations:
 *   compute   the backward pass alone
 *   comm      the bucket all-reduces alone (posted back to back, then waited for)
 *   overlap   the step with all-reduces behind the computation
 *   baseline  the backward pass, then one all-reduce
 *   hidden    how much of the shorter of compute and comm the overlap hid:
 *             (compute + comm - overlap) / min(compute, comm)
 * and the bucket size with the shortest step.  Every reduced gradient is checked against the
 * sum of the ranks' values at the first iteration of each measurement; a mismatch exits 1.
 *
 * The compute phases spin on the clock (-w time, OSU's way: the backward pass takes the same
 * wall time whatever else runs) or do a fixed amount of work calibrated alone (-w work: a
 * progress thread that takes CPU time from the computation shows as a longer step).
 *
 * Options:
 *   -f FILE      the model table (default models/resnet50.txt next to the program's source)
 *   -s SCALE     scale every tensor by SCALE (e.g. 0.25 for a smaller job)
 *   -b LIST      bucket sizes in MiB, comma-separated (default 1,5,25,100)
 *   -c MS        backward compute time in ms (default: 1.25 x the 25 MiB comm time, measured)
 *   -i N         iterations per measurement (default 10), after one warm-up
 *   -w MODE      time (default) or work
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DDP_MODEL_DIR
#define DDP_MODEL_DIR "models"
#endif

typedef struct {
    char name[96];
    size_t count;  /* parameters */
    size_t offset; /* first element in the gradient buffer (backward order) */
} tensor;

typedef struct {
    size_t first, count; /* elements of the gradient buffer */
    int last_tensor;     /* index, in backward order, of the tensor that completes it */
} bucket;

static int rank, nranks;
static tensor *tensors; /* backward order */
static int ntensors;
static size_t total;
static float *grad, *grad_source; /* grad_source: this rank's gradient values, written by the backward pass */
static int work_mode;
static double work_per_second; /* -w work: loop trips per second, measured alone */
static volatile float sink;

static void die(const char *msg)
{
    if (rank == 0) fprintf(stderr, "ddp_overlap: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static void load_model(const char *path, double scale)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int cap = 256;
    tensor *fwd = malloc(sizeof(tensor) * (size_t)cap);
    int n = 0;
    if (!f) {
        char msg[400];
        snprintf(msg, sizeof msg, "cannot open the model table %s (-f)", path);
        die(msg);
    }
    while (fgets(line, sizeof line, f)) {
        char name[96];
        double count;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (sscanf(line, "%95s %lf", name, &count) != 2 || count < 1) die("malformed line in the model table");
        if (n == cap) fwd = realloc(fwd, sizeof(tensor) * (size_t)(cap *= 2));
        snprintf(fwd[n].name, sizeof fwd[n].name, "%s", name);
        fwd[n].count = (size_t)(count * scale) > 0 ? (size_t)(count * scale) : 1;
        ++n;
    }
    fclose(f);
    if (n == 0) die("the model table lists no tensor");
    tensors = malloc(sizeof(tensor) * (size_t)n);
    ntensors = n;
    total = 0;
    for (int i = 0; i < n; ++i) { /* backward order: the last layer first */
        tensors[i] = fwd[n - 1 - i];
        tensors[i].offset = total;
        total += tensors[i].count;
    }
    free(fwd);
}

static int make_buckets(size_t cap_bytes, bucket *out)
{
    const size_t cap = cap_bytes / sizeof(float) > 0 ? cap_bytes / sizeof(float) : 1;
    int nb = 0;
    size_t first = 0, filled = 0;
    for (int i = 0; i < ntensors; ++i) {
        filled += tensors[i].count;
        if (filled >= cap || i == ntensors - 1) {
            out[nb].first = first;
            out[nb].count = filled;
            out[nb].last_tensor = i;
            ++nb;
            first += filled;
            filled = 0;
        }
    }
    return nb;
}

static double now(void) { return MPI_Wtime(); }

static void spin_for(double seconds)
{
    float a = 1.0f;
    if (work_mode) {
        const long trips = (long)(seconds * work_per_second);
        for (long t = 0; t < trips; ++t) a = a * 0.999f + 0.5f;
    } else {
        const double t0 = now();
        do {
            for (int r = 0; r < 64; ++r) a = a * 0.999f + 0.5f;
        } while (now() - t0 < seconds);
    }
    sink = a;
}

static float grad_value(int r, size_t i) { return (float)((r + 1) * (int)(i % 13 + 1)); }

/* One tensor's backward: its compute share, then its gradient. */
static void backward_tensor(int i, double compute_s)
{
    const tensor *t = &tensors[i];
    spin_for(compute_s * (double)t->count / (double)total);
    memcpy(grad + t->offset, grad_source + t->offset, t->count * sizeof(float));
}

static void fill_all(void) { memcpy(grad, grad_source, total * sizeof(float)); }

static void check(const char *what)
{
    const float ranks_sum = (float)nranks * (float)(nranks + 1) / 2.0f;
    for (size_t k = 0; k < total; ++k)
        if (grad[k] != ranks_sum * (float)(k % 13 + 1)) {
            fprintf(stderr, "ddp_overlap: rank %d: %s: gradient %zu is %g, expected %g\n", rank, what, k,
                    (double)grad[k], (double)(ranks_sum * (float)(k % 13 + 1)));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

enum { M_COMPUTE, M_COMM, M_OVERLAP, M_BASELINE, M_COUNT };

/* One step of `mode`; its time. */
static double step(int mode, const bucket *b, int nb, MPI_Request *req, double compute_s)
{
    double t0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (mode == M_COMM) fill_all();
    t0 = now();
    switch (mode) {
    case M_COMPUTE:
        for (int i = 0; i < ntensors; ++i) backward_tensor(i, compute_s);
        break;
    case M_COMM:
        for (int j = 0; j < nb; ++j)
            MPI_Iallreduce(MPI_IN_PLACE, grad + b[j].first, (int)b[j].count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                           &req[j]);
        MPI_Waitall(nb, req, MPI_STATUSES_IGNORE);
        break;
    case M_OVERLAP: {
        int j = 0;
        for (int i = 0; i < ntensors; ++i) {
            backward_tensor(i, compute_s);
            if (j < nb && b[j].last_tensor == i) {
                MPI_Iallreduce(MPI_IN_PLACE, grad + b[j].first, (int)b[j].count, MPI_FLOAT, MPI_SUM,
                               MPI_COMM_WORLD, &req[j]);
                ++j;
            }
        }
        MPI_Waitall(nb, req, MPI_STATUSES_IGNORE);
        break;
    }
    case M_BASELINE:
        for (int i = 0; i < ntensors; ++i) backward_tensor(i, compute_s);
        for (size_t first = 0; first < total; first += (size_t)1 << 30) { /* int counts */
            const size_t n = total - first < ((size_t)1 << 30) ? total - first : ((size_t)1 << 30);
            MPI_Allreduce(MPI_IN_PLACE, grad + first, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        break;
    }
    return now() - t0;
}

/* The average over the ranks of the mean time of `iters` steps (after a checked warm-up). */
static double measure(int mode, const bucket *b, int nb, MPI_Request *req, double compute_s, int iters)
{
    static const char *names[M_COUNT] = {"compute", "comm", "overlap", "baseline"};
    double sum = 0, avg = 0;
    step(mode, b, nb, req, compute_s);
    if (mode != M_COMPUTE) check(names[mode]);
    for (int it = 0; it < iters; ++it) sum += step(mode, b, nb, req, compute_s);
    sum /= iters;
    MPI_Allreduce(&sum, &avg, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return avg / nranks;
}

static void calibrate_work(void)
{
    /* Trips of the work loop per second, alone on this rank's CPU. */
    const long trips = 20000000;
    float a = 1.0f;
    double t0 = now();
    for (long t = 0; t < trips; ++t) a = a * 0.999f + 0.5f;
    sink = a;
    work_per_second = (double)trips / (now() - t0);
    double min_rate;
    MPI_Allreduce(&work_per_second, &min_rate, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    work_per_second = min_rate;
}

int main(int argc, char **argv)
{
    const char *model = DDP_MODEL_DIR "/resnet50.txt";
    const char *bucket_list = "1,5,25,100";
    double scale = 1.0, compute_ms = -1;
    int iters = 10;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int a = 1; a < argc; ++a) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(argv[a], "-f") && v) model = v, ++a;
        else if (!strcmp(argv[a], "-s") && v) scale = atof(v), ++a;
        else if (!strcmp(argv[a], "-b") && v) bucket_list = v, ++a;
        else if (!strcmp(argv[a], "-c") && v) compute_ms = atof(v), ++a;
        else if (!strcmp(argv[a], "-i") && v) iters = atoi(v), ++a;
        else if (!strcmp(argv[a], "-w") && v) work_mode = !strcmp(v, "work"), ++a;
        else die("usage: ddp_overlap [-f model] [-s scale] [-b MiB,MiB,...] [-c ms] [-i iters] [-w time|work]");
    }
    if (scale <= 0 || iters < 1) die("-s and -i must be positive");
    load_model(model, scale);
    grad = malloc(total * sizeof(float));
    grad_source = malloc(total * sizeof(float));
    if (!grad || !grad_source) die("out of memory for the gradients");
    for (size_t k = 0; k < total; ++k) grad_source[k] = grad_value(rank, k);
    if (work_mode) calibrate_work();

    double mib[32];
    int nsizes = 0;
    for (const char *p = bucket_list; *p && nsizes < 32;) {
        mib[nsizes++] = atof(p);
        p = strchr(p, ',');
        if (!p) break;
        ++p;
    }
    bucket *b = malloc(sizeof(bucket) * (size_t)ntensors);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)ntensors);
    if (compute_ms < 0) {
        const int nb = make_buckets((size_t)25 << 20, b);
        compute_ms = 1.25e3 * measure(M_COMM, b, nb, req, 0, iters);
    }
    const double compute_s = compute_ms * 1e-3;
    if (rank == 0) {
        printf("# ddp_overlap: %s x %g: %d tensors, %zu parameters (%.1f MiB of float gradients), %d ranks\n",
               model, scale, ntensors, total, (double)total * sizeof(float) / (1 << 20), nranks);
        printf("# backward compute %.1f ms (-w %s), %d iterations per measurement; times in ms\n", compute_ms,
               work_mode ? "work" : "time", iters);
        printf("%-12s %8s %10s %10s %10s %10s %8s %14s %12s\n", "# bucket MiB", "buckets", "compute", "comm",
               "overlap", "baseline", "hidden", "overlap/max", "vs baseline");
        fflush(stdout);
    }
    const double t_compute = measure(M_COMPUTE, b, 0, req, compute_s, iters);
    const double t_baseline = measure(M_BASELINE, b, 0, req, compute_s, iters);
    double best = 1e30, best_mib = 0;
    for (int s = 0; s < nsizes; ++s) {
        const int nb = make_buckets((size_t)(mib[s] * (1 << 20)), b);
        const double t_comm = measure(M_COMM, b, nb, req, compute_s, iters);
        const double t_overlap = measure(M_OVERLAP, b, nb, req, compute_s, iters);
        const double shorter = t_compute < t_comm ? t_compute : t_comm;
        const double longer = t_compute > t_comm ? t_compute : t_comm;
        const double hidden = shorter > 0 ? (t_compute + t_comm - t_overlap) / shorter : 0;
        if (t_overlap < best) best = t_overlap, best_mib = mib[s];
        if (rank == 0) {
            printf("%-12g %8d %10.2f %10.2f %10.2f %10.2f %7.0f%% %14.3f %11.0f%%\n", mib[s], nb, t_compute * 1e3,
                   t_comm * 1e3, t_overlap * 1e3, t_baseline * 1e3, 100 * (hidden > 1 ? 1 : hidden < 0 ? 0 : hidden),
                   t_overlap / longer, 100 * (1 - t_overlap / t_baseline));
            fflush(stdout);
        }
    }
    if (rank == 0) printf("# best bucket size: %g MiB (step %.2f ms, baseline %.2f ms)\n", best_mib, best * 1e3,
                          t_baseline * 1e3);
    free(b);
    free(req);
    free(grad);
    free(grad_source);
    free(tensors);
    MPI_Finalize();
    return 0;
}
