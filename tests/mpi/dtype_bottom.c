/* MPI_Pack and MPI_Unpack from and to MPI_BOTTOM under a struct of absolute addresses, the
 * packed bytes sent to the next rank and unpacked there; NULL buffers that stay errors. */
#include "common.h"

struct record {
    int id;
    double value;
    char tag[5];
};

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "dtype_bottom");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* A struct type over one record's fields at their absolute addresses. */
    struct record mine = {t_rank + 7, 1.5 * t_rank, "abcd"}, theirs = {-1, -1.0, "zzzz"};
    int blocks[3] = {1, 1, 5};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Aint at[3], back[3];
    MPI_Datatype out_type, in_type;
    MPI_OK(MPI_Get_address(&mine.id, &at[0]));
    MPI_OK(MPI_Get_address(&mine.value, &at[1]));
    MPI_OK(MPI_Get_address(mine.tag, &at[2]));
    MPI_OK(MPI_Get_address(&theirs.id, &back[0]));
    MPI_OK(MPI_Get_address(&theirs.value, &back[1]));
    MPI_OK(MPI_Get_address(theirs.tag, &back[2]));
    MPI_OK(MPI_Type_create_struct(3, blocks, at, types, &out_type));
    MPI_OK(MPI_Type_create_struct(3, blocks, back, types, &in_type));
    MPI_OK(MPI_Type_commit(&out_type));
    MPI_OK(MPI_Type_commit(&in_type));

    int size = 0, position = 0;
    MPI_OK(MPI_Pack_size(1, out_type, MPI_COMM_WORLD, &size));
    char *packed = malloc((size_t)size), *received = malloc((size_t)size);
    MPI_OK(MPI_Pack(MPI_BOTTOM, 1, out_type, packed, size, &position, MPI_COMM_WORLD));
    CHECK_EQ_INT(position, (int)(sizeof(int) + sizeof(double) + 5), "packed bytes");

    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    MPI_OK(MPI_Sendrecv(packed, position, MPI_PACKED, right, 0, received, size, MPI_PACKED, left, 0,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    position = 0;
    MPI_OK(MPI_Unpack(received, size, &position, MPI_BOTTOM, 1, in_type, MPI_COMM_WORLD));
    CHECK_EQ_INT(theirs.id, left + 7, "unpacked id");
    CHECK(theirs.value == 1.5 * left, "unpacked value %g, expected %g", theirs.value, 1.5 * left);
    CHECK(memcmp(theirs.tag, "abcd", 5) == 0, "unpacked tag '%.4s'", theirs.tag);

    /* A predefined type still needs a buffer. */
    int cls = MPI_SUCCESS;
    position = 0;
    MPI_Error_class(MPI_Pack(NULL, 1, MPI_INT, packed, size, &position, MPI_COMM_WORLD), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_BUFFER, "error class of MPI_Pack of 1 MPI_INT from NULL");
    position = 0;
    MPI_Error_class(MPI_Pack(MPI_BOTTOM, 1, out_type, NULL, size, &position, MPI_COMM_WORLD), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_BUFFER, "error class of MPI_Pack into NULL");
    free(packed);
    free(received);
    MPI_OK(MPI_Type_free(&out_type));
    MPI_OK(MPI_Type_free(&in_type));
    t_done();
    return 0;
}
