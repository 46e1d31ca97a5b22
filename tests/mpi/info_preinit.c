/* MPI_Info objects before MPI_Init and after MPI_Finalize (MPI 4.0): made, changed and read
 * before MPI_Init, used as arguments between, read and freed after MPI_Finalize. */
#include "common.h"

static void expect(MPI_Info info, const char *key, const char *value, const char *when)
{
    char got[64];
    int flag = -1;
    got[0] = 0;
    if (MPI_Info_get(info, key, (int)sizeof got - 1, got, &flag) != MPI_SUCCESS || !flag || strcmp(got, value)) {
        fprintf(stderr, "FAIL %s: key '%s': flag %d value '%s', expected '%s'\n", when, key, flag, got, value);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    enum { N = 8 };
    MPI_Info infos[N], dup;
    int nkeys = -1;
    for (int i = 0; i < N; i++) {
        if (MPI_Info_create(&infos[i]) != MPI_SUCCESS || MPI_Info_set(infos[i], "early", "yes") != MPI_SUCCESS) {
            fprintf(stderr, "FAIL: MPI_Info_create/set before MPI_Init\n");
            return 1;
        }
    }
    MPI_Info_dup(infos[0], &dup);
    MPI_Info_set(dup, "dup", "1");
    expect(dup, "early", "yes", "dup before MPI_Init");

    t_init(&argc, &argv, "info_preinit");
    for (int i = 0; i < N; i++)
        expect(infos[i], "early", "yes", "after MPI_Init");
    MPI_OK(MPI_Info_set(infos[1], "during", "init"));
    /* An info made before MPI_Init is a valid argument. */
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, infos[1], &comm));
    MPI_OK(MPI_Comm_free(&comm));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("info_preinit: OK (np %d)\n", t_size);
    MPI_Finalize();

    expect(infos[1], "during", "init", "after MPI_Finalize");
    MPI_Info_get_nkeys(dup, &nkeys);
    if (nkeys != 2) {
        fprintf(stderr, "FAIL: %d keys in the duplicate after MPI_Finalize\n", nkeys);
        return 1;
    }
    MPI_Info_delete(infos[2], "early");
    MPI_Info_get_nkeys(infos[2], &nkeys);
    if (nkeys != 0) {
        fprintf(stderr, "FAIL: %d keys after MPI_Info_delete\n", nkeys);
        return 1;
    }
    for (int i = 0; i < N; i++) {
        if (MPI_Info_free(&infos[i]) != MPI_SUCCESS || infos[i] != MPI_INFO_NULL) {
            fprintf(stderr, "FAIL: MPI_Info_free after MPI_Finalize\n");
            return 1;
        }
    }
    MPI_Info_free(&dup);
    /* Slots freed after MPI_Finalize are usable again. */
    for (int i = 0; i < N; i++)
        MPI_Info_create(&infos[i]);
    for (int i = 0; i < N; i++)
        MPI_Info_free(&infos[i]);
    return 0;
}
