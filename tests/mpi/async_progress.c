/* Asynchronous progress: operations complete while every rank computes and calls no MPI at all.
 * Run with WEFT_ASYNC_PROGRESS=1, or with the argument "session" (the thread asked for by the
 * info key weft_async_progress of MPI_Session_init, on a communicator made from the session).
 *
 * Each part starts operations, then watches the destination memory with plain loads until the
 * expected bytes are all there (or 60 s pass: a failure), and only then calls MPI to finish:
 *  - MPI_Iallreduce of 64 Ki doubles (the result is above every partial sum);
 *  - MPI_Ibcast of 1 MiB from each root in turn;
 *  - a 4 MiB MPI_Isend/MPI_Irecv around a ring;
 *  - MPI_Put under a passive-target lock into every other rank's window. */
#include <time.h>

#include "common.h"

#define DEADLINE_S 60.0

static MPI_Comm comm;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Spins (no MPI call) until done(arg) or the deadline. */
static void await_without_mpi(int (*done)(void *), void *arg, const char *what)
{
    const double t0 = now_s();
    while (!done(arg)) {
        if (now_s() - t0 > DEADLINE_S)
            FAIL("%s made no progress in %.0f s without MPI calls", what, DEADLINE_S);
    }
}

#define NREDUCE (64 * 1024)
static volatile double *reduce_out;
static double reduce_expect(int i)
{
    return (double)t_size * (t_size + 1) / 2 * (i % 100 + 1);
}
static int reduce_done(void *arg)
{
    (void)arg;
    for (int i = NREDUCE - 1; i >= 0; i -= 1)
        if (reduce_out[i] != reduce_expect(i)) return 0;
    return 1;
}

struct bytes_check {
    const volatile unsigned char *buf;
    size_t n;
    uint32_t a, b, c;
};
static int bytes_done(void *arg)
{
    const struct bytes_check *k = arg;
    for (size_t i = k->n; i-- > 0;)
        if (k->buf[i] != t_pat(k->a, k->b, k->c, i)) return 0;
    return 1;
}

static void iallreduce_part(void)
{
    double *in = malloc(sizeof(double) * NREDUCE), *out = malloc(sizeof(double) * NREDUCE);
    CHECK(in && out, "out of memory");
    for (int i = 0; i < NREDUCE; ++i) {
        in[i] = (double)(t_rank + 1) * (i % 100 + 1);
        out[i] = 0;
    }
    MPI_Request r;
    MPI_OK(MPI_Iallreduce(in, out, NREDUCE, MPI_DOUBLE, MPI_SUM, comm, &r));
    reduce_out = out;
    await_without_mpi(reduce_done, NULL, "MPI_Iallreduce");
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < NREDUCE; ++i) CHECK(out[i] == reduce_expect(i), "iallreduce element %d: %g", i, out[i]);
    free(in);
    free(out);
}

static void ibcast_part(void)
{
    const size_t n = 1 << 20;
    unsigned char *buf = malloc(n);
    CHECK(buf != NULL, "out of memory");
    for (int root = 0; root < t_size; ++root) {
        if (t_rank == root) t_fill(buf, n, (uint32_t)root, 3u, 0u);
        else memset(buf, 0, n);
        MPI_Request r;
        MPI_OK(MPI_Ibcast(buf, (int)n, MPI_BYTE, root, comm, &r));
        struct bytes_check k = {buf, n, (uint32_t)root, 3u, 0u};
        await_without_mpi(bytes_done, &k, "MPI_Ibcast");
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_PAT(buf, n, (uint32_t)root, 3u, 0u, "ibcast");
        /* The roots' next round must not overwrite a buffer a peer still reads. */
        MPI_OK(MPI_Barrier(comm));
    }
    free(buf);
}

static void ring_part(void)
{
    const size_t n = 4 << 20;
    const int next = (t_rank + 1) % t_size, prev = (t_rank + t_size - 1) % t_size;
    unsigned char *out = malloc(n), *in = malloc(n);
    CHECK(out && in, "out of memory");
    t_fill(out, n, (uint32_t)t_rank, 11u, 0u);
    memset(in, 0, n);
    MPI_Request r[2];
    MPI_OK(MPI_Irecv(in, (int)n, MPI_BYTE, prev, 5, comm, &r[0]));
    MPI_OK(MPI_Isend(out, (int)n, MPI_BYTE, next, 5, comm, &r[1]));
    struct bytes_check k = {in, n, (uint32_t)prev, 11u, 0u};
    await_without_mpi(bytes_done, &k, "a 4 MiB MPI_Isend/MPI_Irecv");
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK_PAT(in, n, (uint32_t)prev, 11u, 0u, "ring message");
    free(out);
    free(in);
}

static void passive_put_part(void)
{
    const int slots = 64;
    long long *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate((MPI_Aint)(sizeof(long long) * (size_t)slots * (size_t)t_size), sizeof(long long),
                            MPI_INFO_NULL, comm, &mem, &win));
    memset(mem, 0, sizeof(long long) * (size_t)slots * (size_t)t_size);
    MPI_OK(MPI_Barrier(comm));
    /* Every rank puts its slots into every other rank; the target watches its memory. */
    long long vals[64];
    for (int target = 0; target < t_size; ++target) {
        if (target == t_rank) continue;
        for (int i = 0; i < slots; ++i) vals[i] = 1000000LL * (t_rank + 1) + i;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        MPI_OK(MPI_Put(vals, slots, MPI_LONG_LONG, target, (MPI_Aint)slots * t_rank, slots, MPI_LONG_LONG, win));
        MPI_OK(MPI_Win_unlock(target, win));
    }
    const double t0 = now_s();
    for (int origin = 0; origin < t_size; ++origin) {
        if (origin == t_rank) continue;
        for (int i = 0; i < slots; ++i) {
            volatile long long *slot = &mem[slots * origin + i];
            while (*slot != 1000000LL * (origin + 1) + i)
                if (now_s() - t0 > DEADLINE_S) FAIL("put from rank %d slot %d never arrived", origin, i);
        }
    }
    MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    const int use_session = argc > 1 && strcmp(argv[1], "session") == 0;
    MPI_Session session = MPI_SESSION_NULL;
    t_name = use_session ? "async_progress (session)" : "async_progress";
    if (use_session) {
        MPI_Info info;
        MPI_Group group;
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "weft_async_progress", "true"));
        MPI_OK(MPI_Session_init(info, MPI_ERRORS_ARE_FATAL, &session));
        MPI_OK(MPI_Info_free(&info));
        MPI_OK(MPI_Group_from_session_pset(session, "mpi://WORLD", &group));
        MPI_OK(MPI_Comm_create_from_group(group, "weft.async_progress", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comm));
        MPI_OK(MPI_Group_free(&group));
    } else {
        MPI_Init(&argc, &argv);
        comm = MPI_COMM_WORLD;
    }
    MPI_Comm_rank(comm, &t_rank);
    MPI_Comm_size(comm, &t_size);

    iallreduce_part();
    ibcast_part();
    ring_part();
    passive_put_part();

    MPI_OK(MPI_Barrier(comm));
    if (t_rank == 0) printf("%s: OK (np %d)\n", t_name, t_size);
    if (use_session) {
        MPI_OK(MPI_Comm_free(&comm));
        MPI_OK(MPI_Session_finalize(&session));
    } else {
        MPI_Finalize();
    }
    return 0;
}
