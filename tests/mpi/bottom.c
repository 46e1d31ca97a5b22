/* MPI_BOTTOM and absolute addresses, and empty messages without a datatype:
 *   - MPI_Pack / MPI_Unpack of a struct type of absolute addresses from / to MPI_BOTTOM;
 *   - MPI_Neighbor_alltoallw (blocking and non-blocking) on MPI_BOTTOM with absolute byte
 *     displacements, on a ring;
 *   - MPI_Recv / MPI_Irecv / MPI_Send of count 0 with MPI_DATATYPE_NULL (MPI_PROC_NULL and a
 *     real peer), while a count of 1 with MPI_DATATYPE_NULL stays MPI_ERR_TYPE. */
#include "common.h"

static void pack_bottom(void)
{
    struct {
        double d;
        int i[3];
        char c;
    } in = {3.25 + t_rank, {t_rank, -7, 1 << 20}, 'q'}, out;
    memset(&out, 0, sizeof out);
    int blocks[3] = {1, 3, 1};
    MPI_Aint addr[3];
    MPI_Datatype types[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR}, tin, tout;
    MPI_OK(MPI_Get_address(&in.d, &addr[0]));
    MPI_OK(MPI_Get_address(&in.i, &addr[1]));
    MPI_OK(MPI_Get_address(&in.c, &addr[2]));
    MPI_OK(MPI_Type_create_struct(3, blocks, addr, types, &tin));
    MPI_OK(MPI_Type_commit(&tin));
    MPI_OK(MPI_Get_address(&out.d, &addr[0]));
    MPI_OK(MPI_Get_address(&out.i, &addr[1]));
    MPI_OK(MPI_Get_address(&out.c, &addr[2]));
    MPI_OK(MPI_Type_create_struct(3, blocks, addr, types, &tout));
    MPI_OK(MPI_Type_commit(&tout));

    int size = 0, pos = 0;
    MPI_OK(MPI_Pack_size(1, tin, MPI_COMM_WORLD, &size));
    CHECK_EQ_INT(size, (int)(sizeof(double) + 3 * sizeof(int) + 1), "packed size");
    char packed[64];
    MPI_OK(MPI_Pack(MPI_BOTTOM, 1, tin, packed, (int)sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK_EQ_INT(pos, size, "position after MPI_Pack");
    pos = 0;
    MPI_OK(MPI_Unpack(packed, size, &pos, MPI_BOTTOM, 1, tout, MPI_COMM_WORLD));
    CHECK_EQ_INT(pos, size, "position after MPI_Unpack");
    CHECK(out.d == in.d && out.i[0] == in.i[0] && out.i[1] == in.i[1] && out.i[2] == in.i[2] && out.c == 'q',
          "unpacked through MPI_BOTTOM: %g %d %d %d %c", out.d, out.i[0], out.i[1], out.i[2], out.c);

    /* A predefined type has no absolute addresses: MPI_BOTTOM is a NULL buffer there. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls = -1;
    pos = 0;
    int rc = MPI_Pack(MPI_BOTTOM, 2, MPI_INT, packed, (int)sizeof packed, &pos, MPI_COMM_WORLD);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK_EQ_INT(cls, MPI_ERR_BUFFER, "MPI_Pack of MPI_INT from MPI_BOTTOM");
    pos = 0;
    rc = MPI_Pack(&in, 1, tin, NULL, 64, &pos, MPI_COMM_WORLD);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK_EQ_INT(cls, MPI_ERR_BUFFER, "MPI_Pack into a NULL outbuf");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_OK(MPI_Type_free(&tin));
    MPI_OK(MPI_Type_free(&tout));
}

static void neighbor_bottom(void)
{
    MPI_Comm ring;
    int dims = t_size, periods = 1;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring));
    int me, left, right;
    MPI_OK(MPI_Comm_rank(ring, &me));
    MPI_OK(MPI_Cart_shift(ring, 0, 1, &left, &right));
    /* Neighbours in order: source -1 (left), then +1 (right); the same for destinations. */
    for (int form = 0; form < 2; form++) {
        int sendl[4], sendr[2], recvl[4] = {-1, -1, -1, -1}, recvr[2] = {-1, -1};
        for (int i = 0; i < 4; i++)
            sendl[i] = me * 100 + i;
        sendr[0] = me * 100 + 50;
        sendr[1] = me * 100 + 51;
        int counts[2] = {4, 2};
        MPI_Aint sd[2], rd[2];
        MPI_Datatype types[2] = {MPI_INT, MPI_INT};
        MPI_OK(MPI_Get_address(sendl, &sd[0]));
        MPI_OK(MPI_Get_address(sendr, &sd[1]));
        /* What the right neighbour sends to its left (4 ints) arrives from the right; what the
         * left one sends to its right (2 ints) from the left. */
        MPI_OK(MPI_Get_address(recvr, &rd[0]));
        MPI_OK(MPI_Get_address(recvl, &rd[1]));
        int rcounts[2] = {2, 4};
        if (form == 0) {
            MPI_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, sd, types, MPI_BOTTOM, rcounts, rd, types, ring));
        } else {
            MPI_Request req;
            MPI_OK(MPI_Ineighbor_alltoallw(MPI_BOTTOM, counts, sd, types, MPI_BOTTOM, rcounts, rd, types, ring,
                                           &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        if (t_size == 1) {
            /* One rank is its own left and right neighbour. */
            left = right = me;
        }
        CHECK(recvr[0] == left * 100 + 50 && recvr[1] == left * 100 + 51, "form %d: from the left %d %d", form,
              recvr[0], recvr[1]);
        for (int i = 0; i < 4; i++)
            CHECK_EQ_INT(recvl[i], right * 100 + i, "from the right");
    }
    MPI_OK(MPI_Comm_free(&ring));
}

static void empty_without_type(void)
{
    MPI_Status st;
    MPI_Request req;
    MPI_OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Waitall(1, &req, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Irecv from MPI_PROC_NULL: %d %d",
          st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Recv from MPI_PROC_NULL");

    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    int count = -1;
    MPI_OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, left, 11, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, right, 11, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 11, "empty message: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_EQ_INT(count, 0, "count of an empty message");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf = 0, cls = -1;
    int rc = MPI_Send(&buf, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK_EQ_INT(cls, MPI_ERR_TYPE, "MPI_Send of one MPI_DATATYPE_NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "bottom");
    pack_bottom();
    neighbor_bottom();
    empty_without_type();
    t_done();
    return 0;
}
