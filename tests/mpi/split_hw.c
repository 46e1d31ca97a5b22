/* MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED: "mpi_shared_memory" and "Machine" give the
 * node (the same ranks as MPI_COMM_TYPE_SHARED); a resource the binding spans several of gives
 * MPI_COMM_NULL; so do an unknown resource name and a missing key. Every resulting communicator
 * is checked by an allreduce over its members' world ranks. MPI_COMM_TYPE_HW_UNGUIDED gives a
 * communicator smaller than MPI_COMM_WORLD whose members all name the same level in the info
 * (mpi_hw_resource_type), or MPI_COMM_NULL everywhere (always so on one rank). */
#define _GNU_SOURCE
#include <sched.h>

#include "common.h"

/* The communicator for resource `type` (NULL: no info key). */
static MPI_Comm split(const char *type)
{
    MPI_Info info = MPI_INFO_NULL;
    if (type) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_hw_resource_type", type);
    }
    MPI_Comm out;
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, t_rank, info, &out) == MPI_SUCCESS,
          "split_type %s failed", type ? type : "(no key)");
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    return out;
}

/* The members of c, identified by world rank: the sum over them, the same at every member. */
static long members_sum(MPI_Comm c)
{
    long mine = t_rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, c);
    return sum;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "split_hw");
    MPI_Comm shared;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank, MPI_INFO_NULL, &shared);
    int shared_size;
    MPI_Comm_size(shared, &shared_size);
    const long shared_sum = members_sum(shared);

    const char *node_types[] = {"mpi_shared_memory", "Machine"};
    for (int i = 0; i < 2; ++i) {
        MPI_Comm c = split(node_types[i]);
        CHECK(c != MPI_COMM_NULL, "%s gave MPI_COMM_NULL", node_types[i]);
        int size;
        MPI_Comm_size(c, &size);
        CHECK(size == shared_size, "%s: %d ranks, the node has %d", node_types[i], size, shared_size);
        CHECK(members_sum(c) == shared_sum, "%s: other members than the node's", node_types[i]);
        MPI_Comm_free(&c);
    }
    MPI_Comm none = split(NULL);
    CHECK(none == MPI_COMM_NULL, "no mpi_hw_resource_type key should give MPI_COMM_NULL");
    MPI_Comm bogus = split("no_such_resource");
    CHECK(bogus == MPI_COMM_NULL, "an unknown resource should give MPI_COMM_NULL");

    /* A PU: only a process bound to a single one gets a communicator, shared with the ranks
     * bound to the same PU. */
    cpu_set_t mask;
    CPU_ZERO(&mask);
    CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0, "sched_getaffinity");
    MPI_Comm pu = split("PU");
    if (CPU_COUNT(&mask) > 1) {
        CHECK(pu == MPI_COMM_NULL, "bound to %d cpus, yet a PU communicator", CPU_COUNT(&mask));
    } else {
        CHECK(pu != MPI_COMM_NULL, "bound to one cpu, yet no PU communicator");
        int cpu = -1;
        for (int i = 0; i < CPU_SETSIZE && cpu < 0; ++i)
            if (CPU_ISSET(i, &mask)) cpu = i;
        int lo = cpu, hi = cpu;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, pu);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, pu);
        CHECK(lo == cpu && hi == cpu, "members of the PU communicator run on cpus %d-%d", lo, hi);
        MPI_Comm_free(&pu);
    }
    /* Unguided: a strict subset, the level named in the info, the same at every member. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Comm unguided;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, t_rank, info, &unguided));
    int got = unguided != MPI_COMM_NULL, all_got = 0, any_got = 0;
    MPI_Allreduce(&got, &all_got, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&got, &any_got, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(all_got == any_got, "HW_UNGUIDED: a communicator on some ranks only");
    if (t_size == 1) CHECK(!got, "HW_UNGUIDED on one rank: no strict subset, yet a communicator");
    if (got) {
        int size = 0, flag = 0;
        char level[MPI_MAX_INFO_VAL + 1] = "";
        MPI_Comm_size(unguided, &size);
        CHECK(size < t_size, "HW_UNGUIDED: %d ranks of %d, not a strict subset", size, t_size);
        MPI_OK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, level, &flag));
        CHECK(flag && level[0], "HW_UNGUIDED: no mpi_hw_resource_type in the info");
        /* Every member names the same level: the first character and length agree. */
        int sig[2] = {level[0], (int)strlen(level)}, lo[2], hi[2];
        MPI_Allreduce(sig, lo, 2, MPI_INT, MPI_MIN, unguided);
        MPI_Allreduce(sig, hi, 2, MPI_INT, MPI_MAX, unguided);
        CHECK(lo[0] == hi[0] && lo[1] == hi[1], "HW_UNGUIDED: members name different levels");
        MPI_Comm_free(&unguided);
    }
    MPI_Info_free(&info);
    MPI_Comm_free(&shared);
    t_done();
    return 0;
}
