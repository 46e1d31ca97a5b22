/*
 * bench_rma.h - the shared part of the OSU-style one-sided (RMA) tests.
 *
 * Each program (osu_put_latency, osu_get_bw, ...) fills a small descriptor
 * for bench_main (BENCH_RMA_DESC): its buffers, a setup that names the one
 * function issuing one operation, and its data checks.  The code here creates
 * the window in the -w flavor, runs OSU's timed loop for the -s
 * synchronisation, and offers the data checks every program runs after its
 * timed loop.  Plain C11 on the standard MPI C API, like bench_common.
 */
#ifndef WEFT_OSU_BENCH_RMA_H
#define WEFT_OSU_BENCH_RMA_H

#include <stddef.h>

#include <mpi.h>

#include "bench_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An MPI call that failed (rc != MPI_SUCCESS) ends the run with a message
 * naming it: a test that goes on measures nothing.  The programs wrap their
 * operations in BENCH_RMA_CHECK, since an error handler that returns may be
 * set on a window.
 */
void bench_rma_check(int rc, const char *call);
#define BENCH_RMA_CHECK(call) bench_rma_check((call), #call)

/* A window of `bytes` bytes on each rank, zeroed. */
typedef struct {
    MPI_Win win;
    char *base; /* this rank's window memory */
    size_t bytes;
    MPI_Aint peer_disp; /* displacement of the peer's window start (dynamic: its address) */
    void *mem;          /* create and dynamic: memory allocated here, freed with the window */
} bench_window;

/* Creates the window (collective over MPI_COMM_WORLD); aborts with a message on error. */
void bench_window_create(const bench_opts *opts, size_t bytes, bench_window *w);
void bench_window_free(const bench_opts *opts, bench_window *w);

/*
 * One operation of the timed loop, to `target` at displacement `disp` (the
 * peer's window start plus the slot of operation `j` of a bw window: j * size;
 * 0 for the latency tests).
 */
typedef void (*bench_rma_op)(void *ctx, int target, MPI_Aint disp, int j);

/*
 * OSU's latency loop for opts->sync: warm-up + timed iterations of one
 * operation and its synchronisation.  Returns the average latency in us on
 * rank 0 (fence and pscw: both ranks take turns and the time is halved, as
 * in OSU).  Ends with a barrier, so every operation has completed at its
 * target on return.
 */
double bench_rma_latency(const bench_opts *opts, bench_window *w, size_t size, bench_rma_op op,
                         void *ctx);

/*
 * OSU's bandwidth loop: per iteration opts->window operations (slots
 * 0..window-1 of `size` bytes) and one synchronisation.  Returns MB/s on rank
 * 0.  Ends with a barrier.
 */
double bench_rma_bw(const bench_opts *opts, bench_window *w, size_t size, bench_rma_op op,
                    void *ctx);

/*
 * Options for a short validation pass of the same loop (2 operations, no
 * warm-up): accumulate checks run on it, since the sums of a whole timed loop
 * overflow small elements, and implementations differ there (wrapping or
 * saturating).
 */
void bench_rma_check_pass(const bench_opts *opts, bench_opts *check);

/* Whether this rank issued operations in the loop, and how many per loop (warm-up included). */
int bench_rma_is_origin(const bench_opts *opts);
long bench_rma_ops(const bench_opts *opts, size_t size);
/* Whether this rank's window was the target of the loop's operations. */
int bench_rma_is_target(const bench_opts *opts);

/* A byte pattern that depends on the writing rank and the size. */
void bench_pattern_fill(void *buf, size_t bytes, int writer, size_t size);
int bench_pattern_ok(const void *buf, size_t bytes, int writer, size_t size);

/*
 * Accumulate data: element k of the origin is (k % 3) + 1; after n sums into
 * a zeroed window element k must be n * ((k % 3) + 1) (wrapping in the
 * element's width).
 */
void bench_elem_fill(void *buf, size_t count, bench_elem elem);
int bench_elem_sum_ok(const void *buf, size_t count, bench_elem elem, long n);

/*
 * Every rank reports whether its check passed; if one failed, rank 0 names
 * the size and `what`, and the job aborts (exit status non-zero).
 */
void bench_rma_verify(const bench_opts *opts, int ok, size_t size, const char *what);

/*
 * The one-sided programs in bench_main (bench_common.h): per size,
 * bench_rma_begin (the program's .setup calls it first) creates the window
 * of one slot, or a window of slots for the bandwidth tests, and this row
 * state as the case's state; bench_rma_measure runs the latency or bandwidth
 * loop of the program's kind; bench_rma_end frees them.
 */
typedef struct {
    bench_window w;
    bench_rma_op op;
    size_t size;
    char *origin;           /* put, accumulate: the data sent; get: where it lands */
    char *fetched;          /* get_accumulate: the previous values */
    int count;              /* accumulate: elements of `type` */
    MPI_Datatype type;
    long long value, compare, result; /* fetch_and_op, compare_and_swap */
} bench_rma_row;

bench_rma_row *bench_rma_begin(bench_case *c, bench_rma_op op);
double bench_rma_measure(bench_case *c);
void bench_rma_end(bench_case *c);

/* Put and get, shared by the latency and bandwidth programs: operation j uses slot j. */
void bench_rma_put_setup(bench_case *c);
void bench_rma_put_verify(bench_case *c);
void bench_rma_get_setup(bench_case *c);
void bench_rma_get_verify(bench_case *c);

/* A one-sided program's descriptor: its kind, buffers, setup and checks. */
#define BENCH_RMA_DESC(kind_, buffers_, setup_, verify_)                                      \
    {                                                                                          \
        .kind = (kind_), .buffers = (buffers_), .report = BENCH_REPORT_MEASURED,               \
        .setup = (setup_), .measure = bench_rma_measure, .verify = (verify_),                 \
        .teardown = bench_rma_end                                                              \
    }

#ifdef __cplusplus
}
#endif

#endif /* WEFT_OSU_BENCH_RMA_H */
