/* Error classes and codes a program adds: they lie above MPI_ERR_LASTCODE, MPI_LASTUSEDCODE
 * (an attribute of MPI_COMM_WORLD) follows them, their string is empty until one is set, an
 * added code of a predefined class keeps that class, and they travel through an error handler
 * (MPI_Comm_call_errhandler) unchanged. */
#include "common.h"

static int last_used(void)
{
    int *v = NULL, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && v, "MPI_LASTUSEDCODE is not set");
    return *v;
}

static int handled = -1;
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handled = *code;
}

int main(int argc, char **argv)
{
    char es[MPI_MAX_ERROR_STRING];
    int len = -1, cls = -1, last;

    t_init(&argc, &argv, "errcodes");
    last = last_used();
    CHECK(last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d below MPI_ERR_LASTCODE %d", last, MPI_ERR_LASTCODE);

    int classes[3], codes[3][4];
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Add_error_class(&classes[i]));
        CHECK(classes[i] > MPI_ERR_LASTCODE, "added class %d not above MPI_ERR_LASTCODE", classes[i]);
        CHECK(classes[i] <= last_used(), "MPI_LASTUSEDCODE %d below the added class %d", last_used(),
              classes[i]);
        /* No string yet: empty. */
        es[0] = 'x';
        MPI_OK(MPI_Error_string(classes[i], es, &len));
        CHECK(es[0] == 0 && len == 0, "string of a new class: '%s' (len %d)", es, len);
        MPI_OK(MPI_Error_class(classes[i], &cls));
        CHECK_EQ_INT(cls, classes[i], "class of an added class");
        for (int j = 0; j < 4; j++) {
            MPI_OK(MPI_Add_error_code(classes[i], &codes[i][j]));
            CHECK(codes[i][j] > MPI_ERR_LASTCODE, "added code %d not above MPI_ERR_LASTCODE", codes[i][j]);
            CHECK(codes[i][j] <= last_used(), "MPI_LASTUSEDCODE below an added code");
            es[0] = 'x';
            MPI_OK(MPI_Error_string(codes[i][j], es, &len));
            CHECK(es[0] == 0 && len == 0, "string of a new code: '%s' (len %d)", es, len);
        }
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            char want[64];
            snprintf(want, sizeof want, "class %d code %d", i, j);
            MPI_OK(MPI_Add_error_string(codes[i][j], want));
            MPI_OK(MPI_Error_class(codes[i][j], &cls));
            CHECK_EQ_INT(cls, classes[i], "class of an added code");
            MPI_OK(MPI_Error_string(codes[i][j], es, &len));
            CHECK(strcmp(es, want) == 0 && len == (int)strlen(want), "string '%s', expected '%s'", es, want);
        }

    /* A code of a predefined class. */
    int argcode = -1;
    MPI_OK(MPI_Add_error_code(MPI_ERR_ARG, &argcode));
    MPI_OK(MPI_Error_class(argcode, &cls));
    CHECK_EQ_INT(cls, MPI_ERR_ARG, "class of a code added to MPI_ERR_ARG");
    CHECK(argcode != MPI_ERR_ARG && argcode > MPI_ERR_LASTCODE, "code added to MPI_ERR_ARG: %d", argcode);

    /* Through an error handler unchanged. */
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, codes[1][2]));
    CHECK_EQ_INT(handled, codes[1][2], "code the handler saw");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Errhandler_free(&eh));

    /* Not a code: MPI_Error_class refuses it. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Error_class(last_used() + 1, &cls) != MPI_SUCCESS, "MPI_Error_class of an unknown code succeeded");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* Every rank adds the same classes in the same order: the values agree. */
    int mine = classes[2], root = classes[2];
    MPI_OK(MPI_Bcast(&root, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK_EQ_INT(mine, root, "added class on this rank and on rank 0");
    t_done();
    return 0;
}
