/* mpit_list: lists an MPI library's tool information interface (MPI_T), category by category:
 * each control variable with its type, scope and value, each performance variable with its
 * class and value. Uses the MPI standard only, so it builds against any MPI.
 *
 *   mpit_list            without MPI_Init (the interface works before it)
 *   mpit_list --init     under a launcher: MPI_Init first; rank 0 lists its own values after
 *                        a barrier and an allreduce, so that the counters have moved
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALL(x)                                                       \
    do {                                                              \
        int rc_ = (x);                                                \
        if (rc_ != MPI_SUCCESS) {                                     \
            fprintf(stderr, "mpit_list: %s failed: %d\n", #x, rc_);   \
            exit(1);                                                  \
        }                                                             \
    } while (0)

static const char *scope_name(int scope)
{
    switch (scope) {
        case MPI_T_SCOPE_CONSTANT: return "constant";
        case MPI_T_SCOPE_READONLY: return "readonly";
        case MPI_T_SCOPE_LOCAL: return "local";
        case MPI_T_SCOPE_GROUP: return "group";
        case MPI_T_SCOPE_GROUP_EQ: return "group_eq";
        case MPI_T_SCOPE_ALL: return "all";
        case MPI_T_SCOPE_ALL_EQ: return "all_eq";
    }
    return "?";
}

static const char *class_name(int c)
{
    switch (c) {
        case MPI_T_PVAR_CLASS_STATE: return "state";
        case MPI_T_PVAR_CLASS_LEVEL: return "level";
        case MPI_T_PVAR_CLASS_SIZE: return "size";
        case MPI_T_PVAR_CLASS_PERCENTAGE: return "percentage";
        case MPI_T_PVAR_CLASS_HIGHWATERMARK: return "highwatermark";
        case MPI_T_PVAR_CLASS_LOWWATERMARK: return "lowwatermark";
        case MPI_T_PVAR_CLASS_COUNTER: return "counter";
        case MPI_T_PVAR_CLASS_AGGREGATE: return "aggregate";
        case MPI_T_PVAR_CLASS_TIMER: return "timer";
        case MPI_T_PVAR_CLASS_GENERIC: return "generic";
    }
    return "?";
}

/* Prints the first element of a variable's value, read into buf. */
static void print_value(MPI_Datatype dt, MPI_T_enum en, const void *buf)
{
    if (dt == MPI_CHAR) printf("\"%s\"", (const char *)buf);
    else if (dt == MPI_INT && en != MPI_T_ENUM_NULL) {
        char item[256];
        int len = sizeof item, value = 0, num = 0, v = *(const int *)buf;
        CALL(MPI_T_enum_get_info(en, &num, NULL, NULL));
        if (v >= 0 && v < num && MPI_T_enum_get_item(en, v, &value, item, &len) == MPI_SUCCESS) printf("%s", item);
        else printf("%d", v);
    } else if (dt == MPI_INT) printf("%d", *(const int *)buf);
    else if (dt == MPI_UNSIGNED) printf("%u", *(const unsigned *)buf);
    else if (dt == MPI_UNSIGNED_LONG) printf("%lu", *(const unsigned long *)buf);
    else if (dt == MPI_UNSIGNED_LONG_LONG) printf("%llu", *(const unsigned long long *)buf);
    else if (dt == MPI_COUNT) printf("%lld", (long long)*(const MPI_Count *)buf);
    else if (dt == MPI_DOUBLE) printf("%g", *(const double *)buf);
    else printf("(unprintable type)");
}

static const char *type_name(MPI_Datatype dt, MPI_T_enum en)
{
    if (dt == MPI_CHAR) return "string";
    if (dt == MPI_INT) return en != MPI_T_ENUM_NULL ? "choice" : "int";
    if (dt == MPI_UNSIGNED || dt == MPI_UNSIGNED_LONG || dt == MPI_UNSIGNED_LONG_LONG) return "unsigned";
    if (dt == MPI_COUNT) return "count";
    if (dt == MPI_DOUBLE) return "double";
    return "?";
}

static void list_cvar(int i)
{
    char name[256];
    int name_len = sizeof name, verbosity, bind, scope, count;
    MPI_Datatype dt;
    MPI_T_enum en;
    CALL(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &en, NULL, NULL, &bind, &scope));
    printf("  cvar %-36s %-8s %-8s = ", name, type_name(dt, en), scope_name(scope));
    MPI_T_cvar_handle h;
    if (bind != MPI_T_BIND_NO_OBJECT || MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS) {
        printf("(bound to an object)\n");
        return;
    }
    /* Large enough for count elements of any of the interface's types. */
    void *buf = calloc((size_t)count + 1, 16);
    if (MPI_T_cvar_read(h, buf) == MPI_SUCCESS) print_value(dt, en, buf);
    else printf("(not readable)");
    printf("\n");
    free(buf);
    MPI_T_cvar_handle_free(&h);
}

static void list_pvar(MPI_T_pvar_session s, int i)
{
    char name[256];
    int name_len = sizeof name, verbosity, var_class, bind, readonly, continuous, atomic, count;
    MPI_Datatype dt;
    MPI_T_enum en;
    CALL(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &dt, &en, NULL, NULL, &bind, &readonly,
                             &continuous, &atomic));
    printf("  pvar %-44s %-8s = ", name, class_name(var_class));
    MPI_T_pvar_handle h;
    if (bind != MPI_T_BIND_NO_OBJECT || MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count) != MPI_SUCCESS) {
        printf("(bound to an object)\n");
        return;
    }
    if (!continuous) MPI_T_pvar_start(s, h);
    void *buf = calloc((size_t)count + 1, 16);
    if (MPI_T_pvar_read(s, h, buf) == MPI_SUCCESS) print_value(dt, en, buf);
    else printf("(not readable)");
    printf("\n");
    free(buf);
    MPI_T_pvar_handle_free(s, &h);
}

int main(int argc, char **argv)
{
    const int init = argc > 1 && strcmp(argv[1], "--init") == 0;
    int provided, rank = 0;
    CALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    if (init) {
        CALL(MPI_Init(&argc, &argv));
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        int one = 1, sum = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        int ncvar = 0, npvar = 0, ncat = 0;
        CALL(MPI_T_cvar_get_num(&ncvar));
        CALL(MPI_T_pvar_get_num(&npvar));
        CALL(MPI_T_category_get_num(&ncat));
        MPI_T_pvar_session s;
        CALL(MPI_T_pvar_session_create(&s));
        char *listed_c = calloc((size_t)ncvar + 1, 1), *listed_p = calloc((size_t)npvar + 1, 1);
        for (int c = 0; c < ncat; ++c) {
            char name[256], desc[1024];
            int name_len = sizeof name, desc_len = sizeof desc, nc, np, nsub;
            CALL(MPI_T_category_get_info(c, name, &name_len, desc, &desc_len, &nc, &np, &nsub));
            printf("category %s: %s\n", name, desc);
            int *ids = malloc(sizeof(int) * (size_t)(nc + np + 1));
            CALL(MPI_T_category_get_cvars(c, nc, ids));
            for (int k = 0; k < nc; ++k) listed_c[ids[k]] = 1, list_cvar(ids[k]);
            CALL(MPI_T_category_get_pvars(c, np, ids));
            for (int k = 0; k < np; ++k) listed_p[ids[k]] = 1, list_pvar(s, ids[k]);
            free(ids);
        }
        /* Variables in no category. */
        for (int i = 0; i < ncvar; ++i)
            if (!listed_c[i]) list_cvar(i);
        for (int i = 0; i < npvar; ++i)
            if (!listed_p[i]) list_pvar(s, i);
        printf("%d control variables, %d performance variables, %d categories\n", ncvar, npvar, ncat);
        free(listed_c);
        free(listed_p);
        MPI_T_pvar_session_free(&s);
    }
    if (init) MPI_Finalize();
    MPI_T_finalize();
    return 0;
}
