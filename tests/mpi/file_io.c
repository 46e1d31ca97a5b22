/* MPI-IO on a POSIX file, every value read back and checked:
 *   - MPICH's values of the file constants; MPI_FILE_NULL's Fortran handle is 0, an open
 *     file's converts both ways (also built with MPICH's mpicc: abi.mpich_file_io);
 *   - explicit offsets: each rank writes its block (write_at_all), reads its neighbour's;
 *     the size is the sum; a read past the end moves nothing;
 *   - a view that interleaves the ranks' ints (disp rank ints, filetype one int resized to p
 *     ints): write_all through the individual pointer, a memory type with gaps (every other
 *     int), then the whole file read back under the default view; get_position,
 *     get_byte_offset, seek (set, current, end), get_view's types;
 *   - the shared pointer: one write_shared per rank (the values a permutation), then
 *     write_ordered (rank r writes r + 1 ints in rank order), get_position_shared, seek_shared;
 *   - nonblocking calls (complete requests, their status counts) and split collectives;
 *   - errors through the default file handler (MPI_ERRORS_RETURN) and a user handler called
 *     with the file: a missing file, RDONLY with CREATE, EXCL on an existing file, writing a
 *     read-only file, an external32 view, MPI_Register_datarep (not supported), a NULL filename
 *     on one rank (every rank fails), a filetype whose instances overlap;
 *   - the end of file with a partly written etype, a refused write_shared leaves the shared
 *     pointer, MPI_MODE_APPEND's pointers, a write from MPI_BOTTOM;
 *   - MPI_MODE_DELETE_ON_CLOSE removes the file at close, MPI_File_delete another one. */
#include <unistd.h>

#include "common.h"

static char path[256], path2[256];
static int handler_calls;
static MPI_File handler_file;

static void on_file_error(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_file = *fh;
    (void)code;
}

static int error_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

static void expect_class(int rc, int cls, const char *what)
{
    char es[MPI_MAX_ERROR_STRING];
    int len = 0;
    es[0] = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, es, &len);
    CHECK(rc != MPI_SUCCESS && error_class(rc) == cls, "%s: error class %d (%s), expected %d", what,
          rc == MPI_SUCCESS ? 0 : error_class(rc), es, cls);
}

static void count_is(const MPI_Status *st, MPI_Datatype t, int expected, const char *what)
{
    int n = -1;
    MPI_OK(MPI_Get_count(st, t, &n));
    CHECK(n == expected, "%s: status count %d, expected %d", what, n, expected);
}

static void test_constants(void)
{
    CHECK(MPI_MODE_RDONLY == 2 && MPI_MODE_RDWR == 8 && MPI_MODE_WRONLY == 4 && MPI_MODE_CREATE == 1 &&
              MPI_MODE_EXCL == 64 && MPI_MODE_DELETE_ON_CLOSE == 16 && MPI_MODE_UNIQUE_OPEN == 32 &&
              MPI_MODE_APPEND == 128 && MPI_MODE_SEQUENTIAL == 256,
          "file access modes differ from MPICH's");
    CHECK(MPI_SEEK_SET == 600 && MPI_SEEK_CUR == 602 && MPI_SEEK_END == 604 &&
              MPI_DISPLACEMENT_CURRENT == -54278278 && MPI_MAX_DATAREP_STRING == 128,
          "file constants differ from MPICH's");
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL, "MPI_FILE_NULL's Fortran handle is not 0");
    /* ROMIO's request names compile and are MPI's request type (MPICH's MPIO_REQUEST_NULL is
     * (MPI_Request)0, weft's MPI_REQUEST_NULL). */
    MPIO_Request req = MPIO_REQUEST_NULL;
    CHECK(sizeof req == sizeof(MPI_Request), "MPIO_Request is not an MPI_Request");
}

enum { N = 64 };

static void test_explicit(MPI_File fh)
{
    int out[N], in[N];
    MPI_Status st;
    for (int i = 0; i < N; i++) out[i] = t_rank * 1000 + i;
    MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)t_rank * N * sizeof(int), out, N, MPI_INT, &st));
    count_is(&st, MPI_INT, N, "write_at_all");
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    const int peer = (t_rank + 1) % t_size;
    MPI_OK(MPI_File_read_at(fh, (MPI_Offset)peer * N * sizeof(int), in, N, MPI_INT, &st));
    count_is(&st, MPI_INT, N, "read_at");
    for (int i = 0; i < N; i++) CHECK(in[i] == peer * 1000 + i, "read_at: int %d of rank %d is %d", i, peer, in[i]);
    MPI_Offset size = 0;
    MPI_OK(MPI_File_get_size(fh, &size));
    CHECK(size == (MPI_Offset)(t_size * N * sizeof(int)), "size %lld, expected %d", (long long)size,
          t_size * N * (int)sizeof(int));
    MPI_OK(MPI_File_read_at(fh, size + 100, in, N, MPI_INT, &st));
    count_is(&st, MPI_INT, 0, "read_at past the end");
}

/* Rank r's view: ints r, r + p, r + 2p, ... of the file. */
static void set_interleaved_view(MPI_File fh, MPI_Datatype *ft)
{
    MPI_Datatype one;
    MPI_OK(MPI_Type_contiguous(1, MPI_INT, &one));
    MPI_OK(MPI_Type_create_resized(one, 0, (MPI_Aint)t_size * sizeof(int), ft));
    MPI_OK(MPI_Type_commit(ft));
    MPI_OK(MPI_Type_free(&one));
    MPI_OK(MPI_File_set_view(fh, (MPI_Offset)t_rank * sizeof(int), MPI_INT, *ft, "native", MPI_INFO_NULL));
}

static void test_view(MPI_File fh)
{
    MPI_Datatype ft, every_other;
    int out[2 * N], all[4 * N], one = -1;
    MPI_Status st;
    MPI_OK(MPI_File_set_size(fh, 0));
    set_interleaved_view(fh, &ft);
    /* The first N/2 ints from a contiguous buffer, the next N/2 from every other int. */
    for (int i = 0; i < N / 2; i++) out[i] = t_rank * 1000 + i;
    MPI_OK(MPI_File_write_all(fh, out, N / 2, MPI_INT, &st));
    count_is(&st, MPI_INT, N / 2, "write_all through the view");
    MPI_OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    for (int i = 0; i < N; i++) out[i] = i % 2 ? -7 : t_rank * 1000 + N / 2 + i / 2;
    MPI_OK(MPI_File_write(fh, out, 1, every_other, &st));
    MPI_Offset pos = -1, byte = -1;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == N, "position %lld after %d ints, expected %d", (long long)pos, N, N);
    MPI_OK(MPI_File_get_byte_offset(fh, 2, &byte));
    CHECK(byte == (MPI_Offset)(2 * t_size + t_rank) * (MPI_Offset)sizeof(int), "byte offset of int 2 is %lld",
          (long long)byte);
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    /* Seek: set, current, end (the view holds N ints of this rank's). */
    MPI_OK(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    MPI_OK(MPI_File_read(fh, &one, 1, MPI_INT, &st));
    CHECK(one == t_rank * 1000 + 5, "int 5 of the view read after a seek is %d", one);
    MPI_OK(MPI_File_seek(fh, 2, MPI_SEEK_CUR));
    MPI_OK(MPI_File_read(fh, &one, 1, MPI_INT, &st));
    CHECK(one == t_rank * 1000 + 8, "int 8 of the view read after seeking on is %d", one);
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == N, "MPI_SEEK_END is at %lld, expected %d", (long long)pos, N);
    /* The view's types come back. */
    MPI_Offset disp = -1;
    MPI_Datatype et, got_ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &got_ft, rep));
    int size = 0;
    MPI_Aint lb, extent;
    MPI_OK(MPI_Type_size(got_ft, &size));
    MPI_OK(MPI_Type_get_extent(got_ft, &lb, &extent));
    CHECK(disp == (MPI_Offset)(t_rank * sizeof(int)) && et == MPI_INT && size == (int)sizeof(int) &&
              extent == (MPI_Aint)(t_size * sizeof(int)) && strcmp(rep, "native") == 0,
          "get_view: disp %lld, size %d, extent %ld, datarep %s", (long long)disp, size, (long)extent, rep);
    MPI_OK(MPI_Type_free(&got_ft));
    /* The whole file under the default view. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (t_size * N <= 4 * N) {
        MPI_OK(MPI_File_read_at_all(fh, 0, all, t_size * N, MPI_INT, &st));
        count_is(&st, MPI_INT, t_size * N, "the whole file");
        for (int j = 0; j < t_size * N; j++) {
            const int r = j % t_size, i = j / t_size;
            CHECK(all[j] == r * 1000 + i, "int %d of the file is %d, expected %d (rank %d's int %d)", j, all[j],
                  r * 1000 + i, r, i);
        }
    }
    MPI_OK(MPI_Type_free(&ft));
    MPI_OK(MPI_Type_free(&every_other));
}

static void test_shared(MPI_File fh)
{
    int all[64], mine = t_rank + 1, seen[64] = {0};
    MPI_Status st;
    MPI_Offset pos = -1;
    MPI_OK(MPI_File_set_size(fh, 0));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_OK(MPI_File_write_shared(fh, &mine, 1, MPI_INT, &st));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == t_size, "shared position %lld after %d write_shared calls", (long long)pos, t_size);
    MPI_OK(MPI_File_read_at(fh, 0, all, t_size, MPI_INT, &st));
    for (int j = 0; j < t_size; j++) {
        CHECK(all[j] >= 1 && all[j] <= t_size && !seen[all[j]], "write_shared: int %d is %d", j, all[j]);
        seen[all[j]] = 1;
    }
    /* Ordered: rank r writes r + 1 ints of value r, after every lower rank's. */
    int ints[16];
    for (int i = 0; i <= t_rank; i++) ints[i] = 100 + t_rank;
    MPI_OK(MPI_File_write_ordered(fh, ints, t_rank + 1, MPI_INT, &st));
    count_is(&st, MPI_INT, t_rank + 1, "write_ordered");
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    const int ordered = t_size * (t_size + 1) / 2;
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == t_size + ordered, "shared position %lld after the ordered write, expected %d", (long long)pos,
          t_size + ordered);
    MPI_OK(MPI_File_read_at(fh, t_size, all, ordered, MPI_INT, &st));
    for (int r = 0, j = 0; r < t_size; r++)
        for (int i = 0; i <= r; i++, j++) CHECK(all[j] == 100 + r, "ordered int %d is %d, expected %d", j, all[j], 100 + r);
    /* Back to the start, collectively; read_ordered gives every rank its part again. */
    MPI_OK(MPI_File_seek_shared(fh, t_size, MPI_SEEK_SET));
    for (int i = 0; i < 16; i++) ints[i] = -1;
    MPI_OK(MPI_File_read_ordered(fh, ints, t_rank + 1, MPI_INT, &st));
    for (int i = 0; i <= t_rank; i++) CHECK(ints[i] == 100 + t_rank, "read_ordered int %d is %d", i, ints[i]);
}

static void test_nonblocking_and_split(MPI_File fh)
{
    int out[N], in[N];
    MPI_Request req;
    MPI_Status st;
    MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    for (int i = 0; i < N; i++) out[i] = -(t_rank * 1000 + i);
    MPI_OK(MPI_File_iwrite_at(fh, (MPI_Offset)t_rank * N * sizeof(int), out, N, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, &st));
    count_is(&st, MPI_INT, N, "iwrite_at");
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_File_iread_at(fh, (MPI_Offset)t_rank * N * sizeof(int), in, N, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, &st));
    count_is(&st, MPI_INT, N, "iread_at");
    for (int i = 0; i < N; i++) CHECK(in[i] == out[i], "iread_at: int %d is %d", i, in[i]);
    MPI_OK(MPI_File_seek(fh, (MPI_Offset)t_rank * N * sizeof(int), MPI_SEEK_SET));
    for (int i = 0; i < N; i++) in[i] = 0;
    MPI_OK(MPI_File_read_all_begin(fh, in, N, MPI_INT));
    MPI_OK(MPI_File_read_all_end(fh, in, &st));
    count_is(&st, MPI_INT, N, "read_all_begin/end");
    for (int i = 0; i < N; i++) CHECK(in[i] == out[i], "split read: int %d is %d", i, in[i]);
}

static void test_errors(MPI_File fh)
{
    MPI_File other = MPI_FILE_NULL;
    expect_class(MPI_File_open(MPI_COMM_WORLD, "/nonexistent-dir/weft-file", MPI_MODE_RDONLY, MPI_INFO_NULL, &other),
                 MPI_ERR_NO_SUCH_FILE, "opening a missing file");
    CHECK(other == MPI_FILE_NULL, "a failed open set a handle");
    expect_class(MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &other),
                 MPI_ERR_AMODE, "MPI_MODE_RDONLY | MPI_MODE_CREATE");
    expect_class(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL,
                               &other),
                 MPI_ERR_FILE_EXISTS, "MPI_MODE_EXCL on an existing file");
    expect_class(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP,
                 "an external32 view");
    expect_class(MPI_Register_datarep("weft-test", NULL, NULL, NULL, NULL), MPI_ERR_UNSUPPORTED_OPERATION,
                 "MPI_Register_datarep");
    /* One rank's bad argument fails the open on every rank (no rank waits for it). */
    expect_class(MPI_File_open(MPI_COMM_WORLD, t_rank == t_size - 1 ? NULL : path2, MPI_MODE_RDWR | MPI_MODE_CREATE,
                               MPI_INFO_NULL, &other),
                 MPI_ERR_ARG, "a NULL filename on the last rank");
    /* A filetype whose instances overlap (extent smaller than its data) on a writable file. */
    MPI_Datatype two, overlapping;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &two));
    MPI_OK(MPI_Type_create_resized(two, 0, sizeof(int), &overlapping));
    MPI_OK(MPI_Type_commit(&overlapping));
    expect_class(MPI_File_set_view(fh, 0, MPI_INT, overlapping, "native", MPI_INFO_NULL), MPI_ERR_IO,
                 "a filetype whose instances overlap");
    MPI_OK(MPI_Type_free(&two));
    MPI_OK(MPI_Type_free(&overlapping));
    /* Read-only: writing fails, through a user handler called with the file. */
    MPI_File ro;
    MPI_Errhandler eh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &ro));
    MPI_OK(MPI_File_create_errhandler(on_file_error, &eh));
    MPI_OK(MPI_File_set_errhandler(ro, eh));
    int x = 1;
    expect_class(MPI_File_write_at(ro, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY,
                 "writing a read-only file");
    CHECK(handler_calls == 1 && handler_file == ro, "the file's handler was called %d times", handler_calls);
    MPI_Errhandler got;
    MPI_OK(MPI_File_get_errhandler(ro, &got));
    CHECK(got == eh, "MPI_File_get_errhandler gave another handler");
    MPI_OK(MPI_Errhandler_free(&got));
    const MPI_Fint id = MPI_File_c2f(ro);
    CHECK(id != 0 && MPI_File_f2c(id) == ro, "an open file's Fortran handle does not convert back");
    MPI_OK(MPI_File_close(&ro));
    CHECK(ro == MPI_FILE_NULL, "MPI_File_close left the handle");
    MPI_OK(MPI_Errhandler_free(&eh));
}

/* The end of file counts a partly written etype; a refused shared-pointer write leaves the
 * pointer; MPI_MODE_APPEND starts both pointers at the end; a type of absolute addresses
 * writes from MPI_BOTTOM. */
static void test_edges(void)
{
    MPI_File fh;
    MPI_Offset pos = -1;
    char bytes[6] = {1, 2, 3, 4, 5, 6};
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    if (t_rank == 0) MPI_OK(MPI_File_write_at(fh, 0, bytes, 6, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 2, "MPI_SEEK_END over 6 bytes of ints is at %lld, expected 2", (long long)pos);
    MPI_OK(MPI_File_close(&fh));

    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int x = 7;
    expect_class(MPI_File_write_shared(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY,
                 "write_shared on a read-only file");
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 0, "a refused write_shared moved the shared pointer to %lld", (long long)pos);
    MPI_OK(MPI_File_close(&fh));

    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_RDWR | MPI_MODE_APPEND | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 6, "MPI_MODE_APPEND: the individual pointer is at %lld, expected 6", (long long)pos);
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 6, "MPI_MODE_APPEND: the shared pointer is at %lld, expected 6", (long long)pos);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every rank read it before any writes below */
    int value = 4200 + t_rank, back = -1;
    MPI_Aint at;
    MPI_Datatype absolute;
    int one = 1;
    MPI_OK(MPI_Get_address(&value, &at));
    MPI_OK(MPI_Type_create_hindexed(1, &one, &at, MPI_INT, &absolute));
    MPI_OK(MPI_Type_commit(&absolute));
    MPI_OK(MPI_File_write_at(fh, 8 + 4 * t_rank, MPI_BOTTOM, 1, absolute, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_read_at(fh, 8 + 4 * t_rank, &back, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(back == value, "written from MPI_BOTTOM: read back %d, expected %d", back, value);
    MPI_OK(MPI_Type_free(&absolute));
    /* Atomic mode: the accesses lock their byte ranges. */
    int atomic = 0;
    MPI_OK(MPI_File_set_atomicity(fh, 1));
    MPI_OK(MPI_File_get_atomicity(fh, &atomic));
    CHECK(atomic == 1, "atomicity %d after setting it", atomic);
    value = -value;
    MPI_OK(MPI_File_write_at(fh, 8 + 4 * t_rank, &value, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_read_at(fh, 8 + 4 * t_rank, &back, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(back == value, "atomic mode: read back %d, expected %d", back, value);
    MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "file_io");
    test_constants();
    int id = (int)getpid();
    MPI_OK(MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD));
    snprintf(path, sizeof path, "weft_file_io_%d.dat", id);
    snprintf(path2, sizeof path2, "weft_file_io_%d.second", id);

    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                         &fh));
    int amode = 0;
    MPI_OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE), "amode %d", amode);
    MPI_Group g;
    int gsize = 0;
    MPI_OK(MPI_File_get_group(fh, &g));
    MPI_OK(MPI_Group_size(g, &gsize));
    MPI_OK(MPI_Group_free(&g));
    CHECK(gsize == t_size, "the file's group has %d ranks", gsize);
    test_explicit(fh);
    test_view(fh);
    test_shared(fh);
    test_nonblocking_and_split(fh);
    test_errors(fh);
    MPI_OK(MPI_File_close(&fh));
    test_edges();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(access(path, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE left %s", path);

    /* MPI_File_delete, once the file exists; a second delete finds nothing. */
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_close(&fh));
    if (t_rank == 0) {
        MPI_OK(MPI_File_delete(path2, MPI_INFO_NULL));
        CHECK(access(path2, F_OK) != 0, "MPI_File_delete left %s", path2);
        expect_class(MPI_File_delete(path2, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE, "deleting a deleted file");
    }
    int mine = t_rank + 1, sum = 0;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == t_size * (t_size + 1) / 2, "allreduce after the file calls gave %d", sum);
    if (t_rank == 0) printf("file_io: explicit, view, shared, ordered, nonblocking, split and error cases checked\n");
    MPI_Finalize();
    return 0;
}
