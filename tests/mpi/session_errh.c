/* Session error handlers made before any initialisation (MPI 4.0 allows
 * MPI_Session_create_errhandler and MPI_Errhandler_free then): one is freed at once, the other
 * is given to MPI_Session_init and called through MPI_Session_call_errhandler with the session
 * and the code; after MPI_Errhandler_free the session keeps it. */
#include "common.h"

static MPI_Session expected_session = MPI_SESSION_NULL;
static int calls, last_code, wrong_session;

static void handler(MPI_Session *session, int *code, ...)
{
    calls++;
    last_code = *code;
    wrong_session += *session != expected_session;
}

int main(void)
{
    MPI_Errhandler spare, eh;
    if (MPI_Session_create_errhandler(handler, &spare) != MPI_SUCCESS ||
        MPI_Errhandler_free(&spare) != MPI_SUCCESS || spare != MPI_ERRHANDLER_NULL) {
        fprintf(stderr, "FAIL: create and free of a session errhandler before initialisation\n");
        return 1;
    }
    if (MPI_Session_create_errhandler(handler, &eh) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: MPI_Session_create_errhandler before initialisation\n");
        return 1;
    }
    MPI_Session session;
    if (MPI_Session_init(MPI_INFO_NULL, eh, &session) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: MPI_Session_init with a handler made before it\n");
        return 1;
    }
    expected_session = session;
    MPI_Errhandler got;
    MPI_OK(MPI_Session_get_errhandler(session, &got));
    CHECK(got == eh, "MPI_Session_get_errhandler: 0x%x, expected 0x%x", (unsigned)got, (unsigned)eh);
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Session_call_errhandler(session, MPI_ERR_OTHER));
    CHECK(calls == 1 && last_code == MPI_ERR_OTHER && !wrong_session, "%d calls, code %d, %d with another session",
          calls, last_code, wrong_session);
    MPI_OK(MPI_Errhandler_free(&eh)); /* the session keeps its reference */
    MPI_OK(MPI_Session_call_errhandler(session, MPI_ERR_ARG));
    CHECK(calls == 2 && last_code == MPI_ERR_ARG && !wrong_session, "%d calls, code %d after the free", calls,
          last_code);
    MPI_OK(MPI_Session_finalize(&session));
    printf("session_errh: OK\n");
    return 0;
}
