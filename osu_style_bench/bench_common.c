/*
 * bench_common.c - shared driver for weft's OSU-style MPI micro-benchmarks.
 *
 * Uses only: MPI_Init, MPI_Finalize, MPI_Comm_rank, MPI_Comm_size,
 * MPI_Wtime, MPI_Abort, MPI_Get_library_version, MPI_Barrier, MPI_Allreduce,
 * and with -t vector MPI_Type_vector, MPI_Type_commit, MPI_Type_free.
 */
#include "bench_common.h"
#include "bench_util.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define BENCH_SIZE_WIDTH 10
#define BENCH_FIELD_WIDTH 18
#define BENCH_ITER_WIDTH 13
#define BENCH_PRECISION 2
#define BENCH_PAGE 4096

static const char *kind_title(bench_kind k)
{
    switch (k) {
    case BENCH_LATENCY: return "Latency";
    case BENCH_BW: return "Bandwidth";
    case BENCH_BIBW: return "Bi-Directional Bandwidth";
    case BENCH_ALLREDUCE: return "Allreduce Latency";
    case BENCH_BARRIER: return "Barrier Latency";
    case BENCH_BCAST: return "Broadcast Latency";
    case BENCH_REDUCE: return "Reduce Latency";
    case BENCH_ALLGATHER: return "Allgather Latency";
    case BENCH_ALLTOALL: return "All-to-All Personalized Exchange Latency";
    case BENCH_IALLREDUCE: return "Non-blocking Allreduce Latency";
    case BENCH_IBCAST: return "Non-blocking Broadcast Latency";
    case BENCH_IALLGATHER: return "Non-blocking Allgather Latency";
    case BENCH_IALLTOALL: return "Non-blocking All-to-All Latency";
    case BENCH_PUT_LATENCY: return "Put Latency";
    case BENCH_GET_LATENCY: return "Get Latency";
    case BENCH_PUT_BW: return "Put Bandwidth";
    case BENCH_GET_BW: return "Get Bandwidth";
    case BENCH_ACC_LATENCY: return "Accumulate Latency";
    case BENCH_FOP_LATENCY: return "Fetch_and_op Latency";
    case BENCH_CAS_LATENCY: return "Compare_and_swap Latency";
    case BENCH_GET_ACC_LATENCY: return "Get_accumulate Latency";
    }
    return "?";
}

static const char *kind_prog(bench_kind k)
{
    switch (k) {
    case BENCH_LATENCY: return "osu_latency";
    case BENCH_BW: return "osu_bw";
    case BENCH_BIBW: return "osu_bibw";
    case BENCH_ALLREDUCE: return "osu_allreduce";
    case BENCH_BARRIER: return "osu_barrier";
    case BENCH_BCAST: return "osu_bcast";
    case BENCH_REDUCE: return "osu_reduce";
    case BENCH_ALLGATHER: return "osu_allgather";
    case BENCH_ALLTOALL: return "osu_alltoall";
    case BENCH_IALLREDUCE: return "osu_iallreduce";
    case BENCH_IBCAST: return "osu_ibcast";
    case BENCH_IALLGATHER: return "osu_iallgather";
    case BENCH_IALLTOALL: return "osu_ialltoall";
    case BENCH_PUT_LATENCY: return "osu_put_latency";
    case BENCH_GET_LATENCY: return "osu_get_latency";
    case BENCH_PUT_BW: return "osu_put_bw";
    case BENCH_GET_BW: return "osu_get_bw";
    case BENCH_ACC_LATENCY: return "osu_acc_latency";
    case BENCH_FOP_LATENCY: return "osu_fop_latency";
    case BENCH_CAS_LATENCY: return "osu_cas_latency";
    case BENCH_GET_ACC_LATENCY: return "osu_get_acc_latency";
    }
    return "osu_bench";
}

static int is_pt2pt(bench_kind k)
{
    return k == BENCH_LATENCY || k == BENCH_BW || k == BENCH_BIBW;
}

int bench_is_rma(bench_kind k)
{
    switch (k) {
    case BENCH_PUT_LATENCY:
    case BENCH_GET_LATENCY:
    case BENCH_PUT_BW:
    case BENCH_GET_BW:
    case BENCH_ACC_LATENCY:
    case BENCH_FOP_LATENCY:
    case BENCH_CAS_LATENCY:
    case BENCH_GET_ACC_LATENCY:
        return 1;
    default:
        return 0;
    }
}

static int is_rma_bw(bench_kind k)
{
    return k == BENCH_PUT_BW || k == BENCH_GET_BW;
}

/* One-sided tests of a single MPI_LONG_LONG: one row, no sizes. */
static int is_atomic_kind(bench_kind k)
{
    return k == BENCH_FOP_LATENCY || k == BENCH_CAS_LATENCY;
}

/* Accumulate tests: -T picks the element type, sizes are whole elements. */
static int is_acc_kind(bench_kind k)
{
    return k == BENCH_ACC_LATENCY || k == BENCH_GET_ACC_LATENCY;
}

static const char *win_names[] = {"create", "allocate", "dynamic"};
static const char *sync_names[] = {"lock", "flush", "flush_local", "lock_all", "fence", "pscw"};
static const char *elem_names[] = {"char", "int", "long_long", "double"};

/* What the header says, as OSU prints it. */
static const char *win_call(bench_win_flavor w)
{
    switch (w) {
    case BENCH_WIN_CREATE: return "MPI_Win_create";
    case BENCH_WIN_ALLOCATE: return "MPI_Win_allocate";
    case BENCH_WIN_DYNAMIC: return "MPI_Win_create_dynamic";
    }
    return "?";
}

static const char *sync_call(bench_sync s)
{
    switch (s) {
    case BENCH_SYNC_LOCK: return "MPI_Win_lock/unlock";
    case BENCH_SYNC_FLUSH: return "MPI_Win_flush";
    case BENCH_SYNC_FLUSH_LOCAL: return "MPI_Win_flush_local";
    case BENCH_SYNC_LOCK_ALL: return "MPI_Win_lock_all/unlock_all";
    case BENCH_SYNC_FENCE: return "MPI_Win_fence";
    case BENCH_SYNC_PSCW: return "MPI_Win_post/start/complete/wait";
    }
    return "?";
}

MPI_Datatype bench_elem_type(bench_elem e)
{
    switch (e) {
    case BENCH_ELEM_CHAR: return MPI_CHAR;
    case BENCH_ELEM_INT: return MPI_INT;
    case BENCH_ELEM_LONG_LONG: return MPI_LONG_LONG;
    case BENCH_ELEM_DOUBLE: return MPI_DOUBLE;
    }
    return MPI_CHAR;
}

size_t bench_elem_size(bench_elem e)
{
    switch (e) {
    case BENCH_ELEM_CHAR: return 1;
    case BENCH_ELEM_INT: return sizeof(int);
    case BENCH_ELEM_LONG_LONG: return sizeof(long long);
    case BENCH_ELEM_DOUBLE: return sizeof(double);
    }
    return 1;
}

static const char *elem_call(bench_elem e)
{
    switch (e) {
    case BENCH_ELEM_CHAR: return "MPI_CHAR";
    case BENCH_ELEM_INT: return "MPI_INT";
    case BENCH_ELEM_LONG_LONG: return "MPI_LONG_LONG";
    case BENCH_ELEM_DOUBLE: return "MPI_DOUBLE";
    }
    return "?";
}

/* Index of `s` in names[0..n), or -1. */
static int lookup_name(const char *s, const char *const *names, int n)
{
    int i;
    for (i = 0; i < n; ++i)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/*
 * Programs that take device and managed buffers.  The collective ones among
 * them fill and check their data through a host copy (bench_copy_in/out);
 * the collective programs not listed still read and write their buffers on
 * the host.
 */
#define BENCH_DEVICE_PROGS \
    "osu_latency, osu_bw, osu_bibw, osu_bcast, osu_reduce, osu_allgather, osu_allreduce and the\n" \
    "non-blocking osu_iallreduce, osu_ibcast, osu_iallgather and osu_ialltoall"

static int takes_device(bench_kind k)
{
    return is_pt2pt(k) || k == BENCH_BCAST || k == BENCH_REDUCE || k == BENCH_ALLGATHER ||
           k == BENCH_ALLREDUCE || k == BENCH_IALLREDUCE || k == BENCH_IBCAST || k == BENCH_IALLGATHER ||
           k == BENCH_IALLTOALL;
}

/* Program name for the messages of the helpers that get no options. */
static const char *bench_prog = "osu_bench";

/* Collectives whose messages are MPI_FLOAT: sizes start at one float. */
static int is_float_kind(bench_kind k)
{
    return k == BENCH_ALLREDUCE || k == BENCH_REDUCE || k == BENCH_IALLREDUCE;
}

/* Collectives whose buffers hold one `size` block per rank. */
static int is_per_rank_kind(bench_kind k)
{
    return k == BENCH_ALLGATHER || k == BENCH_ALLTOALL || k == BENCH_IALLGATHER || k == BENCH_IALLTOALL;
}

/* What the value printed by --csv is. */
static const char *csv_value(bench_kind k)
{
    switch (k) {
    case BENCH_BW:
    case BENCH_BIBW:
    case BENCH_PUT_BW:
    case BENCH_GET_BW:
        return "bandwidth in MB/s";
    case BENCH_FOP_LATENCY:
    case BENCH_CAS_LATENCY:
        return "average latency in us; the size field is always 8";
    case BENCH_BARRIER:
        return "average latency in us; the size field is always 0";
    case BENCH_IALLREDUCE:
    case BENCH_IBCAST:
    case BENCH_IALLGATHER:
    case BENCH_IALLTOALL:
        return "overall, compute and pure collective time in us, overlap in %;\n"
               "                  the line is \"size,overall,compute,comm,overlap\"";
    default:
        return "average latency in us";
    }
}

/* A kind's default sweep: its sizes, and its timed and warm-up iterations for sizes up to
 * large_threshold and above it. */
static void set_sweep(bench_opts *o, size_t min_size, size_t max_size, int iters, int warmup,
                      int iters_large, int warmup_large)
{
    o->min_size = min_size;
    o->max_size = max_size;
    o->iters = iters;
    o->warmup = warmup;
    o->iters_large = iters_large;
    o->warmup_large = warmup_large;
}

static void set_defaults(bench_opts *o, bench_kind kind)
{
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    o->large_threshold = 8192;
    o->window = 64;
    o->device = NULL;
    o->place[0] = o->place[1] = BENCH_PLACE_HOST;
    switch (kind) {
    case BENCH_LATENCY:
        set_sweep(o, 0, (size_t)4 << 20, 10000, 100, 1000, 10);
        break;
    case BENCH_BW:
    case BENCH_BIBW:
    case BENCH_PUT_BW:
    case BENCH_GET_BW:
        /* One iteration moves a whole window (64 messages or one-sided operations). */
        set_sweep(o, 1, (size_t)4 << 20, 100, 10, 20, 2);
        break;
    case BENCH_ALLREDUCE:
    case BENCH_REDUCE:
    case BENCH_IALLREDUCE:
        set_sweep(o, sizeof(float), (size_t)1 << 20, 1000, 100, 100, 10);
        break;
    case BENCH_BCAST:
    case BENCH_ALLGATHER:
    case BENCH_ALLTOALL:
    case BENCH_IBCAST:
    case BENCH_IALLGATHER:
    case BENCH_IALLTOALL:
        set_sweep(o, 1, (size_t)1 << 20, 1000, 100, 100, 10);
        break;
    case BENCH_BARRIER:
        /* No message: a single row, always run with the small-size counts. */
        set_sweep(o, 0, 0, 1000, 100, 1000, 100);
        break;
    case BENCH_PUT_LATENCY:
    case BENCH_GET_LATENCY:
    case BENCH_ACC_LATENCY:
    case BENCH_GET_ACC_LATENCY:
    case BENCH_FOP_LATENCY:
    case BENCH_CAS_LATENCY:
        /* OSU's one-sided latency counts; fop and cas have one row of 8 bytes. */
        if (is_atomic_kind(kind))
            set_sweep(o, sizeof(long long), sizeof(long long), 10000, 100, 1000, 10);
        else if (is_acc_kind(kind))
            /* Accumulate stops at 64 KiB: where it goes element by element, OSU's 4 MiB
             * would take hours. */
            set_sweep(o, 1, (size_t)64 << 10, 10000, 100, 1000, 10);
        else
            set_sweep(o, 1, (size_t)4 << 20, 10000, 100, 1000, 10);
        break;
    }
    /* OSU's defaults: MPI_Win_allocate, and MPI_Win_flush for every one-sided test. */
    o->win = BENCH_WIN_ALLOCATE;
    o->sync = BENCH_SYNC_FLUSH;
    o->elem = BENCH_ELEM_CHAR;
}

static void print_usage(const bench_opts *o)
{
    bench_opts d;
    set_defaults(&d, o->kind);
    printf("Usage: %s [options]%s\n", kind_prog(o->kind),
           is_pt2pt(o->kind) ? " [SRC DST]" : bench_is_rma(o->kind) ? "" : " [BUF]");
    printf("weft OSU-style MPI %s Test\n\n", kind_title(o->kind));
    printf("Options:\n");
    if (o->kind == BENCH_BARRIER || is_atomic_kind(o->kind)) {
        printf("  -m [MIN:]MAX    accepted and ignored (%s)\n",
               o->kind == BENCH_BARRIER ? "the barrier moves no data" : "one MPI_LONG_LONG");
        printf("  -i N            timed iterations (default %d)\n", d.iters);
        printf("  -x N            warm-up iterations (default %d)\n", d.warmup);
    } else {
        printf("  -m [MIN:]MAX    message sizes in bytes, doubling from MIN to MAX\n");
        printf("                  (\"-m MAX\" sets only the maximum, \"-m MIN:\" only the\n");
        printf("                  minimum; default %zu:%zu)\n", d.min_size, d.max_size);
        if (o->kind == BENCH_ALLGATHER)
            printf("                  size = bytes contributed by each rank\n");
        else if (o->kind == BENCH_ALLTOALL)
            printf("                  size = bytes sent from each rank to each rank\n");
        else if (is_acc_kind(o->kind))
            printf("                  size = bytes, whole elements of the -T type\n");
        printf("  -i N            timed iterations per size (default %d, %d above %zu bytes)\n",
               d.iters, d.iters_large, d.large_threshold);
        printf("  -x N            warm-up iterations per size (default %d, %d above %zu bytes)\n",
               d.warmup, d.warmup_large, d.large_threshold);
    }
    if (is_pt2pt(o->kind)) {
        printf("  -t LAYOUT       message layout: 'contig' (default, MPI_CHAR) or 'vector'\n");
        printf("                  (size/8 doubles at stride 2: one MPI_Type_vector; sizes\n");
        printf("                  from 8, multiples of 8; the size reported is the payload)\n");
    }
    if (o->kind == BENCH_BW || o->kind == BENCH_BIBW)
        printf("  -W N            window size: messages in flight per iteration (default %d)\n",
               d.window);
    if (is_rma_bw(o->kind))
        printf("  -W N            window size: operations per synchronisation (default %d)\n",
               d.window);
    if (bench_is_rma(o->kind)) {
        printf("  -w FLAVOR       window creation: 'create' (MPI_Win_create), 'allocate'\n");
        printf("                  (MPI_Win_allocate, default) or 'dynamic'\n");
        printf("                  (MPI_Win_create_dynamic + MPI_Win_attach)\n");
        printf("  -s SYNC         synchronisation: 'lock', 'flush' (default), 'flush_local',\n");
        printf("                  'lock_all', 'fence' or 'pscw'\n");
    }
    if (is_acc_kind(o->kind))
        printf("  -T TYPE         element type: 'char' (default, MPI_CHAR), 'int', 'long_long'\n"
               "                  or 'double'; the operation is MPI_SUM\n");
    printf("  -d TYPE         use accelerator buffers, TYPE 'cuda' or 'managed'\n");
    if (!takes_device(o->kind)) {
        printf("                  (not supported by this program: device buffers are taken by\n");
        printf("                  osu_latency, osu_bw, osu_bibw, osu_bcast, osu_reduce,\n");
        printf("                  osu_allgather and osu_allreduce only)\n");
    }
#ifndef BENCH_HAVE_CUDA
    if (takes_device(o->kind))
        printf("                  (not supported by this build: host buffers only)\n");
#endif
    printf("  --csv           print \"size,value\" lines instead of the table\n");
    printf("                  (value: %s)\n", csv_value(o->kind));
    printf("  -h, --help      print this help and exit\n\n");
    if (is_pt2pt(o->kind)) {
        printf("Buffer placement (after the options), OSU style: SRC DST, each one of\n");
        printf("  H (host), D (device), M (managed); e.g. \"-d cuda D D\" or \"H D\".\n");
        printf("This test needs exactly 2 ranks.\n");
    } else if (bench_is_rma(o->kind)) {
        printf("Host buffers only.  This test needs exactly 2 ranks; rank 0 is the origin\n");
        printf("(with fence and pscw, latency tests also run the reverse direction, as OSU).\n");
        printf("The data of every size is checked after the timed loop.\n");
    } else if (o->kind == BENCH_BARRIER) {
        printf("Buffer placement (after the options): H (host), D (device), M (managed).\n");
        printf("Runs on any number of ranks.\n");
    } else if (takes_device(o->kind)) {
        printf("Buffer placement (after the options): H (host), D (device), M (managed),\n");
        printf("  for rank 0 then for the other ranks (one letter: every rank); e.g.\n");
        printf("  \"-d cuda\" or \"-d cuda D\" (all on the device) or \"-d cuda H D\".\n");
        printf("Runs on any number of ranks; the result of the first iteration of\n");
        printf("every size is checked (on the host: device results are copied back\n");
        printf("outside the timing).\n");
    } else {
        printf("Buffer placement (after the options): H (host), D (device), M (managed).\n");
        printf("Runs on any number of ranks; the result of the first iteration of\n");
        printf("every size is checked.\n");
    }
}

/* Parse a non-negative decimal size.  Returns 0 on success. */
static int parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    unsigned long long v;
    if (s == NULL || *s == '\0' || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v > SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* "-m MAX", "-m MIN:MAX", "-m MIN:" */
static int parse_range(const char *s, bench_opts *o)
{
    const char *colon = strchr(s, ':');
    if (colon == NULL)
        return parse_size(s, &o->max_size);
    {
        char minbuf[64];
        size_t n = (size_t)(colon - s);
        if (n == 0 || n >= sizeof(minbuf))
            return -1;
        memcpy(minbuf, s, n);
        minbuf[n] = '\0';
        if (parse_size(minbuf, &o->min_size) != 0)
            return -1;
        if (colon[1] != '\0' && parse_size(colon + 1, &o->max_size) != 0)
            return -1;
    }
    return 0;
}

static int parse_placement(const char *s, bench_placement *p)
{
    if (strcmp(s, "H") == 0 || strcmp(s, "h") == 0)
        *p = BENCH_PLACE_HOST;
    else if (strcmp(s, "D") == 0 || strcmp(s, "d") == 0)
        *p = BENCH_PLACE_DEVICE;
    else if (strcmp(s, "M") == 0 || strcmp(s, "m") == 0)
        *p = BENCH_PLACE_MANAGED;
    else
        return -1;
    return 0;
}

/* Finalize and exit from every rank with the same status. */
static void bench_exit(int code)
{
    fflush(stdout);
    fflush(stderr);
    MPI_Finalize();
    exit(code);
}

/* Report a usage error (rank 0) and exit with status 1 on every rank. */
static void usage_error(const bench_opts *o, const char *fmt, const char *arg)
{
    if (o->rank == 0) {
        fprintf(stderr, "%s: ", kind_prog(o->kind));
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\nTry '%s -h' for help.\n", kind_prog(o->kind));
    }
    bench_exit(1);
}

/* Option value: attached ("-m1:8") or the next argument ("-m 1:8"). */
static const char *opt_value(const bench_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (a[2] != '\0')
        return a + 2;
    if (*i + 1 >= argc)
        usage_error(o, "option '%s' needs a value", a);
    ++*i;
    return argv[*i];
}

void bench_init(int *argc, char ***argv, bench_kind kind, bench_opts *o)
{
    int i, nplace = 0, iters_set = 0, warmup_set = 0;
    bench_placement places[2] = {BENCH_PLACE_HOST, BENCH_PLACE_HOST};
    int ac;
    char **av;

    set_defaults(o, kind);
    bench_prog = kind_prog(kind);
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o->nranks);

    ac = (argc != NULL) ? *argc : 0;
    av = (argv != NULL) ? *argv : NULL;

    for (i = 1; i < ac; ++i) {
        const char *a = av[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (o->rank == 0)
                print_usage(o);
            bench_exit(0);
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = 1;
        } else if (strcmp(a, "--") == 0) {
            for (++i; i < ac; ++i) {
                if (nplace >= 2 || parse_placement(av[i], &places[nplace]) != 0)
                    usage_error(o, "unexpected argument '%s'", av[i]);
                ++nplace;
            }
        } else if (strncmp(a, "-m", 2) == 0) {
            const char *v = opt_value(o, ac, av, &i);
            if (parse_range(v, o) != 0)
                usage_error(o, "invalid message size range '%s' (expected [MIN:]MAX)", v);
        } else if (strncmp(a, "-i", 2) == 0) {
            const char *v = opt_value(o, ac, av, &i);
            if (bench_parse_int(v, 1, &o->iters) != 0)
                usage_error(o, "invalid iteration count '%s'", v);
            iters_set = 1;
        } else if (strncmp(a, "-x", 2) == 0) {
            const char *v = opt_value(o, ac, av, &i);
            if (bench_parse_int(v, 0, &o->warmup) != 0)
                usage_error(o, "invalid warm-up count '%s'", v);
            warmup_set = 1;
        } else if (strncmp(a, "-W", 2) == 0 && (kind == BENCH_BW || kind == BENCH_BIBW)) {
            const char *v = opt_value(o, ac, av, &i);
            if (bench_parse_int(v, 1, &o->window) != 0 || o->window > BENCH_MAX_WINDOW)
                usage_error(o, "invalid window size '%s' (1..1024)", v);
        } else if (strncmp(a, "-W", 2) == 0 && is_rma_bw(kind)) {
            const char *v = opt_value(o, ac, av, &i);
            if (bench_parse_int(v, 1, &o->window) != 0 || o->window > BENCH_MAX_WINDOW)
                usage_error(o, "invalid window size '%s' (1..1024)", v);
        } else if (strncmp(a, "-w", 2) == 0 && bench_is_rma(kind)) {
            const char *v = opt_value(o, ac, av, &i);
            int w = lookup_name(v, win_names, 3);
            if (w < 0)
                usage_error(o, "invalid window flavor '%s' (expected create, allocate or dynamic)", v);
            o->win = (bench_win_flavor)w;
        } else if (strncmp(a, "-s", 2) == 0 && bench_is_rma(kind)) {
            const char *v = opt_value(o, ac, av, &i);
            int y = lookup_name(v, sync_names, 6);
            if (y < 0)
                usage_error(o, "invalid synchronisation '%s' (expected lock, flush, flush_local,"
                               " lock_all, fence or pscw)", v);
            o->sync = (bench_sync)y;
        } else if (strncmp(a, "-T", 2) == 0 && is_acc_kind(kind)) {
            const char *v = opt_value(o, ac, av, &i);
            int t = lookup_name(v, elem_names, 4);
            if (t < 0)
                usage_error(o, "invalid element type '%s' (expected char, int, long_long or double)", v);
            o->elem = (bench_elem)t;
        } else if (strncmp(a, "-t", 2) == 0 && is_pt2pt(kind)) {
            const char *v = opt_value(o, ac, av, &i);
            if (strcmp(v, "contig") == 0)
                o->layout = BENCH_LAYOUT_CONTIG;
            else if (strcmp(v, "vector") == 0)
                o->layout = BENCH_LAYOUT_VECTOR;
            else
                usage_error(o, "invalid layout '%s' (expected contig or vector)", v);
        } else if (strncmp(a, "-d", 2) == 0) {
            const char *v = opt_value(o, ac, av, &i);
            if (strcmp(v, "cuda") != 0 && strcmp(v, "managed") != 0)
                usage_error(o, "unsupported device type '%s' (expected cuda or managed)", v);
            o->device = v;
        } else if (a[0] == '-' && a[1] != '\0') {
            usage_error(o, "unknown option '%s'", a);
        } else {
            if (nplace >= 2 || parse_placement(a, &places[nplace]) != 0)
                usage_error(o, "unexpected argument '%s'", a);
            ++nplace;
        }
    }

    if (iters_set)
        o->iters_large = o->iters;
    if (warmup_set)
        o->warmup_large = o->warmup;

    if (nplace == 0 && o->device != NULL) {
        /* "-d cuda" alone asks for device buffers on both sides. */
        places[0] = places[1] = (strcmp(o->device, "managed") == 0)
                                    ? BENCH_PLACE_MANAGED : BENCH_PLACE_DEVICE;
    } else if (nplace == 1) {
        places[1] = places[0];
    }
    o->place[0] = places[0];
    o->place[1] = places[1];

    if (kind == BENCH_BARRIER)
        o->min_size = o->max_size = 0; /* -m is accepted and ignored */
    if (is_atomic_kind(kind))
        o->min_size = o->max_size = sizeof(long long);

    if (o->min_size > o->max_size) {
        if (o->rank == 0)
            fprintf(stderr, "%s: minimum message size %zu is larger than maximum %zu\n",
                    kind_prog(kind), o->min_size, o->max_size);
        bench_exit(1);
    }
    if (o->max_size > (size_t)INT_MAX) {
        if (o->rank == 0)
            fprintf(stderr, "%s: maximum message size %zu exceeds %d bytes\n",
                    kind_prog(kind), o->max_size, INT_MAX);
        bench_exit(1);
    }
    if (is_float_kind(kind) && o->max_size < sizeof(float)) {
        if (o->rank == 0)
            fprintf(stderr, "%s: maximum message size must be at least %zu bytes (one float)\n",
                    kind_prog(kind), sizeof(float));
        bench_exit(1);
    }
    if (is_float_kind(kind) && o->min_size < sizeof(float))
        o->min_size = sizeof(float);
    if (is_acc_kind(kind)) {
        /* Whole elements: sizes start at one element (powers of 2 stay multiples of it). */
        const size_t e = bench_elem_size(o->elem);
        if (o->max_size < e) {
            if (o->rank == 0)
                fprintf(stderr, "%s: maximum message size must be at least %zu bytes (one %s)\n",
                        kind_prog(kind), e, elem_call(o->elem));
            bench_exit(1);
        }
        if (o->min_size < e)
            o->min_size = e;
        if (o->min_size % e != 0) {
            if (o->rank == 0)
                fprintf(stderr, "%s: minimum message size %zu is not a multiple of %zu bytes (%s)\n",
                        kind_prog(kind), o->min_size, e, elem_call(o->elem));
            bench_exit(1);
        }
    }
    if (is_rma_bw(kind) && o->max_size > (size_t)INT_MAX / (size_t)o->window) {
        /* The window holds one `size` slot per operation of a window. */
        if (o->rank == 0)
            fprintf(stderr, "%s: maximum message size %zu times window %d exceeds %d bytes\n",
                    kind_prog(kind), o->max_size, o->window, INT_MAX);
        bench_exit(1);
    }
    if (is_per_rank_kind(kind) && o->max_size > (size_t)INT_MAX / (size_t)o->nranks) {
        /* The buffers hold one block per rank. */
        if (o->rank == 0)
            fprintf(stderr, "%s: maximum message size %zu times %d ranks exceeds %d bytes\n",
                    kind_prog(kind), o->max_size, o->nranks, INT_MAX);
        bench_exit(1);
    }
    if (o->layout == BENCH_LAYOUT_VECTOR) {
        /* One double per element: sizes start at 8 and stay multiples of 8. */
        if (o->max_size < sizeof(double)) {
            if (o->rank == 0)
                fprintf(stderr, "%s: -t vector needs a maximum message size of at least"
                        " %zu bytes\n", kind_prog(kind), sizeof(double));
            bench_exit(1);
        }
        if (o->min_size < sizeof(double))
            o->min_size = sizeof(double);
        if (o->min_size % sizeof(double) != 0) {
            if (o->rank == 0)
                fprintf(stderr, "%s: -t vector needs a minimum message size that is a"
                        " multiple of %zu (got %zu)\n", kind_prog(kind), sizeof(double),
                        o->min_size);
            bench_exit(1);
        }
        if (o->max_size > (size_t)INT_MAX / 2) {
            if (o->rank == 0)
                fprintf(stderr, "%s: -t vector allows at most %d bytes per message\n",
                        kind_prog(kind), INT_MAX / 2);
            bench_exit(1);
        }
    }

    if (o->place[0] != BENCH_PLACE_HOST || o->place[1] != BENCH_PLACE_HOST) {
        /* The other programs fill or check their buffers on the host directly. */
        if (!takes_device(kind)) {
            if (o->rank == 0)
                fprintf(stderr, "%s: device buffers are supported by %s only\n",
                        kind_prog(kind), BENCH_DEVICE_PROGS);
            bench_exit(1);
        }
#ifdef BENCH_HAVE_CUDA
        int devices = 0;
        if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
            if (o->rank == 0)
                fprintf(stderr, "%s: device buffers asked for, but no CUDA device is usable\n", kind_prog(kind));
            bench_exit(1);
        }
        cudaSetDevice(o->rank % devices);
#else
        if (o->rank == 0)
            fprintf(stderr, "%s: device buffers are not supported by this build of the benchmark\n",
                    kind_prog(kind));
        bench_exit(1);
#endif
    }

    if ((is_pt2pt(kind) || bench_is_rma(kind)) && o->nranks != 2) {
        if (o->rank == 0)
            fprintf(stderr, "%s: this test needs exactly 2 ranks (got %d)\n",
                    kind_prog(kind), o->nranks);
        bench_exit(1);
    }
}

int bench_finalize(const bench_opts *opts, int code)
{
    (void)opts;
    fflush(stdout);
    fflush(stderr);
    MPI_Finalize();
    return code;
}

int bench_iterations(const bench_opts *o, size_t size)
{
    return size > o->large_threshold ? o->iters_large : o->iters;
}

int bench_warmup(const bench_opts *o, size_t size)
{
    return size > o->large_threshold ? o->warmup_large : o->warmup;
}

size_t bench_next_size(size_t size)
{
    if (size == 0)
        return 1;
    if (size > SIZE_MAX / 2)
        return 0; /* overflow: caller's "next <= size" check ends the sweep */
    return size * 2;
}

int bench_advance(const bench_opts *o, size_t *size)
{
    size_t n = bench_next_size(*size);
    if (n <= *size || n > o->max_size)
        return 0;
    *size = n;
    return 1;
}

void *bench_alloc(size_t size, bench_placement placement)
{
    size_t bytes = size == 0 ? 1 : size;
    switch (placement) {
    case BENCH_PLACE_HOST: {
        /* aligned_alloc needs a multiple of the alignment. */
        size_t rounded = (bytes + BENCH_PAGE - 1) / BENCH_PAGE * BENCH_PAGE;
        if (rounded < bytes)
            return NULL;
        return aligned_alloc(BENCH_PAGE, rounded);
    }
    case BENCH_PLACE_DEVICE:
    case BENCH_PLACE_MANAGED: {
#ifdef BENCH_HAVE_CUDA
        void *p = NULL;
        cudaError_t e = placement == BENCH_PLACE_DEVICE ? cudaMalloc(&p, bytes)
                                                        : cudaMallocManaged(&p, bytes, cudaMemAttachGlobal);
        return e == cudaSuccess ? p : NULL;
#else
        return NULL;
#endif
    }
    }
    return NULL;
}

void bench_free(void *ptr, bench_placement placement)
{
    if (ptr == NULL)
        return;
    switch (placement) {
    case BENCH_PLACE_HOST:
        free(ptr);
        break;
    case BENCH_PLACE_DEVICE:
    case BENCH_PLACE_MANAGED:
#ifdef BENCH_HAVE_CUDA
        cudaFree(ptr);
#endif
        break;
    }
}

void bench_touch(void *ptr, size_t size, int value, bench_placement placement)
{
    if (ptr == NULL || size == 0)
        return;
    switch (placement) {
    case BENCH_PLACE_HOST:
        memset(ptr, value, size);
        break;
    case BENCH_PLACE_DEVICE:
    case BENCH_PLACE_MANAGED:
#ifdef BENCH_HAVE_CUDA
        cudaMemset(ptr, value, size);
        cudaDeviceSynchronize();
#endif
        break;
    }
}

#ifdef BENCH_HAVE_CUDA
/* A failed copy would leave stale data to validate: stop instead. */
static void copy_check(cudaError_t e, const char *what, size_t size)
{
    int rank = -1;
    if (e == cudaSuccess)
        return;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "%s: rank %d: copying %zu bytes %s failed: %s\n",
            bench_prog, rank, size, what, cudaGetErrorString(e));
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#endif

/* A copy between a host buffer and a benchmark buffer, finished on return (from pageable
 * memory cudaMemcpy may return before the DMA lands). */
static void copy_with(void *dst, const void *src, size_t size, bench_placement placement, const char *what)
{
    if (size == 0)
        return;
    if (placement == BENCH_PLACE_HOST) {
        memcpy(dst, src, size);
        return;
    }
#ifdef BENCH_HAVE_CUDA
    copy_check(cudaMemcpy(dst, src, size, cudaMemcpyDefault), what, size);
    copy_check(cudaDeviceSynchronize(), what, size);
#else
    (void)what;
#endif
}

void bench_copy_in(void *buf, const void *host, size_t size, bench_placement placement)
{
    copy_with(buf, host, size, placement, "to the device");
}

void bench_copy_out(void *host, const void *buf, size_t size, bench_placement placement)
{
    copy_with(host, buf, size, placement, "to the host");
}

void *bench_alloc_or_abort(const bench_opts *o, size_t size, bench_placement placement)
{
    void *p = bench_alloc(size, placement);
    if (p == NULL) {
        fprintf(stderr, "%s: rank %d: cannot allocate %zu bytes\n",
                kind_prog(o->kind), o->rank, size);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

void bench_message_make(const bench_opts *o, size_t size, bench_message *m)
{
    if (o->layout == BENCH_LAYOUT_VECTOR) {
        const int n = (int)(size / sizeof(double));
        int rc = MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &m->type);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_commit(&m->type);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "%s: rank %d: cannot build the vector datatype (error %d)\n",
                    kind_prog(o->kind), o->rank, rc);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        m->count = 1;
        m->span = n > 0 ? (2 * (size_t)n - 1) * sizeof(double) : 0;
        m->derived = 1;
    } else {
        m->type = MPI_CHAR;
        m->count = (int)size;
        m->span = size;
        m->derived = 0;
    }
}

void bench_message_free(bench_message *m)
{
    if (m->derived)
        MPI_Type_free(&m->type);
    m->derived = 0;
}

size_t bench_buffer_bytes(const bench_opts *o)
{
    if (o->layout == BENCH_LAYOUT_VECTOR)
        return 2 * o->max_size;
    /* bench_init guarantees that these products fit in an int. */
    if (is_per_rank_kind(o->kind))
        return o->max_size * (size_t)o->nranks;
    if (is_rma_bw(o->kind))
        return o->max_size * (size_t)o->window;
    return o->max_size;
}

bench_placement bench_my_placement(const bench_opts *o)
{
    return o->rank == 0 ? o->place[0] : o->place[1];
}

double bench_now(void)
{
    return MPI_Wtime();
}

void bench_print_header(const bench_opts *o)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    size_t n;

    if (o->rank != 0 || o->csv)
        return;

    n = bench_library_version(version);
    while (n > 0 && (version[n - 1] == ' ' || version[n - 1] == '\t'))
        version[--n] = '\0';

    printf("# weft OSU-style MPI %s Test\n", kind_title(o->kind));
    printf("# %s\n", n > 0 ? version : "(unknown MPI library)");
    if (o->layout == BENCH_LAYOUT_VECTOR)
        printf("# Datatype: vector of MPI_DOUBLE, blocklength 1, stride 2 (size = payload bytes)\n");
    if (o->kind == BENCH_ALLGATHER)
        printf("# Size: bytes contributed by each rank (%d ranks)\n", o->nranks);
    else if (o->kind == BENCH_ALLTOALL)
        printf("# Size: bytes sent from each rank to each rank (%d ranks)\n", o->nranks);
    if (bench_is_rma(o->kind)) {
        printf("# Window creation: %s\n", win_call(o->win));
        printf("# Synchronization: %s\n", sync_call(o->sync));
        if (is_acc_kind(o->kind))
            printf("# Datatype: %s, MPI_SUM\n", elem_call(o->elem));
    }
    switch (o->kind) {
    case BENCH_LATENCY:
    case BENCH_PUT_LATENCY:
    case BENCH_GET_LATENCY:
    case BENCH_ACC_LATENCY:
    case BENCH_FOP_LATENCY:
    case BENCH_CAS_LATENCY:
    case BENCH_GET_ACC_LATENCY:
        printf("%-*s%*s\n", BENCH_SIZE_WIDTH, "# Size", BENCH_FIELD_WIDTH, "Latency (us)");
        break;
    case BENCH_BW:
    case BENCH_BIBW:
    case BENCH_PUT_BW:
    case BENCH_GET_BW:
        printf("%-*s%*s\n", BENCH_SIZE_WIDTH, "# Size", BENCH_FIELD_WIDTH, "Bandwidth (MB/s)");
        break;
    case BENCH_ALLREDUCE:
    case BENCH_BCAST:
    case BENCH_REDUCE:
    case BENCH_ALLGATHER:
    case BENCH_ALLTOALL:
        printf("%-*s%*s%*s%*s%*s\n", BENCH_SIZE_WIDTH, "# Size",
               BENCH_FIELD_WIDTH, "Avg Latency(us)", BENCH_FIELD_WIDTH, "Min Latency(us)",
               BENCH_FIELD_WIDTH, "Max Latency(us)", BENCH_ITER_WIDTH, "Iterations");
        break;
    case BENCH_BARRIER:
        printf("%-*s%*s%*s%*s\n", BENCH_FIELD_WIDTH, "# Avg Latency(us)",
               BENCH_FIELD_WIDTH, "Min Latency(us)", BENCH_FIELD_WIDTH, "Max Latency(us)",
               BENCH_ITER_WIDTH, "Iterations");
        break;
    case BENCH_IALLREDUCE:
    case BENCH_IBCAST:
    case BENCH_IALLGATHER:
    case BENCH_IALLTOALL:
        printf("%-*s%*s%*s%*s%*s%*s%*s%*s\n", BENCH_SIZE_WIDTH, "# Size",
               BENCH_FIELD_WIDTH, "Overall(us)", BENCH_FIELD_WIDTH, "Compute(us)",
               BENCH_FIELD_WIDTH, "Pure Comm.(us)", BENCH_FIELD_WIDTH, "Min Comm.(us)",
               BENCH_FIELD_WIDTH, "Max Comm.(us)", BENCH_FIELD_WIDTH, "Overlap(%)",
               BENCH_ITER_WIDTH, "Iterations");
        break;
    }
    fflush(stdout);
}

void bench_print_row(const bench_opts *o, size_t size, double value)
{
    if (o->rank != 0)
        return;
    if (o->csv)
        printf("%zu,%.*f\n", size, BENCH_PRECISION, value);
    else
        printf("%-*zu%*.*f\n", BENCH_SIZE_WIDTH, size, BENCH_FIELD_WIDTH, BENCH_PRECISION, value);
    fflush(stdout);
}

void bench_print_coll_row(const bench_opts *o, size_t size, double avg_us,
                          double min_us, double max_us, int iterations)
{
    if (o->rank != 0)
        return;
    if (o->csv)
        printf("%zu,%.*f\n", o->kind == BENCH_BARRIER ? (size_t)0 : size,
               BENCH_PRECISION, avg_us);
    else if (o->kind == BENCH_BARRIER)
        printf("%*.*f%*.*f%*.*f%*d\n",
               BENCH_FIELD_WIDTH, BENCH_PRECISION, avg_us,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, min_us,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, max_us,
               BENCH_ITER_WIDTH, iterations);
    else
        printf("%-*zu%*.*f%*.*f%*.*f%*d\n", BENCH_SIZE_WIDTH, size,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, avg_us,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, min_us,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, max_us,
               BENCH_ITER_WIDTH, iterations);
    fflush(stdout);
}

#define COMPUTE_WIDTH 16
#define COMPUTE_REPS 8

/* Keeps the compute loop from being optimised away. */
static volatile float compute_sink;

/* The overlap tests' computation: floating-point work on the CPU for about `seconds` of wall
 * time, calling no MPI function but MPI_Wtime. */
static void bench_dummy_compute(double seconds)
{
    float a[COMPUTE_WIDTH];
    const double t0 = bench_now();
    int j, r;

    for (j = 0; j < COMPUTE_WIDTH; ++j)
        a[j] = (float)j;
    do {
        for (r = 0; r < COMPUTE_REPS; ++r)
            for (j = 0; j < COMPUTE_WIDTH; ++j)
                a[j] = a[j] * 0.999f + 0.5f;
    } while (bench_now() - t0 < seconds);
    compute_sink = a[0] + a[COMPUTE_WIDTH - 1];
}

void bench_overlap_compute(bench_case *c)
{
    if (c->pass == 2) {
        const double t1 = bench_now();
        bench_dummy_compute(c->compute_s);
        c->compute_total_s += bench_now() - t1;
    }
}

double bench_overlap_percent(double overall_us, double compute_us, double comm_us)
{
    double overlap;
    if (!(comm_us > 0.0))
        return 0.0;
    overlap = 100.0 * (1.0 - (overall_us - compute_us) / comm_us);
    return overlap > 0.0 ? overlap : 0.0;
}

void bench_print_nbc_row(const bench_opts *o, size_t size, double overall_us,
                         double compute_us, double comm_us, double min_comm_us,
                         double max_comm_us, int iterations)
{
    const double overlap = bench_overlap_percent(overall_us, compute_us, comm_us);
    if (o->rank != 0)
        return;
    if (o->csv)
        printf("%zu,%.*f,%.*f,%.*f,%.*f\n", size, BENCH_PRECISION, overall_us,
               BENCH_PRECISION, compute_us, BENCH_PRECISION, comm_us,
               BENCH_PRECISION, overlap);
    else
        printf("%-*zu%*.*f%*.*f%*.*f%*.*f%*.*f%*.*f%*d\n", BENCH_SIZE_WIDTH, size,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, overall_us,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, compute_us,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, comm_us,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, min_comm_us,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, max_comm_us,
               BENCH_FIELD_WIDTH, BENCH_PRECISION, overlap,
               BENCH_ITER_WIDTH, iterations);
    fflush(stdout);
}

/* ------------------------------------------------------------------------ */
/* The driver                                                                */

#define FLOAT_PATTERN_PERIOD 16

static float float_pattern(int rank, size_t i)
{
    return (float)((((size_t)rank * 3u + i) % FLOAT_PATTERN_PERIOD) + 1u);
}

size_t bench_fill_float_input(const bench_case *c, void *host)
{
    float *v = host;
    const size_t count = c->size / sizeof(float);
    size_t k;
    for (k = 0; k < count; ++k)
        v[k] = float_pattern(c->opts->rank, k);
    return count * sizeof(float);
}

size_t bench_expect_float_sum(const bench_case *c, void *host)
{
    float sums[FLOAT_PATTERN_PERIOD];
    float *v = host;
    const size_t count = c->size / sizeof(float);
    size_t k;
    int r;
    /* The pattern is periodic in the element index: sum one period. */
    for (k = 0; k < FLOAT_PATTERN_PERIOD; ++k) {
        sums[k] = 0.0f;
        for (r = 0; r < c->opts->nranks; ++r)
            sums[k] += float_pattern(r, k);
    }
    for (k = 0; k < count; ++k)
        v[k] = sums[k % FLOAT_PATTERN_PERIOD];
    return count * sizeof(float);
}

/* The driver's side of a row: the host copies the data check works on. */
typedef struct {
    const bench_desc *d;
    bench_case c;
    void *host;       /* input, then the result copied back */
    void *expected;
    int errors;       /* wrong elements found on this rank */
    int bad_pass;     /* overlap tests: the pass they were found in */
} row_state;

/* Count the elements of the result that differ from the expected ones; report the first. */
static void check_result(row_state *s)
{
    const bench_case *c = &s->c;
    const int floats = is_float_kind(s->d->kind);
    const size_t elem = floats ? sizeof(float) : 1;
    const size_t bytes = s->d->expect(c, s->expected);
    const size_t count = bytes / elem;
    const char *got = s->host, *want = s->expected;
    size_t k, first_bad = 0;
    int errors = 0;
    char where[96], values[96];

    if (bytes == 0)
        return;
    bench_copy_out(s->host, c->rbuf, bytes, c->place);
    if (memcmp(got, want, bytes) == 0)
        return;
    for (k = 0; k < count; ++k) {
        if (memcmp(got + k * elem, want + k * elem, elem) != 0) {
            if (errors == 0)
                first_bad = k;
            ++errors;
        }
    }
    if (errors == 0)
        return;
    if (is_per_rank_kind(s->d->kind))
        snprintf(where, sizeof(where), "in the block of rank %zu at offset %zu",
                 first_bad / c->size, first_bad % c->size);
    else
        snprintf(where, sizeof(where), "at %s %zu", floats ? "index" : "offset", first_bad);
    if (floats)
        snprintf(values, sizeof(values), "got %g, expected %g",
                 (double)((const float *)s->host)[first_bad],
                 (double)((const float *)s->expected)[first_bad]);
    else
        snprintf(values, sizeof(values), "got %d, expected %d", (int)got[first_bad],
                 (int)want[first_bad]);
    fprintf(stderr, "%s: rank %d: size %zu: %s%s%d of %zu %s wrong, first %s: %s\n",
            kind_prog(s->d->kind), c->opts->rank, c->size,
            c->pass == 0 ? "" : c->pass == 1 ? "pure pass" : "overlap pass",
            c->pass == 0 ? "" : ": ", errors, count, floats ? "elements" : "bytes", where, values);
    s->errors = errors;
    s->bad_pass = c->pass;
}

/*
 * Iterations [from, to) of a loop whose first `warmup` are not timed; returns
 * the time of the timed ones.  BENCH_TIME_LOOP times the whole span with one
 * clock, so the timed region holds the program's own loop and nothing else.
 */
static double run_span(row_state *s, int from, int to, int warmup)
{
    const bench_desc *d = s->d;
    bench_case *c = &s->c;
    double t0, elapsed = 0.0;
    int i;

    if (d->timing == BENCH_TIME_LOOP) {
        if (from < warmup) {
            const int untimed = (to < warmup ? to : warmup) - from;
            d->run(c, untimed);
            from += untimed;
        }
        if (from < to) {
            c->compute_total_s = 0.0;
            t0 = bench_now();
            d->run(c, to - from);
            elapsed = bench_now() - t0;
        }
        return elapsed;
    }
    for (i = from; i < to; ++i) {
        if (i == warmup)
            c->compute_total_s = 0.0;
        t0 = bench_now();
        d->run(c, 1);
        if (i >= warmup)
            elapsed += bench_now() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return elapsed;
}

/* Zero the result, copy the input in, and run one pass of warm-up + timed iterations.  The
 * first iteration runs alone when the result is checked, so the check stays untimed. */
static double run_pass(row_state *s, int warmup, int iters)
{
    bench_case *c = &s->c;
    int done = 0;
    double elapsed = 0.0;

    if (s->d->fill != NULL) {
        const size_t result = c->size * (is_per_rank_kind(s->d->kind) ? (size_t)c->opts->nranks : 1);
        bench_touch(c->rbuf, result, 0, c->place);
        bench_copy_in(c->sbuf, s->host, s->d->fill(c, s->host), c->place);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (s->d->expect != NULL && s->errors == 0) {
        elapsed = run_span(s, 0, 1, warmup);
        check_result(s);
        done = 1;
    }
    return elapsed + run_span(s, done, warmup + iters, warmup);
}

/* Every rank's share of a failed check; returns 1 when the run must stop. */
static int report_errors(const row_state *s)
{
    int errors = 0;
    if (s->d->expect == NULL)
        return 0;
    MPI_Allreduce(&s->errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (errors == 0)
        return 0;
    if (s->c.opts->rank == 0) {
        fflush(stdout);
        fprintf(stderr, "%s: validation FAILED at size %zu (%d wrong %s %s)\n",
                kind_prog(s->d->kind), s->c.size, errors,
                is_float_kind(s->d->kind) ? "elements" : "bytes",
                s->d->kind == BENCH_REDUCE ? "at the root" : "over all ranks");
    }
    return 1;
}

static void report_rank_stats(const bench_opts *o, size_t size, double seconds, int iters)
{
    double local_us = seconds * 1e6 / iters, sum_us, min_us, max_us;
    MPI_Allreduce(&local_us, &sum_us, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&local_us, &min_us, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&local_us, &max_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    bench_print_coll_row(o, size, sum_us / o->nranks, min_us, max_us, iters);
}

static void report_overlap(const bench_opts *o, size_t size, double overall_s, double compute_s,
                           double pure_s, int iters)
{
    double local[3], sum[3], min_comm_us, max_comm_us;
    local[0] = overall_s * 1e6 / iters;
    local[1] = compute_s * 1e6 / iters;
    local[2] = pure_s * 1e6 / iters;
    MPI_Allreduce(local, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&local[2], &min_comm_us, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&local[2], &max_comm_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    bench_print_nbc_row(o, size, sum[0] / o->nranks, sum[1] / o->nranks, sum[2] / o->nranks,
                        min_comm_us, max_comm_us, iters);
}

/* One row: returns 1 when a data check failed. */
static int run_row(row_state *s)
{
    const bench_desc *d = s->d;
    bench_case *c = &s->c;
    const bench_opts *o = c->opts;
    const int iters = bench_iterations(o, c->size);
    const int warmup = bench_warmup(o, c->size);
    double elapsed, pure = 0.0;

    s->errors = 0;
    if (d->measure != NULL) {
        const double value = d->measure(c);
        if (d->verify != NULL)
            d->verify(c);
        bench_print_row(o, c->size, value);
        return 0;
    }
    if (d->timing == BENCH_TIME_OVERLAP) {
        c->pass = 1;
        pure = run_pass(s, warmup, iters);
        /* Pass 2 computes for this rank's average pure time of pass 1. */
        c->pass = 2;
        c->compute_s = pure / iters;
    }
    elapsed = run_pass(s, warmup, iters);
    if (report_errors(s))
        return 1;

    switch (d->report) {
    case BENCH_REPORT_ONE_WAY_US:
        bench_print_row(o, c->size, elapsed * 1e6 / (2.0 * iters));
        break;
    case BENCH_REPORT_MBPS:
        bench_print_row(o, c->size,
                        (double)d->directions * (double)c->size * o->window * iters / elapsed / 1e6);
        break;
    case BENCH_REPORT_RANK_STATS:
        report_rank_stats(o, c->size, elapsed, iters);
        break;
    case BENCH_REPORT_OVERLAP:
        report_overlap(o, c->size, elapsed, c->compute_total_s, pure, iters);
        break;
    case BENCH_REPORT_MEASURED:
        break;
    }
    return 0;
}

int bench_main(int argc, char **argv, const bench_desc *d)
{
    bench_opts o;
    row_state s;
    size_t bytes, size;
    int status = 0;

    bench_init(&argc, &argv, d->kind, &o);
    memset(&s, 0, sizeof(s));
    s.d = d;
    s.c.opts = &o;
    s.c.place = bench_my_placement(&o);
    bytes = bench_buffer_bytes(&o);
    if (d->buffers & (BENCH_BUF_SEND | BENCH_BUF_ONE)) {
        s.c.sbuf = bench_alloc_or_abort(&o, bytes, s.c.place);
        bench_touch(s.c.sbuf, bytes, 'a', s.c.place);
    }
    if (d->buffers & BENCH_BUF_ONE) {
        s.c.rbuf = s.c.sbuf;
    } else if (d->buffers & BENCH_BUF_RECV) {
        s.c.rbuf = bench_alloc_or_abort(&o, bytes, s.c.place);
        bench_touch(s.c.rbuf, bytes, 'b', s.c.place);
    }
    /* Host copies for filling and checking whatever the placement. */
    if (d->fill != NULL || d->expect != NULL) {
        s.host = bench_alloc_or_abort(&o, bytes, BENCH_PLACE_HOST);
        s.expected = bench_alloc_or_abort(&o, bytes, BENCH_PLACE_HOST);
    }

    bench_print_header(&o);

    size = o.min_size;
    do {
        s.c.size = size;
        bench_message_make(&o, size, &s.c.msg);
        if (d->fill == NULL) {
            /* No data to check: fresh bytes, faulted in outside the timing. */
            bench_touch(s.c.sbuf, s.c.msg.span, 'a', s.c.place);
            if (s.c.rbuf != s.c.sbuf)
                bench_touch(s.c.rbuf, s.c.msg.span, 'b', s.c.place);
        }
        if (d->setup != NULL)
            d->setup(&s.c);
        status = run_row(&s);
        if (d->teardown != NULL)
            d->teardown(&s.c);
        bench_message_free(&s.c.msg);
    } while (status == 0 && bench_advance(&o, &size));

    if (s.c.rbuf != s.c.sbuf)
        bench_free(s.c.rbuf, s.c.place);
    bench_free(s.c.sbuf, s.c.place);
    bench_free(s.host, BENCH_PLACE_HOST);
    bench_free(s.expected, BENCH_PLACE_HOST);
    return bench_finalize(&o, status);
}
