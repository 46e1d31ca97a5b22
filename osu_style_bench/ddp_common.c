/* ddp_common.c - the model table, buckets and report of ddp_common.h. */
#include "ddp_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ddp_mode_names[DDP_MODES] = {"compute", "comm", "overlap", "baseline"};

int ddp_load_model(const char *path, double scale, ddp_model *m, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int cap = 256, n = 0;
    ddp_tensor *fwd;
    memset(m, 0, sizeof *m);
    if (!f) {
        snprintf(err, err_len, "cannot open the model table %s (-f)", path);
        return -1;
    }
    fwd = malloc(sizeof(ddp_tensor) * (size_t)cap);
    while (fwd && fgets(line, sizeof line, f)) {
        char name[96];
        double count;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (sscanf(line, "%95s %lf", name, &count) != 2 || count < 1) {
            snprintf(err, err_len, "malformed line in the model table %s: %s", path, line);
            free(fwd);
            fclose(f);
            return -1;
        }
        if (n == cap) {
            ddp_tensor *grown = realloc(fwd, sizeof(ddp_tensor) * (size_t)(cap *= 2));
            if (!grown) break;
            fwd = grown;
        }
        snprintf(fwd[n].name, sizeof fwd[n].name, "%s", name);
        fwd[n].count = (size_t)(count * scale) > 0 ? (size_t)(count * scale) : 1;
        ++n;
    }
    fclose(f);
    if (n == 0 || !fwd) {
        snprintf(err, err_len, fwd ? "the model table lists no tensor" : "out of memory for the model table");
        free(fwd);
        return -1;
    }
    m->tensors = malloc(sizeof(ddp_tensor) * (size_t)n);
    if (!m->tensors) {
        snprintf(err, err_len, "out of memory for the model table");
        free(fwd);
        return -1;
    }
    m->ntensors = n;
    for (int i = 0; i < n; ++i) { /* backward order: the last layer first */
        m->tensors[i] = fwd[n - 1 - i];
        m->tensors[i].offset = m->total;
        m->total += m->tensors[i].count;
    }
    free(fwd);
    return 0;
}

void ddp_free_model(ddp_model *m)
{
    free(m->tensors);
    memset(m, 0, sizeof *m);
}

int ddp_make_buckets(const ddp_model *m, size_t cap_bytes, ddp_bucket *out)
{
    const size_t cap = cap_bytes / sizeof(float) > 0 ? cap_bytes / sizeof(float) : 1;
    int nb = 0;
    size_t first = 0, filled = 0;
    for (int i = 0; i < m->ntensors; ++i) {
        filled += m->tensors[i].count;
        if (filled >= cap || i == m->ntensors - 1) {
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

int ddp_parse_list(const char *list, double *out, int max)
{
    int n = 0;
    for (const char *p = list; *p && n < max;) {
        out[n++] = atof(p);
        p = strchr(p, ',');
        if (!p) break;
        ++p;
    }
    return n;
}

void ddp_print_header(const char *prog, const char *path, double scale, const ddp_model *m, int nranks,
                      double compute_ms, const char *compute_how, int iters)
{
    printf("# %s: %s x %g: %d tensors, %zu parameters (%.1f MiB of float gradients), %d ranks\n", prog, path,
           scale, m->ntensors, m->total, (double)m->total * sizeof(float) / (1 << 20), nranks);
    printf("# backward compute %.1f ms (%s), %d iterations per measurement; times in ms\n", compute_ms,
           compute_how, iters);
    printf("%-12s %8s %10s %10s %10s %10s %8s %14s %12s\n", "# bucket MiB", "buckets", "compute", "comm",
           "overlap", "baseline", "hidden", "overlap/max", "vs baseline");
    fflush(stdout);
}

void ddp_print_row(double mib, int nbuckets, double t_compute, double t_comm, double t_overlap,
                   double t_baseline)
{
    const double shorter = t_compute < t_comm ? t_compute : t_comm;
    const double longer = t_compute > t_comm ? t_compute : t_comm;
    const double hidden = shorter > 0 ? (t_compute + t_comm - t_overlap) / shorter : 0;
    printf("%-12g %8d %10.2f %10.2f %10.2f %10.2f %7.0f%% %14.3f %11.0f%%\n", mib, nbuckets, t_compute * 1e3,
           t_comm * 1e3, t_overlap * 1e3, t_baseline * 1e3, 100 * (hidden > 1 ? 1 : hidden < 0 ? 0 : hidden),
           t_overlap / longer, 100 * (1 - t_overlap / t_baseline));
    fflush(stdout);
}

void ddp_print_best(double best_mib, double best_s, double baseline_s)
{
    printf("# best bucket size: %g MiB (step %.2f ms, baseline %.2f ms)\n", best_mib, best_s * 1e3,
           baseline_s * 1e3);
    fflush(stdout);
}
