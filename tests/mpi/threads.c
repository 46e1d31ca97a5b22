/* MPI_THREAD_MULTIPLE: several threads per rank call MPI at once.
 *  - point-to-point around a ring, each thread on its own tags of MPI_COMM_WORLD and on its own
 *    duplicate (blocking, non-blocking, eager and large), every byte checked;
 *  - each thread duplicates its own communicator at the same time as the others, then runs collectives
 *    on its duplicate (allreduce, bcast, allgather, ialltoall), results checked;
 *  - one-sided: threads put into disjoint parts of a window and accumulate into shared counters
 *    under lock_all, then the sums and the bytes are checked;
 *  - requests started by one thread and completed by another (MPI_Wait, MPI_Test loops);
 *  - wildcard receives (MPI_ANY_SOURCE) told apart by tag, one tag per thread;
 *  - every thread creates communicators with MPI_Comm_create_group at the same time as the
 *    others, on its own tag: alternately of the lower half of the ranks (the others skip it)
 *    and of all ranks, so the threads of different ranks are in different creations at once;
 *    each new communicator's allreduce result is checked;
 *  - every thread makes intercommunicators at the same time as the others, from the halves of
 *    its own duplicate: MPI_Intercomm_create, then MPI_Intercomm_merge, MPI_Comm_dup and
 *    MPI_Comm_split of the intercommunicator; an allreduce checks each. */
#include <pthread.h>

#include "common.h"

#define NTHREADS 4
#define LARGE (256 * 1024)

static MPI_Comm thread_comm[NTHREADS];
static MPI_Win win;
static long long *win_mem;
#define WIN_SLOTS 64 /* per thread: puts land in [t * WIN_SLOTS, (t + 1) * WIN_SLOTS) */
#define COUNTER (NTHREADS * WIN_SLOTS) /* the accumulate target after them */

static void ring_exchange(MPI_Comm comm, int t, int round, size_t n, int tag)
{
    const int next = (t_rank + 1) % t_size, prev = (t_rank + t_size - 1) % t_size;
    unsigned char *out = malloc(n), *in = malloc(n);
    CHECK(out && in, "out of memory");
    t_fill(out, n, (uint32_t)t_rank, (uint32_t)(t * 1000 + round), (uint32_t)n);
    memset(in, 0, n);
    if (round % 2 == 0) {
        MPI_Request r[2];
        MPI_OK(MPI_Irecv(in, (int)n, MPI_BYTE, prev, tag, comm, &r[0]));
        MPI_OK(MPI_Isend(out, (int)n, MPI_BYTE, next, tag, comm, &r[1]));
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    } else {
        MPI_Status st;
        MPI_OK(MPI_Sendrecv(out, (int)n, MPI_BYTE, next, tag, in, (int)n, MPI_BYTE, prev, tag, comm, &st));
        CHECK_EQ_INT(st.MPI_SOURCE, prev, "sendrecv source");
    }
    CHECK_PAT(in, n, (uint32_t)prev, (uint32_t)(t * 1000 + round), (uint32_t)n, "ring message");
    free(out);
    free(in);
}

static void point_to_point(int t)
{
    static const size_t sizes[] = {1, 8, 1000, 16384, LARGE};
    for (int round = 0; round < 6; ++round)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
            ring_exchange(MPI_COMM_WORLD, t, round, sizes[s], 100 + t);
            ring_exchange(thread_comm[t], t, round, sizes[s], 7);
        }
}

static void collectives(int t)
{
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(thread_comm[t], &c));
    int crank, csize;
    MPI_Comm_rank(c, &crank);
    MPI_Comm_size(c, &csize);
    CHECK_EQ_INT(crank, t_rank, "rank in a thread's duplicate");
    for (int round = 0; round < 10; ++round) {
        const int n = 1 + round * 97;
        long long *v = malloc(sizeof(long long) * (size_t)n);
        CHECK(v != NULL, "out of memory");
        for (int i = 0; i < n; ++i)
            v[i] = (long long)(t_rank + 1) * (i + 1) + t * 1000000LL + round;
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_LONG_LONG, MPI_SUM, c));
        const long long ranks_sum = (long long)csize * (csize + 1) / 2;
        for (int i = 0; i < n; ++i)
            CHECK(v[i] == ranks_sum * (i + 1) + (long long)csize * (t * 1000000LL + round),
                  "allreduce thread %d round %d element %d: %lld", t, round, i, v[i]);

        int root = (round + t) % csize;
        for (int i = 0; i < n; ++i)
            v[i] = crank == root ? (long long)t * 7 + round * 13 + i : -1;
        MPI_OK(MPI_Bcast(v, n, MPI_LONG_LONG, root, c));
        for (int i = 0; i < n; ++i)
            CHECK(v[i] == (long long)t * 7 + round * 13 + i, "bcast thread %d round %d element %d", t, round, i);
        free(v);

        int mine[2] = {crank * 10 + t, round}, all[2 * 64];
        CHECK(csize <= 64, "too many ranks");
        MPI_OK(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, c));
        for (int r = 0; r < csize; ++r)
            CHECK(all[2 * r] == r * 10 + t && all[2 * r + 1] == round, "allgather thread %d from %d", t, r);

        int sendv[64], recvv[64];
        for (int r = 0; r < csize; ++r) sendv[r] = crank * 1000 + r * 10 + t + round * 100000;
        MPI_Request req;
        MPI_OK(MPI_Ialltoall(sendv, 1, MPI_INT, recvv, 1, MPI_INT, c, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int r = 0; r < csize; ++r)
            CHECK(recvv[r] == r * 1000 + crank * 10 + t + round * 100000, "ialltoall thread %d from %d", t, r);
    }
    MPI_OK(MPI_Comm_free(&c));
}

static void one_sided(int t)
{
    /* Puts into every rank's slots of this thread, then a shared counter raised by all. */
    long long vals[WIN_SLOTS];
    for (int target = 0; target < t_size; ++target) {
        for (int i = 0; i < WIN_SLOTS; ++i) vals[i] = (long long)t_rank * 1000000 + t * 1000 + i + target;
        /* Slot i of thread t at the target belongs to origin rank i % t_size. */
        for (int i = t_rank; i < WIN_SLOTS; i += t_size)
            MPI_OK(MPI_Put(&vals[i], 1, MPI_LONG_LONG, target, t * WIN_SLOTS + i, 1, MPI_LONG_LONG, win));
        MPI_OK(MPI_Win_flush(target, win));
        for (int k = 0; k < 25; ++k) {
            long long one = 1;
            MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, target, COUNTER, 1, MPI_LONG_LONG, MPI_SUM, win));
        }
        MPI_OK(MPI_Win_flush(target, win));
    }
}

/* Requests handed between threads: thread 0 starts receives, thread 1 completes them. */
static MPI_Request handed[8];
static unsigned char handed_buf[8][4096];
static pthread_barrier_t started;

static void handed_requests(int t)
{
    const int next = (t_rank + 1) % t_size, prev = (t_rank + t_size - 1) % t_size;
    if (t == 0) {
        for (int i = 0; i < 8; ++i)
            MPI_OK(MPI_Irecv(handed_buf[i], 4096, MPI_BYTE, prev, 500 + i, MPI_COMM_WORLD, &handed[i]));
    }
    pthread_barrier_wait(&started);
    if (t == 1) {
        for (int i = 0; i < 8; ++i) {
            if (i % 2 == 0) {
                MPI_OK(MPI_Wait(&handed[i], MPI_STATUS_IGNORE));
            } else {
                int flag = 0;
                while (!flag) MPI_OK(MPI_Test(&handed[i], &flag, MPI_STATUS_IGNORE));
            }
            CHECK_PAT(handed_buf[i], 4096, (uint32_t)prev, 77u, (uint32_t)i, "handed request");
        }
    } else if (t == 2) {
        unsigned char out[4096];
        for (int i = 7; i >= 0; --i) {
            t_fill(out, sizeof out, (uint32_t)t_rank, 77u, (uint32_t)i);
            MPI_OK(MPI_Send(out, sizeof out, MPI_BYTE, next, 500 + i, MPI_COMM_WORLD));
        }
    }
}

/* Wildcard receives: every thread receives one message per other rank from MPI_ANY_SOURCE on
 * its own tag. */
static void wildcards(int t)
{
    const int tag = 900 + t;
    for (int peer = 0; peer < t_size; ++peer) {
        if (peer == t_rank) continue;
        int v[2] = {t_rank, t};
        MPI_Request r;
        MPI_OK(MPI_Isend(v, 2, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Request_free(&r));
    }
    int seen[64] = {0};
    for (int k = 0; k < t_size - 1; ++k) {
        int v[2];
        MPI_Status st;
        MPI_OK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
        CHECK(v[0] == st.MPI_SOURCE && v[1] == t, "wildcard: got (%d,%d) from %d on tag %d", v[0], v[1],
              st.MPI_SOURCE, tag);
        CHECK(!seen[st.MPI_SOURCE], "wildcard: two messages from %d", st.MPI_SOURCE);
        seen[st.MPI_SOURCE] = 1;
    }
}

static void created_group(MPI_Comm comm, int t, int round, const char *what)
{
    int size, sum = -1, want = 0, rank;
    MPI_OK(MPI_Comm_size(comm, &size));
    MPI_OK(MPI_Comm_rank(comm, &rank));
    for (int r = 0; r < size; ++r) want += r + t + round;
    MPI_OK(MPI_Allreduce(&(int){rank + t + round}, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == want, "%s, thread %d round %d: allreduce gave %d, expected %d", what, t, round, sum, want);
    MPI_OK(MPI_Comm_free(&comm));
}

static void group_creation(int t)
{
    MPI_Group world, half;
    int range[1][3] = {{0, t_size / 2, 1}};
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_range_incl(world, 1, range, &half));
    for (int round = 0; round < 20; ++round) {
        MPI_Comm comm;
        if (t_rank <= t_size / 2) {
            MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, half, t, &comm));
            created_group(comm, t, round, "half of the ranks");
        }
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, world, t, &comm));
        created_group(comm, t, round, "all ranks");
    }
    MPI_OK(MPI_Group_free(&half));
    MPI_OK(MPI_Group_free(&world));
}

/* Each rank adds rank + 1 + t + round over an intercommunicator: the result is the remote
 * group's sum. */
static void check_intercomm(MPI_Comm ic, int t, int round, const char *what)
{
    int lower, size, remote_size, sum = -1;
    MPI_Group remote;
    MPI_OK(MPI_Comm_size(ic, &size));
    MPI_OK(MPI_Comm_remote_size(ic, &remote_size));
    MPI_OK(MPI_Comm_remote_group(ic, &remote));
    MPI_OK(MPI_Allreduce(&(int){t_rank + 1 + t + round}, &sum, 1, MPI_INT, MPI_SUM, ic));
    MPI_Group world;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int want = 0;
    for (int r = 0; r < remote_size; ++r) {
        int w = -1;
        MPI_OK(MPI_Group_translate_ranks(remote, 1, &r, world, &w));
        want += w + 1 + t + round;
    }
    CHECK(sum == want, "%s, thread %d round %d: allreduce gave %d, expected %d", what, t, round, sum, want);
    lower = t_rank < t_size / 2;
    CHECK(size == (lower ? t_size / 2 : t_size - t_size / 2), "%s: local size %d", what, size);
    MPI_OK(MPI_Group_free(&remote));
    MPI_OK(MPI_Group_free(&world));
}

static void intercomm_creation(int t)
{
    const int lower = t_rank < t_size / 2;
    for (int round = 0; round < 10; ++round) {
        MPI_Comm half, ic, merged, dup, split;
        MPI_OK(MPI_Comm_split(thread_comm[t], lower, t_rank, &half));
        MPI_OK(MPI_Intercomm_create(half, 0, thread_comm[t], lower ? t_size / 2 : 0, 99, &ic));
        check_intercomm(ic, t, round, "MPI_Intercomm_create");
        MPI_OK(MPI_Intercomm_merge(ic, !lower, &merged));
        int rank = -1;
        MPI_OK(MPI_Comm_rank(merged, &rank));
        CHECK(rank == t_rank, "MPI_Intercomm_merge, thread %d: rank %d, expected %d", t, rank, t_rank);
        created_group(merged, t, round, "MPI_Intercomm_merge");
        MPI_OK(MPI_Comm_dup(ic, &dup));
        check_intercomm(dup, t, round, "MPI_Comm_dup of an intercommunicator");
        MPI_OK(MPI_Comm_split(ic, 0, t_rank, &split));
        check_intercomm(split, t, round, "MPI_Comm_split of an intercommunicator");
        MPI_OK(MPI_Comm_free(&split));
        MPI_OK(MPI_Comm_free(&dup));
        MPI_OK(MPI_Comm_free(&ic));
        MPI_OK(MPI_Comm_free(&half));
    }
}

static void *thread_main(void *arg)
{
    const int t = (int)(intptr_t)arg;
    point_to_point(t);
    collectives(t);
    one_sided(t);
    handed_requests(t);
    wildcards(t);
    group_creation(t);
    intercomm_creation(t);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    t_name = "threads";
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    CHECK_EQ_INT(provided, MPI_THREAD_MULTIPLE, "provided thread level");
    int queried = -1;
    MPI_OK(MPI_Query_thread(&queried));
    CHECK_EQ_INT(queried, MPI_THREAD_MULTIPLE, "MPI_Query_thread");
    CHECK(t_size <= 64, "at most 64 ranks");

    for (int t = 0; t < NTHREADS; ++t) MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm[t]));
    const MPI_Aint win_bytes = (MPI_Aint)sizeof(long long) * (COUNTER + 1);
    MPI_OK(MPI_Win_allocate(win_bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win));
    memset(win_mem, 0, (size_t)win_bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, win));
    pthread_barrier_init(&started, NULL, NTHREADS);

    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; ++t)
        CHECK(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; ++t) pthread_join(th[t], NULL);

    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t_rank, 0, win));
    for (int t = 0; t < NTHREADS; ++t)
        for (int i = 0; i < WIN_SLOTS; ++i) {
            const int origin = i % t_size;
            const long long expect = (long long)origin * 1000000 + t * 1000 + i + t_rank;
            CHECK(win_mem[t * WIN_SLOTS + i] == expect, "window slot %d of thread %d: %lld, expected %lld", i, t,
                  win_mem[t * WIN_SLOTS + i], expect);
        }
    CHECK(win_mem[COUNTER] == 25LL * NTHREADS * t_size, "counter %lld, expected %lld", win_mem[COUNTER],
          25LL * NTHREADS * t_size);
    MPI_OK(MPI_Win_unlock(t_rank, win));
    MPI_OK(MPI_Win_free(&win));
    for (int t = 0; t < NTHREADS; ++t) MPI_OK(MPI_Comm_free(&thread_comm[t]));
    pthread_barrier_destroy(&started);
    t_done();
    return 0;
}
