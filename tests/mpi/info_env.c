/* MPI_Info_create_env (MPI 4.0): the same object before MPI_Init, after it and after
 * MPI_Finalize; "command" and "argv" from the arguments given, "wdir" the working directory,
 * "host" the node's name. */
#define _DEFAULT_SOURCE /* gethostname under -std=c11 */
#include "common.h"

#include <unistd.h>

static void get(MPI_Info info, const char *key, char *value, int *flag)
{
    int len = MPI_MAX_INFO_VAL;
    value[0] = 0;
    if (MPI_Info_get_string(info, key, &len, value, flag) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: MPI_Info_get_string(%s)\n", key);
        exit(1);
    }
}

static void expect(MPI_Info info, const char *key, const char *value, const char *when)
{
    char got[MPI_MAX_INFO_VAL];
    int flag;
    get(info, key, got, &flag);
    if (value ? !flag || strcmp(got, value) : flag) {
        fprintf(stderr, "FAIL %s: key '%s': flag %d value '%s', expected %s\n", when, key, flag, got,
                value ? value : "no value");
        exit(1);
    }
}

/* Every key the standard lists for MPI_INFO_ENV has the same value (or none) in a and b. */
static void same(MPI_Info a, MPI_Info b, const char *when)
{
    const char *keys[] = {"command", "argv", "maxprocs", "soft", "host", "arch", "wdir", "file", "thread_level"};
    for (int i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++) {
        char va[MPI_MAX_INFO_VAL], vb[MPI_MAX_INFO_VAL];
        int fa, fb;
        get(a, keys[i], va, &fa);
        get(b, keys[i], vb, &fb);
        if (fa != fb || (fa && strcmp(va, vb))) {
            fprintf(stderr, "FAIL %s: key '%s' differs: '%s' (%d) and '%s' (%d)\n", when, keys[i], va, fa, vb, fb);
            exit(1);
        }
    }
}

static void check_own(MPI_Info info, char **argv, const char *when)
{
    char cwd[4096], host[256];
    expect(info, "command", argv[0], when);
    if (getcwd(cwd, sizeof cwd))
        expect(info, "wdir", cwd, when);
    if (gethostname(host, sizeof host) == 0)
        expect(info, "host", host, when);
}

int main(int argc, char **argv)
{
    MPI_Info first, made, synthetic;
    char *args[] = {"/bin/prog", "-x", "two words", "3", NULL};
    if (MPI_Info_create_env(argc, argv, &first) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: MPI_Info_create_env before MPI_Init\n");
        return 1;
    }
    check_own(first, argv, "before MPI_Init");
    if (argc == 1)
        expect(first, "argv", NULL, "before MPI_Init, no arguments");
    MPI_Info_create_env(4, args, &synthetic);
    expect(synthetic, "command", "/bin/prog", "synthetic arguments");
    expect(synthetic, "argv", "-x two words 3", "synthetic arguments");
    MPI_Info_free(&synthetic);
    MPI_Info_create_env(0, NULL, &synthetic);
    expect(synthetic, "command", NULL, "no arguments");
    MPI_Info_free(&synthetic);

    t_init(&argc, &argv, "info_env");
    MPI_OK(MPI_Info_create_env(argc, argv, &made));
    same(first, made, "after MPI_Init");
    check_own(made, argv, "after MPI_Init");
    MPI_OK(MPI_Info_free(&made));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("info_env: OK (np %d)\n", t_size);
    MPI_Finalize();

    if (MPI_Info_create_env(argc, argv, &made) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: MPI_Info_create_env after MPI_Finalize\n");
        return 1;
    }
    same(first, made, "after MPI_Finalize");
    MPI_Info_free(&made);
    MPI_Info_free(&first);
    return 0;
}
