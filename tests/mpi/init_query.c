/* Init_thread and environment queries. Each process requests the thread
 * level given by its rank (mod 4), so a 4-rank run covers every level:
 * provided must be a valid level <= MPI_THREAD_MULTIPLE, Query_thread must
 * agree, Is_thread_main is true. Also Initialized / Finalized before and
 * after, Get_version, Get_library_version, Get_processor_name, Wtime
 * monotone, Wtick > 0. Optional argument: the level to request (0-3). */
#include "common.h"

int main(int argc, char **argv)
{
    static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                 MPI_THREAD_MULTIPLE};
    int flag = -1, provided = -1, q = -1, ver = 0, sub = -1, len = 0, req;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];

    t_name = "init_query";
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
              MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
          "thread level constants are not ordered");
    /* allowed before Init */
    MPI_Initialized(&flag);
    CHECK(flag == 0, "Initialized before Init: %d", flag);
    flag = -1;
    MPI_Finalized(&flag);
    CHECK(flag == 0, "Finalized before Init: %d", flag);
    MPI_Get_version(&ver, &sub);
    CHECK(ver >= 3, "Get_version before Init: %d.%d", ver, sub);

    /* the level comes from the rank the launcher gives us, or argv */
    {
        const char *e = getenv("PMIX_RANK");
        if (!e)
            e = getenv("OMPI_COMM_WORLD_RANK");
        if (!e)
            e = getenv("PMI_RANK");
        req = e ? atoi(e) % 4 : 3;
        if (argc > 1)
            req = atoi(argv[1]) % 4;
    }
    MPI_Init_thread(&argc, &argv, levels[req], &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);

    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
              provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
          "provided %d is not a thread level", provided);
    CHECK(provided <= MPI_THREAD_MULTIPLE, "provided %d > MPI_THREAD_MULTIPLE", provided);
    MPI_OK(MPI_Query_thread(&q));
    CHECK_EQ_INT(q, provided, "Query_thread vs provided");
    flag = 0;
    MPI_OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "Is_thread_main false on the thread that called Init_thread");
    flag = 0;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag, "Initialized false after Init_thread");
    flag = -1;
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag == 0, "Finalized true before Finalize");

    ver = sub = -1;
    MPI_OK(MPI_Get_version(&ver, &sub));
    CHECK(ver == MPI_VERSION && sub == MPI_SUBVERSION, "Get_version %d.%d, mpi.h says %d.%d", ver,
          sub, MPI_VERSION, MPI_SUBVERSION);
    lib[0] = 0;
    MPI_OK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && lib[0] != 0,
          "Get_library_version: len %d", len);
    if (strncmp(lib, "weft", 4) == 0) {  /* weft implements MPI 4.0 and says so everywhere */
        CHECK(ver == 4 && sub == 0, "weft reports MPI %d.%d, expected 4.0", ver, sub);
        CHECK(strstr(lib, "(MPI 4.0,") != NULL, "library version '%s' does not name MPI 4.0", lib);
    }
    {
        char name[MPI_MAX_PROCESSOR_NAME];
        name[0] = 0;
        MPI_OK(MPI_Get_processor_name(name, &len));
        CHECK(len > 0 && (int)strlen(name) == len, "Get_processor_name '%s' len %d", name, len);
    }

    {
        double tick = MPI_Wtick(), prev = MPI_Wtime(), start = prev;
        CHECK(tick > 0.0 && tick < 1.0, "Wtick %g", tick);
        for (int i = 0; i < 100000; i++) {
            double now = MPI_Wtime();
            if (now < prev)
                FAIL("Wtime went backwards: %.9f then %.9f", prev, now);
            prev = now;
        }
        /* and it advances */
        while (MPI_Wtime() - start < 0.01) {
            if (MPI_Wtime() - start > 5.0)
                break;
        }
        CHECK(MPI_Wtime() - start >= 0.01, "Wtime does not advance");
    }

    if (t_rank == 0)
        fprintf(stderr, "init_query: %s (MPI %d.%d); rank 0 requested %d, provided %d\n", lib, ver,
                sub, levels[req], provided);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("init_query: OK (np %d)\n", t_size);
    MPI_OK(MPI_Finalize());
    flag = 0;
    MPI_Finalized(&flag);
    CHECK(flag, "Finalized false after Finalize");
    flag = 0;
    MPI_Initialized(&flag);
    CHECK(flag, "Initialized false after Finalize (it stays true)");
    return 0;
}
