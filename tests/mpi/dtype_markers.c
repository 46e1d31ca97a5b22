/* MPI-1's bound markers MPI_LB and MPI_UB in a struct: they set the type's lower and upper
 * bounds (the lowest LB, the highest UB; the other entries' own bound where one is missing),
 * carry no data, and make the stride of a contiguous type of it; the bounds may give a negative
 * extent. Data sent with such a type lands at the marked stride on the next rank. The markers
 * keep their names; other constructors still refuse them. */
#include "common.h"

static void check_bounds(MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint extent, MPI_Aint true_lb,
                         MPI_Aint true_extent, const char *what)
{
    int s = -1;
    MPI_Aint l, e, tl, te;
    MPI_OK(MPI_Type_size(t, &s));
    MPI_OK(MPI_Type_get_extent(t, &l, &e));
    MPI_OK(MPI_Type_get_true_extent(t, &tl, &te));
    if (s != size || l != lb || e != extent || tl != true_lb || te != true_extent)
        FAIL("%s: size %d lb %ld extent %ld true lb %ld true extent %ld, expected %d %ld %ld %ld %ld", what, s,
             (long)l, (long)e, (long)tl, (long)te, size, (long)lb, (long)extent, (long)true_lb,
             (long)true_extent);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "dtype_markers");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* { (LB,-3), 4 bytes at 0, (UB,6) }: lb -3, extent 9. */
    int bl3[3] = {1, 4, 1};
    MPI_Aint d3[3] = {-3, 0, 6};
    MPI_Datatype ty3[3] = {MPI_LB, MPI_BYTE, MPI_UB}, marked;
    MPI_OK(MPI_Type_create_struct(3, bl3, d3, ty3, &marked));
    check_bounds(marked, 4, -3, 9, 0, 4, "LB -3, 4 bytes, UB 6");

    /* Bounds reversed: lb 6, extent -9. */
    MPI_Aint r3[3] = {6, 0, -3};
    MPI_Datatype reversed;
    MPI_OK(MPI_Type_create_struct(3, bl3, r3, ty3, &reversed));
    check_bounds(reversed, 4, 6, -9, 0, 4, "LB 6, 4 bytes, UB -3");

    /* Several markers: the lowest LB and the highest UB count. */
    int bl5[5] = {1, 1, 2, 1, 1};
    MPI_Aint d5[5] = {4, -2, 0, 20, 12};
    MPI_Datatype ty5[5] = {MPI_LB, MPI_LB, MPI_INT, MPI_UB, MPI_UB}, several;
    MPI_OK(MPI_Type_create_struct(5, bl5, d5, ty5, &several));
    check_bounds(several, 8, -2, 22, 0, 8, "LB 4 and -2, 2 ints, UB 20 and 12");

    /* Only an LB marker and no data: ub is 0. Only a UB marker: lb is the data's. */
    int one = 1;
    MPI_Aint ten = 10;
    MPI_Datatype lb_type = MPI_LB, only_lb;
    MPI_OK(MPI_Type_create_struct(1, &one, &ten, &lb_type, &only_lb));
    check_bounds(only_lb, 0, 10, -10, 0, 0, "only LB 10");
    int bl2[2] = {1, 1};
    MPI_Aint d2[2] = {8, 32};
    MPI_Datatype ty2[2] = {MPI_DOUBLE, MPI_UB}, only_ub;
    MPI_OK(MPI_Type_create_struct(2, bl2, d2, ty2, &only_ub));
    check_bounds(only_ub, 8, 8, 24, 8, 8, "a double at 8, UB 32");

    /* A contiguous type of the marked one strides by its extent (9): 3 elements. */
    MPI_Datatype three;
    MPI_OK(MPI_Type_contiguous(3, marked, &three));
    check_bounds(three, 12, -3, 27, 0, 22, "3 of (LB -3, 4 bytes, UB 6)");
    MPI_OK(MPI_Type_commit(&three));

    unsigned char out[32], in[32];
    for (int i = 0; i < 32; i++) {
        out[i] = (unsigned char)(t_rank * 40 + i);
        in[i] = 0xee;
    }
    const int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    MPI_OK(MPI_Sendrecv(out, 1, three, right, 0, in, 1, three, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 32; i++) {
        const int data = i < 22 && i % 9 < 4; /* bytes 0-3, 9-12, 18-21 */
        const unsigned char expected = data ? (unsigned char)(left * 40 + i) : 0xee;
        if (in[i] != expected) FAIL("byte %d is 0x%x, expected 0x%x", i, in[i], expected);
    }

    /* The markers keep their names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    MPI_OK(MPI_Type_get_name(MPI_LB, name, &len));
    CHECK(strcmp(name, "MPI_LB") == 0 && len == 6, "MPI_LB is named '%s' (%d)", name, len);
    MPI_OK(MPI_Type_get_name(MPI_UB, name, &len));
    CHECK(strcmp(name, "MPI_UB") == 0 && len == 6, "MPI_UB is named '%s' (%d)", name, len);

    /* Other constructors take no marker. */
    MPI_Datatype v;
    int cls = MPI_SUCCESS;
    MPI_Error_class(MPI_Type_contiguous(2, MPI_LB, &v), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_TYPE, "error class of a contiguous type of MPI_LB");

    MPI_OK(MPI_Type_free(&three));
    MPI_OK(MPI_Type_free(&marked));
    MPI_OK(MPI_Type_free(&reversed));
    MPI_OK(MPI_Type_free(&several));
    MPI_OK(MPI_Type_free(&only_lb));
    MPI_OK(MPI_Type_free(&only_ub));
    t_done();
    return 0;
}
