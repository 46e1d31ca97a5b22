/* MPI-IO is declared but not supported yet: a program using it compiles and links, and each
 * file routine fails with MPI_ERR_UNSUPPORTED_OPERATION through MPI's default file error handler
 * (MPI_ERRORS_RETURN), even with MPI_COMM_WORLD's handler left fatal, with an error string that
 * says so; setting a file error handler on MPI_FILE_NULL at startup returns the error rather
 * than ending the job; the output handle stays null and the job goes on (an allreduce
 * afterwards, checked). The file constants have MPICH's values, ROMIO's request names compile,
 * and MPI_FILE_NULL's Fortran handle is 0 both ways. */
#include "common.h"

static void expect_unsupported(int rc, const char *what)
{
    int cls = -1, len = 0;
    char es[MPI_MAX_ERROR_STRING];
    es[0] = 0;
    CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
    MPI_OK(MPI_Error_class(rc, &cls));
    MPI_OK(MPI_Error_string(rc, es, &len));
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "%s: error class %d (%s)", what, cls, es);
    CHECK(strstr(es, "not supported") != NULL, "%s: error string '%s'", what, es);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "file_unsupported");

    CHECK(MPI_MODE_RDONLY == 2 && MPI_MODE_RDWR == 8 && MPI_MODE_WRONLY == 4 &&
              MPI_MODE_CREATE == 1 && MPI_MODE_EXCL == 64 && MPI_MODE_DELETE_ON_CLOSE == 16 &&
              MPI_MODE_UNIQUE_OPEN == 32 && MPI_MODE_APPEND == 128 &&
              MPI_MODE_SEQUENTIAL == 256,
          "file access modes differ from MPICH's");
    CHECK(MPI_SEEK_SET == 600 && MPI_SEEK_CUR == 602 && MPI_SEEK_END == 604 &&
              MPI_DISPLACEMENT_CURRENT == -54278278 && MPI_MAX_DATAREP_STRING == 128,
          "file constants differ from MPICH's");

    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL,
          "MPI_FILE_NULL's Fortran handle is not 0");
    MPIO_Request req = MPIO_REQUEST_NULL;
    CHECK(req == MPI_REQUEST_NULL, "MPIO_REQUEST_NULL is not MPI_REQUEST_NULL");

    expect_unsupported(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL),
                       "MPI_File_set_errhandler");
    MPI_File fh = MPI_FILE_NULL;
    expect_unsupported(MPI_File_open(MPI_COMM_WORLD, "weft_file_unsupported.dat",
                                     MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                       "MPI_File_open");
    CHECK(fh == MPI_FILE_NULL, "MPI_File_open set a handle");
    expect_unsupported(MPI_File_delete("weft_file_unsupported.dat", MPI_INFO_NULL), "MPI_File_delete");
    MPI_Offset size = -1;
    expect_unsupported(MPI_File_get_size(fh, &size), "MPI_File_get_size");
    CHECK(size == -1, "MPI_File_get_size wrote %ld", (long)size);

    int mine = t_rank + 1, sum = 0;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == t_size * (t_size + 1) / 2, "allreduce after the file calls gave %d", sum);
    if (t_rank == 0) printf("file_unsupported: every file call failed as not supported; the job went on\n");
    MPI_Finalize();
    return 0;
}
