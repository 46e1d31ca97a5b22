/* Singleton start: run WITHOUT a launcher. The job must be one process:
 * size 1 and rank 0 in MPI_COMM_WORLD and MPI_COMM_SELF, self messages
 * through Isend/Irecv and Send/Recv work, Get_processor_name is non-empty. */
#include "common.h"

#define N 100000

int main(int argc, char **argv)
{
    int flag = 0, len = 0, srank = -1, ssize = -1;
    char name[MPI_MAX_PROCESSOR_NAME];
    t_init(&argc, &argv, "singleton");
    CHECK_EQ_INT(t_size, 1, "MPI_COMM_WORLD size in a singleton");
    CHECK_EQ_INT(t_rank, 0, "MPI_COMM_WORLD rank in a singleton");
    MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &srank));
    MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &ssize));
    CHECK(srank == 0 && ssize == 1, "MPI_COMM_SELF rank %d size %d", srank, ssize);
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag, "Initialized false after Init");

    name[0] = 0;
    MPI_OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && name[0] != 0 && (int)strlen(name) == len && len < MPI_MAX_PROCESSOR_NAME,
          "Get_processor_name: '%s' (len %d)", name, len);

    unsigned char *sb = malloc(N), *rb = malloc(N + 16);
    CHECK(sb && rb, "out of memory");
    static const int sizes[] = {0, 1, 1000, N};
    for (int comm_i = 0; comm_i < 2; comm_i++) {
        MPI_Comm comm = comm_i ? MPI_COMM_SELF : MPI_COMM_WORLD;
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            MPI_Request rq[2];
            MPI_Status st[2];
            int cnt = -1, n = sizes[k];
            t_fill(sb, (size_t)n, (uint32_t)comm_i, (uint32_t)k, 5);
            memset(rb, 0xEE, N + 16);
            /* send first, then receive: the self path must buffer or match late */
            MPI_OK(MPI_Isend(sb, n, MPI_BYTE, 0, (int)k, comm, &rq[0]));
            MPI_OK(MPI_Irecv(rb, N, MPI_BYTE, 0, (int)k, comm, &rq[1]));
            MPI_OK(MPI_Waitall(2, rq, st));
            MPI_Get_count(&st[1], MPI_BYTE, &cnt);
            CHECK_EQ_INT(cnt, n, "self message count");
            CHECK_EQ_INT(st[1].MPI_SOURCE, 0, "self message source");
            CHECK_EQ_INT(st[1].MPI_TAG, (int)k, "self message tag");
            CHECK_PAT(rb, n, (uint32_t)comm_i, (uint32_t)k, 5, comm_i ? "self message (COMM_SELF)"
                                                                       : "self message (COMM_WORLD)");
            CHECK(rb[n] == 0xEE, "self message wrote past its end");
        }
        /* blocking Sendrecv to self */
        {
            int out = 4242 + comm_i, in = 0;
            MPI_Status st;
            MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 99, &in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                comm, &st));
            CHECK_EQ_INT(in, 4242 + comm_i, "self Sendrecv value");
            CHECK_EQ_INT(st.MPI_SOURCE, 0, "self Sendrecv source");
        }
    }
    /* messages on COMM_SELF and COMM_WORLD do not mix */
    {
        int a = 1, b = 2, x = 0;
        MPI_Request r[2];
        MPI_OK(MPI_Isend(&a, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Isend(&b, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &r[1]));
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        CHECK_EQ_INT(x, 2, "COMM_SELF message");
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_EQ_INT(x, 1, "COMM_WORLD message");
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    }
    free(sb);
    free(rb);
    t_done();
    return 0;
}
