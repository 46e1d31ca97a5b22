/*
 * MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size ("external32": big-endian,
 * long in 4 bytes, long double as a 16-byte quad), with a derived type of mixed basic types; and
 * the small MPI-4 pieces beside them: MPI_Status_c2f/f2c, the Fortran 90 parameterised types,
 * MPI_Comm_idup_with_info and the MPICH version macros.
 */
#include <stddef.h>

#include "common.h"

static void check_bytes(const unsigned char *got, const unsigned char *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: byte %d is 0x%02x, expected 0x%02x", what, i, got[i], want[i]);
}

static void basic_types(void)
{
    unsigned char buf[64];
    MPI_Aint pos = 0, size = 0;
    int ints[2] = {1, -2};
    const unsigned char int_be[8] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
    MPI_OK(MPI_Pack_external_size("external32", 2, MPI_INT, &size));
    CHECK_EQ_INT(size, 8, "external32 size of 2 MPI_INT");
    MPI_OK(MPI_Pack_external("external32", ints, 2, MPI_INT, buf, sizeof buf, &pos));
    CHECK_EQ_INT(pos, 8, "position after 2 MPI_INT");
    check_bytes(buf, int_be, 8, "MPI_INT");

    long longs[2] = {1, -2}, back[2] = {0, 0};
    MPI_OK(MPI_Pack_external_size("external32", 2, MPI_LONG, &size));
    CHECK_EQ_INT(size, 8, "external32 size of 2 MPI_LONG (4 bytes each)");
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", longs, 2, MPI_LONG, buf, sizeof buf, &pos));
    check_bytes(buf, int_be, 8, "MPI_LONG");
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", buf, 8, &pos, back, 2, MPI_LONG));
    CHECK(back[0] == 1 && back[1] == -2, "MPI_LONG unpacked to %ld %ld", back[0], back[1]);

    float floats[2] = {1.0f, 2.0f};
    const unsigned char float_be[8] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", floats, 2, MPI_FLOAT, buf, sizeof buf, &pos));
    check_bytes(buf, float_be, 8, "MPI_FLOAT");

    long double ld[2] = {1.0L, 2.0L}, ldback[2] = {0, 0};
    unsigned char ld_be[32] = {0};
    ld_be[0] = 0x3f;
    ld_be[1] = 0xff;
    ld_be[16] = 0x40;
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", ld, 2, MPI_LONG_DOUBLE, buf, sizeof buf, &pos));
    CHECK_EQ_INT(pos, 32, "position after 2 MPI_LONG_DOUBLE");
    check_bytes(buf, ld_be, 32, "MPI_LONG_DOUBLE");
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", buf, 32, &pos, ldback, 2, MPI_LONG_DOUBLE));
    CHECK(ldback[0] == 1.0L && ldback[1] == 2.0L, "MPI_LONG_DOUBLE round trip");

    /* Too small a buffer, and an unknown representation. */
    pos = 0;
    int rc = MPI_Pack_external("external32", ints, 2, MPI_INT, buf, 7, &pos);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK_EQ_INT(cls, MPI_ERR_TRUNCATE, "outsize too small");
    rc = MPI_Pack_external_size("native", 2, MPI_INT, &size);
    MPI_Error_class(rc, &cls);
    CHECK_EQ_INT(cls, MPI_ERR_UNSUPPORTED_DATAREP, "unknown datarep");
}

/* A struct { unsigned u; double d; } strided twice: mixed types, padding skipped. */
static void derived_type(void)
{
    struct pair { unsigned u; double d; } in[2] = {{1, 1.0}, {0xabcdef01u, -2.0}}, out[2];
    int bl[2] = {1, 1};
    MPI_Aint displs[2] = {offsetof(struct pair, u), offsetof(struct pair, d)};
    MPI_Datatype types[2] = {MPI_UNSIGNED, MPI_DOUBLE}, t;
    MPI_OK(MPI_Type_create_struct(2, bl, displs, types, &t));
    MPI_OK(MPI_Type_commit(&t));
    unsigned char buf[64];
    MPI_Aint size, pos = 0;
    MPI_OK(MPI_Pack_external_size("external32", 2, t, &size));
    CHECK_EQ_INT(size, 24, "external32 size of the struct");
    MPI_OK(MPI_Pack_external_c("external32", in, 2, t, buf, sizeof buf, &pos));
    const unsigned char want[24] = {0, 0, 0, 1, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,
                                    0xab, 0xcd, 0xef, 0x01, 0xc0, 0, 0, 0, 0, 0, 0, 0};
    check_bytes(buf, want, 24, "struct");
    memset(out, 0, sizeof out);
    MPI_Count cpos = 0;
    MPI_OK(MPI_Unpack_external_c("external32", buf, 24, &cpos, out, 2, t));
    CHECK_EQ_INT(cpos, 24, "position after unpacking the struct");
    CHECK(out[0].u == 1 && out[0].d == 1.0 && out[1].u == 0xabcdef01u && out[1].d == -2.0, "struct round trip");
    MPI_OK(MPI_Type_free(&t));
}

static void misc(void)
{
    MPI_Status st, back;
    memset(&st, 0, sizeof st);
    st.MPI_SOURCE = 3;
    st.MPI_TAG = 17;
    MPI_OK(MPI_Status_set_elements(&st, MPI_INT, 5));
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_OK(MPI_Status_c2f(&st, f));
    CHECK_EQ_INT(f[MPI_F_SOURCE], 3, "Fortran status source");
    CHECK_EQ_INT(f[MPI_F_TAG], 17, "Fortran status tag");
    MPI_OK(MPI_Status_f2c(f, &back));
    int count;
    MPI_OK(MPI_Get_count(&back, MPI_INT, &count));
    CHECK_EQ_INT(count, 5, "count through the Fortran status");

    /* The parameterised Fortran types: the size-specific type that holds the precision and
     * range, under an envelope naming the constructor and its arguments; the same handle for
     * the same arguments; not freeable; usable in communication. */
    MPI_Datatype t, again, twin, inner;
    int ni, na, nd, comb, ints[2] = {0, 0}, tsize = 0;
    MPI_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &t));
    MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2 && na == 0 && nd == 0, "f90 real envelope: combiner %d, %d/%d/%d", comb,
          ni, na, nd);
    MPI_OK(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
    CHECK(ints[0] == 10 && ints[1] == MPI_UNDEFINED, "f90 real contents (%d, %d)", ints[0], ints[1]);
    MPI_OK(MPI_Type_size(t, &tsize));
    CHECK_EQ_INT(tsize, 8, "f90 real of 10 digits is 8 bytes (REAL8)");
    MPI_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &again));
    CHECK(again == t, "the same arguments give the same handle");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    again = t;
    CHECK(MPI_Type_free(&again) != MPI_SUCCESS, "a parameterised type cannot be freed");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    double out[3] = {1.5, -2.25, 1e300}, in[3] = {0, 0, 0};
    MPI_OK(MPI_Sendrecv(out, 3, t, 0, 5, in, 3, t, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    CHECK(in[0] == 1.5 && in[1] == -2.25 && in[2] == 1e300, "doubles through the f90 real type");
    double sum[3];
    MPI_OK(MPI_Allreduce(out, sum, 3, t, MPI_SUM, MPI_COMM_SELF));
    CHECK(sum[1] == -2.25, "a reduction on the f90 real type");
    MPI_OK(MPI_Type_dup(t, &twin));
    MPI_OK(MPI_Type_get_contents(twin, 0, 0, 1, NULL, NULL, &inner));
    CHECK(inner == t, "the duplicate's contents name the f90 type");
    MPI_OK(MPI_Type_free(&twin));
    MPI_OK(MPI_Type_create_f90_complex(5, 30, &t));
    MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    MPI_OK(MPI_Type_size(t, &tsize));
    CHECK(comb == MPI_COMBINER_F90_COMPLEX && ni == 2 && tsize == 8, "f90 complex (5, 30): combiner %d, size %d", comb,
          tsize);
    MPI_OK(MPI_Type_create_f90_integer(9, &t));
    MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    MPI_OK(MPI_Type_get_contents(t, 1, 0, 0, ints, NULL, NULL));
    MPI_OK(MPI_Type_size(t, &tsize));
    CHECK(comb == MPI_COMBINER_F90_INTEGER && ni == 1 && ints[0] == 9 && tsize == 4,
          "f90 integer of range 9: combiner %d, %d ints, r %d, size %d", comb, ni, ints[0], tsize);

    MPI_Info info;
    MPI_Comm dup;
    MPI_Request rq;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &dup, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int size;
    MPI_OK(MPI_Comm_size(dup, &size));
    CHECK_EQ_INT(size, t_size, "size of the duplicate");
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Info_free(&info));
#if !defined(MPICH_VERSION) || !defined(MPICH_NUMVERSION) || MPICH_NUMVERSION < 40000000
#error "mpi.h does not define the MPICH version macros"
#endif
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "pack_external");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    basic_types();
    derived_type();
    misc();
    t_done();
    return 0;
}
