/*
 * ddp_common.h - what the DDP-style overlap programs share (ddp_overlap on host buffers,
 * ddp_overlap_gpu on device buffers): the model table, its gradient buckets and the report.
 *
 * The model is a table of parameter tensors (models/resnet50.txt, models/gpt2_small.txt: one
 * "name count" line per tensor, in forward order), kept in backward order: the last layer
 * first, each tensor's gradient at its offset in one gradient vector.  Buckets group
 * consecutive tensors (backward order) up to a size cap, as PyTorch DDP does.
 *
 * Plain C11 on the standard MPI C API, so the programs build against any MPI.
 */
#ifndef WEFT_DDP_COMMON_H
#define WEFT_DDP_COMMON_H

#include <stddef.h>

typedef struct {
    char name[96];
    size_t count;  /* parameters */
    size_t offset; /* first element in the gradient vector (backward order) */
} ddp_tensor;

typedef struct {
    size_t first, count; /* elements of the gradient vector */
    int last_tensor;     /* index, in backward order, of the tensor that completes it */
} ddp_bucket;

typedef struct {
    ddp_tensor *tensors; /* backward order */
    int ntensors;
    size_t total; /* parameters over all tensors */
} ddp_model;

/* Reads the table at `path`, every count scaled by `scale` (at least 1).  0, or -1 with a
 * message in err. */
int ddp_load_model(const char *path, double scale, ddp_model *m, char *err, size_t err_len);
void ddp_free_model(ddp_model *m);

/* The buckets of at most cap_bytes of float gradients (one tensor may exceed it); `out` has
 * room for m->ntensors.  Returns how many. */
int ddp_make_buckets(const ddp_model *m, size_t cap_bytes, ddp_bucket *out);

/* "1,5,25" -> {1, 5, 25}; returns how many (at most max). */
int ddp_parse_list(const char *list, double *out, int max);

/* The modes every program measures, and their names. */
enum { DDP_COMPUTE, DDP_COMM, DDP_OVERLAP, DDP_BASELINE, DDP_MODES };
extern const char *const ddp_mode_names[DDP_MODES];

/* Rank 0's report: the header, one row per bucket size (times in seconds), the best size. */
void ddp_print_header(const char *prog, const char *path, double scale, const ddp_model *m, int nranks,
                      double compute_ms, const char *compute_how, int iters);
void ddp_print_row(double mib, int nbuckets, double t_compute, double t_comm, double t_overlap,
                   double t_baseline);
void ddp_print_best(double best_mib, double best_s, double baseline_s);

#endif /* WEFT_DDP_COMMON_H */
