/*
 * bench_common.h - shared driver for weft's OSU-style MPI micro-benchmarks.
 *
 * Plain C11 on top of the standard MPI C API only, so the same sources build
 * against weft's library and against any other MPI (e.g. Open MPI via
 * mpicc.openmpi).  The driver (bench_main) provides option parsing, buffer
 * allocation, the size sweep, warm-up and timed iterations, the data check,
 * the statistics and OSU-like output formatting; each benchmark program is a
 * bench_desc holding its operation and its data pattern.
 */
#ifndef WEFT_OSU_BENCH_COMMON_H
#define WEFT_OSU_BENCH_COMMON_H

#include <stddef.h>

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which benchmark is running: selects defaults, header text and units. */
typedef enum {
    BENCH_LATENCY = 0,
    BENCH_BW,
    BENCH_BIBW,
    BENCH_ALLREDUCE,
    BENCH_BARRIER,      /* no message: one row, sizes (-m) are ignored */
    BENCH_BCAST,        /* size = bytes broadcast */
    BENCH_REDUCE,       /* size = bytes of MPI_FLOAT reduced */
    BENCH_ALLGATHER,    /* size = bytes contributed by each rank */
    BENCH_ALLTOALL,     /* size = bytes sent from each rank to each rank */
    BENCH_IALLREDUCE,   /* size = bytes of MPI_FLOAT reduced; overlap test */
    BENCH_IBCAST,       /* size = bytes broadcast; overlap test */
    BENCH_IALLGATHER,   /* size = bytes contributed by each rank; overlap test */
    BENCH_IALLTOALL,    /* size = bytes sent from each rank to each rank; overlap test */
    /* One-sided (RMA), 2 ranks, rank 0 the origin; see bench_rma.h. */
    BENCH_PUT_LATENCY,
    BENCH_GET_LATENCY,
    BENCH_PUT_BW,
    BENCH_GET_BW,
    BENCH_ACC_LATENCY,      /* size = bytes accumulated (-T element type) */
    BENCH_FOP_LATENCY,      /* one MPI_LONG_LONG: one row, sizes (-m) are ignored */
    BENCH_CAS_LATENCY,      /* one MPI_LONG_LONG: one row, sizes (-m) are ignored */
    BENCH_GET_ACC_LATENCY   /* size = bytes accumulated and fetched (-T element type) */
} bench_kind;

/* How a one-sided test creates its window (-w). */
typedef enum {
    BENCH_WIN_CREATE = 0,   /* MPI_Win_create on memory of the program's */
    BENCH_WIN_ALLOCATE,     /* MPI_Win_allocate */
    BENCH_WIN_DYNAMIC       /* MPI_Win_create_dynamic + MPI_Win_attach */
} bench_win_flavor;

/* How a one-sided test synchronises (-s), OSU's patterns. */
typedef enum {
    BENCH_SYNC_LOCK = 0,    /* MPI_Win_lock/unlock around each operation (latency) or window (bw) */
    BENCH_SYNC_FLUSH,       /* one lock, MPI_Win_flush after each operation or window */
    BENCH_SYNC_FLUSH_LOCAL, /* one lock, MPI_Win_flush_local after each operation or window */
    BENCH_SYNC_LOCK_ALL,    /* MPI_Win_lock_all/unlock_all around each operation or window */
    BENCH_SYNC_FENCE,       /* MPI_Win_fence (active target) */
    BENCH_SYNC_PSCW         /* MPI_Win_post/start/complete/wait (active target) */
} bench_sync;

/* Element type of osu_acc_latency and osu_get_acc_latency (-T). */
typedef enum {
    BENCH_ELEM_CHAR = 0,    /* MPI_CHAR, OSU's choice */
    BENCH_ELEM_INT,
    BENCH_ELEM_LONG_LONG,
    BENCH_ELEM_DOUBLE
} bench_elem;

/*
 * Where a buffer lives.  Device and managed memory need a CUDA build
 * (BENCH_HAVE_CUDA) and are accepted by the point-to-point programs and by
 * osu_bcast, osu_reduce, osu_allgather and osu_allreduce.
 */
typedef enum {
    BENCH_PLACE_HOST = 0,   /* 'H' */
    BENCH_PLACE_DEVICE,     /* 'D' (device memory, e.g. cudaMalloc) */
    BENCH_PLACE_MANAGED     /* 'M' (managed / unified memory) */
} bench_placement;

/* Message layout (-t): point-to-point tests only. */
typedef enum {
    BENCH_LAYOUT_CONTIG = 0, /* 'contig': `size` bytes of MPI_CHAR */
    BENCH_LAYOUT_VECTOR      /* 'vector': size/8 doubles, stride 2 (one derived datatype) */
} bench_layout;

/* Maximum window size accepted by -W. */
#define BENCH_MAX_WINDOW 1024

typedef struct {
    bench_kind kind;
    int rank;               /* rank in MPI_COMM_WORLD */
    int nranks;             /* size of MPI_COMM_WORLD */

    size_t min_size;        /* message size range, bytes */
    size_t max_size;

    int iters;              /* timed iterations for size <= large_threshold */
    int warmup;             /* warm-up iterations for size <= large_threshold */
    int iters_large;        /* same for size > large_threshold */
    int warmup_large;
    size_t large_threshold; /* bytes */

    int window;             /* bw/bibw: messages in flight per iteration */
    int csv;                /* --csv: print "size,value" lines only */

    const char *device;     /* -d TYPE, NULL when not given */
    bench_placement place[2]; /* buffer placement of rank 0 and rank 1 */
    bench_layout layout;    /* -t contig (default) or -t vector */

    bench_win_flavor win;   /* one-sided tests: -w */
    bench_sync sync;        /* one-sided tests: -s */
    bench_elem elem;        /* osu_acc_latency, osu_get_acc_latency: -T */
} bench_opts;

/* Whether `kind` is a one-sided test (2 ranks, -w and -s). */
int bench_is_rma(bench_kind kind);

/* The MPI datatype of an element type and its size in bytes. */
MPI_Datatype bench_elem_type(bench_elem elem);
size_t bench_elem_size(bench_elem elem);

/*
 * The message of one size in the chosen layout: what to pass to the send and
 * receive calls, and how many bytes the buffers must span.  The reported
 * size is always the payload (`size` bytes).
 *   contig: count = size, type = MPI_CHAR, span = size.
 *   vector: count = 1, type = MPI_Type_vector(size/8, 1, 2, MPI_DOUBLE),
 *           committed; span = its extent (2*size - 8 bytes).
 * Release with bench_message_free.
 */
typedef struct {
    MPI_Datatype type;
    int count;
    size_t span;
    int derived;            /* type must be freed */
} bench_message;

void bench_message_make(const bench_opts *opts, size_t size, bench_message *msg);
void bench_message_free(bench_message *msg);

/*
 * Bytes a buffer must hold for every size up to opts->max_size: one message
 * (twice for -t vector), a block per rank (allgather, alltoall), or a slot
 * per operation of a window (one-sided bandwidth).
 */
size_t bench_buffer_bytes(const bench_opts *opts);

/*
 * MPI_Init + option parsing.  On -h, on a usage error, or when an
 * unsupported feature (device buffers in a program or build without them, or
 * with no usable CUDA device) is requested, rank 0 prints a message
 * and every rank calls MPI_Finalize and exits (0 for -h, 1 otherwise), so
 * this only returns when the benchmark should run.
 */
void bench_init(int *argc, char ***argv, bench_kind kind, bench_opts *opts);

/* MPI_Finalize and return `code`, for `return bench_finalize(&o, 0);`. */
int bench_finalize(const bench_opts *opts, int code);

/* Iteration counts for one message size. */
int bench_iterations(const bench_opts *opts, size_t size);
int bench_warmup(const bench_opts *opts, size_t size);

/* Next message size of the sweep (0 -> 1, otherwise doubles; 0 on overflow). */
size_t bench_next_size(size_t size);

/*
 * Sweep helper: advance *size to the next size of the range and return 1, or
 * return 0 when the sweep is over.  Usage:
 *     size_t size = opts.min_size;
 *     do { ... } while (bench_advance(&opts, &size));
 */
int bench_advance(const bench_opts *opts, size_t *size);

/*
 * Allocate `size` bytes (at least 1) in the given placement.  Host memory is
 * page aligned.  Returns NULL on failure or for placements this build does
 * not support.  This is the single place where device allocation is to be
 * added later.
 */
void *bench_alloc(size_t size, bench_placement placement);
void bench_free(void *ptr, bench_placement placement);

/* Set `size` bytes of a buffer allocated by bench_alloc to `value`. */
void bench_touch(void *ptr, size_t size, int value, bench_placement placement);

/*
 * Copy `size` bytes between host memory and a buffer allocated by bench_alloc
 * in `placement`, so that programs can fill and check their data on the host
 * whatever the placement: cudaMemcpy for device and managed buffers, memcpy
 * for host ones.  Both return once the copy is complete; a failed copy aborts
 * (a stale host copy would make the validation meaningless).
 */
void bench_copy_in(void *buf, const void *host, size_t size, bench_placement placement);
void bench_copy_out(void *host, const void *buf, size_t size, bench_placement placement);

/* Allocate or MPI_Abort with a message naming the rank. */
void *bench_alloc_or_abort(const bench_opts *opts, size_t size,
                           bench_placement placement);

/* Placement used by this rank (rank 0 -> place[0], everyone else place[1]). */
bench_placement bench_my_placement(const bench_opts *opts);

/* Wall-clock time in seconds (MPI_Wtime). */
double bench_now(void);

/*
 * Output (rank 0 only; other ranks return immediately).
 *
 * bench_print_coll_row: one row of a blocking collective (average, minimum
 * and maximum over the ranks of the per-rank average latency).  For
 * BENCH_BARRIER the table has no size column and --csv prints "0,avg".
 *
 * bench_print_nbc_row: one row of a non-blocking collective overlap test.
 * overall_us: post + compute + wait; compute_us: the compute part; comm_us,
 * min_comm_us, max_comm_us: the pure collective time (post + wait, no
 * compute) averaged, minimised and maximised over the ranks.  The overlap is
 * bench_overlap_percent(overall_us, compute_us, comm_us).  --csv prints
 * "size,overall,compute,comm,overlap".
 */
void bench_print_header(const bench_opts *opts);
void bench_print_row(const bench_opts *opts, size_t size, double value);
void bench_print_coll_row(const bench_opts *opts, size_t size, double avg_us,
                          double min_us, double max_us, int iterations);
void bench_print_nbc_row(const bench_opts *opts, size_t size, double overall_us,
                         double compute_us, double comm_us, double min_comm_us,
                         double max_comm_us, int iterations);

/* OSU overlap: max(0, 100 * (1 - (overall - compute) / comm)); 0 if comm <= 0. */
double bench_overlap_percent(double overall_us, double compute_us, double comm_us);

/*
 * The driver every osu_* program runs, after nccl-tests: bench_main parses the
 * options, allocates the buffers, and for each size of the sweep fills the
 * input, runs the warm-up and timed iterations, checks the result of the
 * first iteration, combines the times and prints the row.  A program supplies
 * a bench_desc with what is its own: the operation and how its data looks.
 */

/* What a program's callbacks see of one row. */
typedef struct bench_case {
    const bench_opts *opts;
    size_t size;            /* this row's message size, bytes */
    bench_placement place;  /* where this rank's buffers live */
    void *sbuf, *rbuf;      /* the buffers asked for by bench_desc.buffers, else NULL */
    bench_message msg;      /* the message in the -t layout (point-to-point) */
    int pass;               /* overlap tests: 1 pure communication, 2 with compute */
    double compute_s;       /* overlap pass 2: compute per iteration, seconds */
    double compute_total_s; /* overlap pass 2: the run's compute time in timed iterations */
    void *state;            /* the program's own, e.g. a one-sided test's window */
} bench_case;

/* An overlap test's step between post and wait: in pass 2, computes for c->compute_s and adds
 * the time to c->compute_total_s; nothing in pass 1. */
void bench_overlap_compute(bench_case *c);

/* Buffers the driver allocates (bench_buffer_bytes each, in the -d placement). */
#define BENCH_BUF_SEND 1u
#define BENCH_BUF_RECV 2u
#define BENCH_BUF_ONE 4u /* a single buffer: sbuf and rbuf are the same (bcast) */

typedef enum {
    BENCH_TIME_LOOP = 0, /* one clock around the timed iterations */
    BENCH_TIME_EACH,     /* every iteration timed on its own, an untimed MPI_Barrier after it */
    BENCH_TIME_OVERLAP   /* BENCH_TIME_EACH twice: pure (pass 1), then with compute (pass 2) */
} bench_timing;

typedef enum {
    BENCH_REPORT_ONE_WAY_US = 0, /* rank 0: half the time of an iteration (ping-pong) */
    BENCH_REPORT_MBPS,           /* rank 0: size * window * directions bytes per iteration */
    BENCH_REPORT_RANK_STATS,     /* average, minimum, maximum over the ranks (collectives) */
    BENCH_REPORT_OVERLAP,        /* overall, compute and pure times, overlap (bench_print_nbc_row) */
    BENCH_REPORT_MEASURED        /* the value .measure returns (one-sided tests) */
} bench_report;

typedef struct bench_desc {
    bench_kind kind;     /* program name, header, option defaults */
    unsigned buffers;    /* BENCH_BUF_* */
    bench_timing timing;
    bench_report report;
    int directions;      /* BENCH_REPORT_MBPS: 1, or 2 when both ranks send */

    /* n iterations of the operation, back to back; each rank does its own part. */
    void (*run)(bench_case *c, int n);

    /*
     * Data check, both optional: .fill writes this rank's input for c->size
     * into `host` and returns its bytes (copied into sbuf); .expect writes the
     * result this rank should hold after one iteration and returns its bytes
     * (0: nothing to check here).  Elements are MPI_FLOAT for the float kinds,
     * bytes otherwise.
     */
    size_t (*fill)(const bench_case *c, void *host);
    size_t (*expect)(const bench_case *c, void *host);

    /* Optional per-size hooks (one-sided tests: window, own loop, checks). */
    void (*setup)(bench_case *c);
    double (*measure)(bench_case *c); /* replaces the driver's loop: the row's value */
    void (*verify)(bench_case *c);
    void (*teardown)(bench_case *c);
} bench_desc;

/* The whole program: returns the exit status (1 when a data check failed). */
int bench_main(int argc, char **argv, const bench_desc *desc);

/* A program's main: its descriptor and nothing else. */
#define BENCH_MAIN(desc)                                                                       \
    int main(int argc, char **argv)                                                            \
    {                                                                                          \
        return bench_main(argc, argv, &(desc));                                                \
    }

/*
 * The float sum the reduction programs check: element i of rank r's input is
 * a small integer, so the sum is exact whatever order the library adds in.
 */
size_t bench_fill_float_input(const bench_case *c, void *host);
size_t bench_expect_float_sum(const bench_case *c, void *host);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_OSU_BENCH_COMMON_H */
