/*
 * ddp_overlap.c - a data-parallel training step's gradient all-reduce, overlapped with the
 * backward pass as PyTorch DDP does it (plain C11 + MPI; builds against any MPI).
 *
 * The model is a table of parameter tensors (models/resnet50.txt, models/gpt2_small.txt: one
 * "name count" line per tensor, in forward order; ddp_common.h).  The backward pass visits the
 * tensors in reverse order; each is a compute phase of its share of the backward time (in proportion to
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
 *   --phases FILE  write this rank's phases to FILE (%r: the rank), one "start_s end_s label"
 *                line each in MPI_Wtime seconds: "step MODE MIB ITER" for every step (ITER 0 is
 *                the warm-up; MIB is "-" without buckets) and "backward MODE MIB ITER TENSOR"
 *                for every tensor's compute; a header line gives CLOCK_MONOTONIC - MPI_Wtime,
 *                the clock of WEFT_TRACE's timestamps
 */
/* clock_gettime under -std=c11 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddp_common.h"

#ifndef DDP_MODEL_DIR
#define DDP_MODEL_DIR "models"
#endif

static int rank, nranks;
static ddp_model model;
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

static double now(void) { return MPI_Wtime(); }

/* --phases: kept in memory and written at the end, so that recording costs two clock reads. */
typedef struct {
    double t0, t1;
    int tensor; /* -1: a whole step */
    int mode, iter;
    double mib; /* 0: no buckets */
} phase;
static FILE *phases_file;
static phase *phases;
static size_t nphases, phases_cap;
static int phases_lost;
static int cur_mode, cur_iter;
static double cur_mib;

static void record_phase(double t0, double t1, int tensor)
{
    if (nphases == phases_cap) {
        const size_t cap = phases_cap ? 2 * phases_cap : 4096;
        phase *p = realloc(phases, cap * sizeof *p);
        if (!p) {
            phases_lost = 1;
            return;
        }
        phases = p, phases_cap = cap;
    }
    phases[nphases++] = (phase){t0, t1, tensor, cur_mode, cur_iter, cur_mib};
}

/* "%r" in the pattern becomes the rank. */
static FILE *open_phases(const char *pattern)
{
    char path[4096];
    size_t n = 0;
    for (const char *p = pattern; *p && n + 12 < sizeof path; ++p) {
        if (p[0] == '%' && p[1] == 'r') n += (size_t)snprintf(path + n, sizeof path - n, "%d", rank), ++p;
        else path[n++] = *p;
    }
    path[n] = 0;
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "ddp_overlap: rank %d: cannot write %s\n", rank, path);
    return f;
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int write_phases(void)
{
    /* MPI_Wtime's origin is the library's: pair it with CLOCK_MONOTONIC read around it. */
    const double m0 = monotonic_s(), w = now(), m1 = monotonic_s();
    fprintf(phases_file, "# ddp_overlap phases of rank %d of %d: start_s end_s label, MPI_Wtime seconds\n", rank,
            nranks);
    fprintf(phases_file, "# monotonic_minus_wtime_s %.9f\n", (m0 + m1) / 2 - w);
    for (size_t k = 0; k < nphases; ++k) {
        const phase *p = &phases[k];
        char mib[32] = "-";
        if (p->mib > 0) snprintf(mib, sizeof mib, "%gMiB", p->mib);
        fprintf(phases_file, "%.9f %.9f %s %s %s %d%s%s\n", p->t0, p->t1, p->tensor < 0 ? "step" : "backward",
                ddp_mode_names[p->mode], mib, p->iter, p->tensor < 0 ? "" : " ",
                p->tensor < 0 ? "" : model.tensors[p->tensor].name);
    }
    if (phases_lost) fprintf(stderr, "ddp_overlap: rank %d: out of memory for phases, some are missing\n", rank);
    return fclose(phases_file) != 0 || phases_lost;
}
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
    const ddp_tensor *t = &model.tensors[i];
    const double t0 = phases_file ? now() : 0;
    spin_for(compute_s * (double)t->count / (double)model.total);
    memcpy(grad + t->offset, grad_source + t->offset, t->count * sizeof(float));
    if (phases_file) record_phase(t0, now(), i);
}

static void fill_all(void) { memcpy(grad, grad_source, model.total * sizeof(float)); }

static void check(const char *what)
{
    const float ranks_sum = (float)nranks * (float)(nranks + 1) / 2.0f;
    for (size_t k = 0; k < model.total; ++k)
        if (grad[k] != ranks_sum * (float)(k % 13 + 1)) {
            fprintf(stderr, "ddp_overlap: rank %d: %s: gradient %zu is %g, expected %g\n", rank, what, k,
                    (double)grad[k], (double)(ranks_sum * (float)(k % 13 + 1)));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

/* One step of `mode`; its time. */
static double step(int mode, const ddp_bucket *b, int nb, MPI_Request *req, double compute_s)
{
    double t0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (mode == DDP_COMM) fill_all();
    t0 = now();
    switch (mode) {
    case DDP_COMPUTE:
        for (int i = 0; i < model.ntensors; ++i) backward_tensor(i, compute_s);
        break;
    case DDP_COMM:
        for (int j = 0; j < nb; ++j)
            MPI_Iallreduce(MPI_IN_PLACE, grad + b[j].first, (int)b[j].count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                           &req[j]);
        MPI_Waitall(nb, req, MPI_STATUSES_IGNORE);
        break;
    case DDP_OVERLAP: {
        int j = 0;
        for (int i = 0; i < model.ntensors; ++i) {
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
    case DDP_BASELINE:
        for (int i = 0; i < model.ntensors; ++i) backward_tensor(i, compute_s);
        for (size_t first = 0; first < model.total; first += (size_t)1 << 30) { /* int counts */
            const size_t n = model.total - first < ((size_t)1 << 30) ? model.total - first : ((size_t)1 << 30);
            MPI_Allreduce(MPI_IN_PLACE, grad + first, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        break;
    }
    const double t1 = now();
    if (phases_file) record_phase(t0, t1, -1);
    return t1 - t0;
}

/* The average over the ranks of the mean time of `iters` steps (after a checked warm-up). */
static double measure(int mode, const ddp_bucket *b, int nb, MPI_Request *req, double compute_s, int iters)
{
    double sum = 0, avg = 0;
    cur_mode = mode, cur_iter = 0;
    step(mode, b, nb, req, compute_s);
    if (mode != DDP_COMPUTE) check(ddp_mode_names[mode]);
    for (int it = 0; it < iters; ++it) cur_iter = it + 1, sum += step(mode, b, nb, req, compute_s);
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
    const char *path = DDP_MODEL_DIR "/resnet50.txt";
    const char *bucket_list = "1,5,25,100";
    double scale = 1.0, compute_ms = -1;
    int iters = 10;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int a = 1; a < argc; ++a) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(argv[a], "-f") && v) path = v, ++a;
        else if (!strcmp(argv[a], "-s") && v) scale = atof(v), ++a;
        else if (!strcmp(argv[a], "-b") && v) bucket_list = v, ++a;
        else if (!strcmp(argv[a], "-c") && v) compute_ms = atof(v), ++a;
        else if (!strcmp(argv[a], "-i") && v) iters = atoi(v), ++a;
        else if (!strcmp(argv[a], "-w") && v) work_mode = !strcmp(v, "work"), ++a;
        else if (!strcmp(argv[a], "--phases") && v) {
            if (!(phases_file = open_phases(v))) MPI_Abort(MPI_COMM_WORLD, 2);
            ++a;
        } else
            die("usage: ddp_overlap [-f model] [-s scale] [-b MiB,MiB,...] [-c ms] [-i iters] [-w time|work]"
                " [--phases FILE]");
    }
    if (scale <= 0 || iters < 1) die("-s and -i must be positive");
    char err[400];
    if (ddp_load_model(path, scale, &model, err, sizeof err)) die(err);
    grad = malloc(model.total * sizeof(float));
    grad_source = malloc(model.total * sizeof(float));
    if (!grad || !grad_source) die("out of memory for the gradients");
    for (size_t k = 0; k < model.total; ++k) grad_source[k] = grad_value(rank, k);
    if (work_mode) calibrate_work();

    double mib[32];
    const int nsizes = ddp_parse_list(bucket_list, mib, 32);
    ddp_bucket *b = malloc(sizeof(ddp_bucket) * (size_t)model.ntensors);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)model.ntensors);
    if (compute_ms < 0) {
        const int nb = ddp_make_buckets(&model, (size_t)25 << 20, b);
        cur_mib = 25;
        compute_ms = 1.25e3 * measure(DDP_COMM, b, nb, req, 0, iters);
    }
    const double compute_s = compute_ms * 1e-3;
    if (rank == 0)
        ddp_print_header("ddp_overlap", path, scale, &model, nranks, compute_ms, work_mode ? "-w work" : "-w time",
                         iters);
    cur_mib = 0;
    const double t_compute = measure(DDP_COMPUTE, b, 0, req, compute_s, iters);
    const double t_baseline = measure(DDP_BASELINE, b, 0, req, compute_s, iters);
    double best = 1e30, best_mib = 0;
    for (int s = 0; s < nsizes; ++s) {
        const int nb = ddp_make_buckets(&model, (size_t)(mib[s] * (1 << 20)), b);
        cur_mib = mib[s];
        const double t_comm = measure(DDP_COMM, b, nb, req, compute_s, iters);
        const double t_overlap = measure(DDP_OVERLAP, b, nb, req, compute_s, iters);
        if (t_overlap < best) best = t_overlap, best_mib = mib[s];
        if (rank == 0) ddp_print_row(mib[s], nb, t_compute, t_comm, t_overlap, t_baseline);
    }
    if (rank == 0) ddp_print_best(best_mib, best, t_baseline);
    const int status = phases_file ? write_phases() : 0;
    free(b);
    free(req);
    free(grad);
    free(grad_source);
    free(phases);
    ddp_free_model(&model);
    MPI_Finalize();
    return status;
}
