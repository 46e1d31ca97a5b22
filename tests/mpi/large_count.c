/*
 * The large-count (MPI-4 _c) routines: each agrees with its int form on counts that fit (data
 * checked), and a count beyond what weft's engines take is MPI_ERR_COUNT, never cut short.
 * Point-to-point (all modes, persistent, probe and matched receive), collectives (blocking,
 * non-blocking, persistent; v and w forms with MPI_Aint displacements), datatype constructors
 * and queries, packing, user operations with an MPI_Count length, and Get_count_c.
 */
#include <limits.h>

#include "common.h"

#define N 64

static void expect_class(int rc, int cls, const char *what)
{
    int got = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    CHECK_EQ_INT(got, cls, what);
}

static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void pt2pt(void)
{
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    int out[N], in[N];
    for (int i = 0; i < N; i++)
        out[i] = t_rank * 1000 + i;
    MPI_Request rq[2];
    MPI_Status st;
    /* Each send mode's _c form, received by Irecv_c / Recv_c. */
    for (int mode = 0; mode < 4; mode++) {
        memset(in, 0xff, sizeof in);
        MPI_OK(MPI_Irecv_c(in, N, MPI_INT, left, mode, MPI_COMM_WORLD, &rq[0]));
        switch (mode) {
            case 0: MPI_OK(MPI_Isend_c(out, N, MPI_INT, right, mode, MPI_COMM_WORLD, &rq[1])); break;
            case 1: MPI_OK(MPI_Issend_c(out, N, MPI_INT, right, mode, MPI_COMM_WORLD, &rq[1])); break;
            case 2: MPI_OK(MPI_Send_init_c(out, N, MPI_INT, right, mode, MPI_COMM_WORLD, &rq[1]));
                    MPI_OK(MPI_Start(&rq[1])); break;
            default: MPI_OK(MPI_Ssend_init_c(out, N, MPI_INT, right, mode, MPI_COMM_WORLD, &rq[1]));
                     MPI_OK(MPI_Start(&rq[1])); break;
        }
        MPI_OK(MPI_Wait(&rq[0], &st));
        MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        if (mode >= 2)
            MPI_OK(MPI_Request_free(&rq[1]));
        MPI_Count count = -1;
        MPI_OK(MPI_Get_count_c(&st, MPI_INT, &count));
        CHECK_EQ_INT(count, N, "Get_count_c");
        MPI_OK(MPI_Get_elements_c(&st, MPI_INT, &count));
        CHECK_EQ_INT(count, N, "Get_elements_c");
        for (int i = 0; i < N; i++)
            CHECK(in[i] == left * 1000 + i, "mode %d element %d: got %d", mode, i, in[i]);
    }
    /* Blocking Send_c / Recv_c and Sendrecv_c, Sendrecv_replace_c. */
    if (t_size > 1) {
        if (t_rank % 2 == 0) {
            MPI_OK(MPI_Send_c(out, N, MPI_INT, right, 9, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv_c(in, N, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Recv_c(in, N, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Send_c(out, N, MPI_INT, right, 9, MPI_COMM_WORLD));
        }
        CHECK(in[N - 1] == left * 1000 + N - 1, "Send_c/Recv_c data");
    }
    MPI_OK(MPI_Sendrecv_c(out, N, MPI_INT, right, 3, in, N, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[5] == left * 1000 + 5, "Sendrecv_c data");
    memcpy(in, out, sizeof in);
    MPI_OK(MPI_Sendrecv_replace_c(in, N, MPI_INT, right, 4, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[7] == left * 1000 + 7, "Sendrecv_replace_c data");
    /* Matched receive. */
    MPI_OK(MPI_Isend(out, N, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[1]));
    MPI_Message msg;
    MPI_OK(MPI_Mprobe(left, 5, MPI_COMM_WORLD, &msg, &st));
    MPI_OK(MPI_Mrecv_c(in, N, MPI_INT, &msg, &st));
    MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    CHECK(in[N - 1] == left * 1000 + N - 1, "Mrecv_c data");
    /* A count too large for an int travels in the _c forms: only its negative form is an error. */
    expect_class(MPI_Send_c(out, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "negative Send_c count");
}

static void collectives(void)
{
    int send[N * 8], recv[N * 8];
    const int p = t_size;
    for (int i = 0; i < N; i++)
        send[i] = t_rank + i;
    MPI_OK(MPI_Allreduce_c(send, recv, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(recv[i], p * (p - 1) / 2 + p * i, "Allreduce_c");
    /* Bcast_c, non-blocking and persistent. */
    MPI_Request rq;
    for (int i = 0; i < N; i++)
        recv[i] = t_rank == 0 ? 7 * i : -1;
    MPI_OK(MPI_Ibcast_c(recv, N, MPI_INT, 0, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_EQ_INT(recv[N - 1], 7 * (N - 1), "Ibcast_c");
    MPI_OK(MPI_Reduce_init_c(send, recv, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
    MPI_OK(MPI_Start(&rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Request_free(&rq));
    if (t_rank == 0)
        CHECK_EQ_INT(recv[3], p - 1 + 3, "Reduce_init_c");
    /* Alltoallv_c with MPI_Count counts and MPI_Aint displacements: rank r gets (r + 1) ints
     * from each, placed in reverse order of the senders. */
    MPI_Count scounts[8], rcounts[8];
    MPI_Aint sdispls[8], rdispls[8];
    for (int q = 0; q < p; q++) {
        scounts[q] = q + 1;
        sdispls[q] = 0;
        rcounts[q] = t_rank + 1;
        rdispls[q] = (MPI_Aint)(p - 1 - q) * (t_rank + 1);
    }
    for (int i = 0; i < N; i++)
        send[i] = t_rank * 100 + i;
    MPI_OK(MPI_Alltoallv_c(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0; q < p; q++)
        for (int i = 0; i <= t_rank; i++)
            CHECK_EQ_INT(recv[(p - 1 - q) * (t_rank + 1) + i], q * 100 + i, "Alltoallv_c");
    /* Allgatherv_c, non-blocking. */
    MPI_Count counts[8];
    MPI_Aint displs[8];
    for (int q = 0; q < p; q++) {
        counts[q] = 2;
        displs[q] = 2 * (p - 1 - q);
    }
    send[0] = t_rank;
    send[1] = -t_rank;
    MPI_OK(MPI_Iallgatherv_c(send, 2, MPI_INT, recv, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int q = 0; q < p; q++) {
        CHECK_EQ_INT(recv[2 * (p - 1 - q)], q, "Iallgatherv_c");
        CHECK_EQ_INT(recv[2 * (p - 1 - q) + 1], -q, "Iallgatherv_c");
    }
    /* Alltoallw_c: MPI_Aint byte displacements. */
    MPI_Datatype types[8];
    for (int q = 0; q < p; q++) {
        counts[q] = 1;
        displs[q] = (MPI_Aint)(q * sizeof(int));
        types[q] = MPI_INT;
        send[q] = t_rank * 10 + q;
    }
    MPI_OK(MPI_Alltoallw_c(send, counts, displs, types, recv, counts, displs, types, MPI_COMM_WORLD));
    for (int q = 0; q < p; q++)
        CHECK_EQ_INT(recv[q], q * 10 + t_rank, "Alltoallw_c");
    /* Reduce_scatter_c with a user operation that takes an MPI_Count length. */
    MPI_Op op;
    MPI_OK(MPI_Op_create_c(sum_c, 1, &op));
    for (int q = 0; q < p; q++) {
        counts[q] = 2;
        send[2 * q] = q;
        send[2 * q + 1] = t_rank;
    }
    MPI_OK(MPI_Reduce_scatter_c(send, recv, counts, MPI_INT, op, MPI_COMM_WORLD));
    CHECK_EQ_INT(recv[0], p * t_rank, "Reduce_scatter_c with Op_create_c");
    CHECK_EQ_INT(recv[1], p * (p - 1) / 2, "Reduce_scatter_c with Op_create_c");
    int local[4] = {1, 2, 3, 4}, acc[4] = {10, 20, 30, 40};
    MPI_OK(MPI_Reduce_local_c(local, acc, 4, MPI_INT, op));
    CHECK_EQ_INT(acc[3], 44, "Reduce_local_c");
    MPI_OK(MPI_Op_free(&op));
    /* A count beyond what the collectives take: MPI_ERR_COUNT, at every rank, nothing sent. */
    expect_class(MPI_Bcast_c(recv, (MPI_Count)INT_MAX + 1, MPI_BYTE, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
                 "oversized Bcast_c");
    for (int q = 0; q < p; q++)
        counts[q] = (MPI_Count)INT_MAX + 1;
    expect_class(MPI_Allgatherv_c(send, 0, MPI_INT, recv, counts, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
                 "oversized Allgatherv_c counts");
}

static void datatypes(void)
{
    MPI_Datatype a, b;
    MPI_Count size, lb, extent;
    MPI_OK(MPI_Type_vector_c(3, 2, 4, MPI_INT, &a));
    MPI_OK(MPI_Type_size_c(a, &size));
    CHECK_EQ_INT(size, 6 * sizeof(int), "Type_vector_c size");
    MPI_OK(MPI_Type_get_extent_c(a, &lb, &extent));
    CHECK_EQ_INT(extent, 10 * sizeof(int), "Type_vector_c extent");
    MPI_OK(MPI_Type_free(&a));
    MPI_Count bl[2] = {1, 2}, di[2] = {4, 0};
    MPI_OK(MPI_Type_indexed_c(2, bl, di, MPI_INT, &a));
    MPI_OK(MPI_Type_get_true_extent_c(a, &lb, &extent));
    CHECK_EQ_INT(lb, 0, "Type_indexed_c true lb");
    CHECK_EQ_INT(extent, 5 * sizeof(int), "Type_indexed_c true extent");
    MPI_OK(MPI_Type_free(&a));
    MPI_Count bdi[2] = {8, 0};
    MPI_Datatype ts[2] = {MPI_INT, MPI_CHAR};
    MPI_OK(MPI_Type_create_struct_c(2, bl, bdi, ts, &a));
    MPI_OK(MPI_Type_size_c(a, &size));
    CHECK_EQ_INT(size, sizeof(int) + 2, "Type_create_struct_c size");
    MPI_OK(MPI_Type_create_resized_c(a, 0, 16, &b));
    MPI_OK(MPI_Type_get_extent_c(b, &lb, &extent));
    CHECK_EQ_INT(extent, 16, "Type_create_resized_c extent");
    MPI_OK(MPI_Type_free(&a));
    MPI_OK(MPI_Type_free(&b));
    MPI_Count sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
    MPI_OK(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &a));
    MPI_OK(MPI_Type_commit(&a));
    /* Pack_c / Unpack_c of the subarray. */
    int grid[24], back[24], packed[6];
    for (int i = 0; i < 24; i++)
        grid[i] = i;
    MPI_Count pos = 0, psize;
    MPI_OK(MPI_Pack_size_c(1, a, MPI_COMM_WORLD, &psize));
    CHECK_EQ_INT(psize, 6 * sizeof(int), "Pack_size_c");
    MPI_OK(MPI_Pack_c(grid, 1, a, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK_EQ_INT(pos, sizeof packed, "Pack_c position");
    CHECK_EQ_INT(packed[0], 8, "Pack_c first");
    CHECK_EQ_INT(packed[5], 16, "Pack_c last");
    memset(back, 0, sizeof back);
    pos = 0;
    MPI_OK(MPI_Unpack_c(packed, sizeof packed, &pos, back, 1, a, MPI_COMM_WORLD));
    CHECK_EQ_INT(back[14], 14, "Unpack_c");
    CHECK_EQ_INT(back[13], 0, "Unpack_c leaves the rest");
    MPI_OK(MPI_Type_free(&a));
    /* A contiguous type larger than an int counts: its size only in the _c and _x queries. */
    const MPI_Count big = (MPI_Count)3 << 30;
    MPI_OK(MPI_Type_contiguous_c(big, MPI_CHAR, &a));
    MPI_OK(MPI_Type_size_c(a, &size));
    CHECK_EQ_INT(size, big, "Type_contiguous_c size beyond an int");
    int isize = 0;
    MPI_OK(MPI_Type_size(a, &isize));
    CHECK_EQ_INT(isize, MPI_UNDEFINED, "Type_size of a type beyond an int");
    MPI_OK(MPI_Type_free(&a));
    /* An h-indexed type whose last block is longer than an int counts. */
    MPI_Count hbl[3] = {1, 2, big}, hdi[3] = {0, 1, 3};
    MPI_OK(MPI_Type_create_hindexed_c(3, hbl, hdi, MPI_CHAR, &a));
    MPI_OK(MPI_Type_commit(&a));
    MPI_OK(MPI_Type_size_c(a, &size));
    CHECK_EQ_INT(size, big + 3, "Type_create_hindexed_c size beyond an int");
    MPI_OK(MPI_Type_get_true_extent_c(a, &lb, &extent));
    CHECK_EQ_INT(lb, 0, "Type_create_hindexed_c true lb");
    CHECK_EQ_INT(extent, big + 3, "Type_create_hindexed_c true extent");
    MPI_OK(MPI_Type_free(&a));
    MPI_Count negative[1] = {-1}, zero[1] = {0};
    expect_class(MPI_Type_create_hindexed_c(1, negative, zero, MPI_CHAR, &a), MPI_ERR_ARG,
                 "Type_create_hindexed_c with a negative block length");
    /* Beyond what a vector constructor takes. */
    expect_class(MPI_Type_vector_c((MPI_Count)INT_MAX + 1, 1, 1, MPI_INT, &a), MPI_ERR_COUNT,
                 "oversized Type_vector_c");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "large_count");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (t_size > 8) {
        t_done();
        return 0;
    }
    pt2pt();
    collectives();
    datatypes();
    t_done();
    return 0;
}
