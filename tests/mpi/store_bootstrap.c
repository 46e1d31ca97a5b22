/* weft_bootstrap_use_store (include/weft/store.h), run WITHOUT a launcher: bad arguments are
 * refused with MPI_ERR_ARG; a store of this process (a job of one) then bootstraps MPI_Init,
 * which must have written weft's keys into it (its host name, its modex) and must run a
 * collective; a store handed over after MPI_Init is refused with MPI_ERR_OTHER. The
 * multi-process path runs under torchrun (torch.torchrun.* tests). */
#include <stdlib.h>
#include <string.h>
#include <weft/store.h>

#include "common.h"

enum { MAX_KEYS = 256 };
struct entry {
    char *key;
    unsigned char *value;
    size_t len;
};
static struct entry keys[MAX_KEYS];
static int nkeys = 0, calls = 0;

static struct entry *find(const char *key, int make)
{
    for (int i = 0; i < nkeys; i++)
        if (strcmp(keys[i].key, key) == 0) return &keys[i];
    if (!make || nkeys == MAX_KEYS) return NULL;
    keys[nkeys].key = strdup(key);
    return &keys[nkeys++];
}

static int put(void *ctx, const char *key, const void *value, size_t len)
{
    (void)ctx;
    ++calls;
    struct entry *e = find(key, 1);
    if (!e) return 1;
    free(e->value);
    e->value = malloc(len + 1);
    memcpy(e->value, value, len);
    e->len = len;
    return 0;
}

static int get(void *ctx, const char *key, weft_store_sink_fn sink, void *sink_ctx)
{
    (void)ctx;
    ++calls;
    struct entry *e = find(key, 0);
    if (!e) return 1; /* one process: a key not there now never will be */
    sink(sink_ctx, e->value, e->len);
    return 0;
}

static int add(void *ctx, const char *key, long long delta, long long *result)
{
    (void)ctx;
    ++calls;
    struct entry *e = find(key, 1);
    if (!e) return 1;
    long long v = e->value ? atoll((const char *)e->value) : 0;
    v += delta;
    char text[32];
    snprintf(text, sizeof text, "%lld", v);
    free(e->value);
    e->value = (unsigned char *)strdup(text);
    e->len = strlen(text);
    *result = v;
    return 0;
}

static int check(void *ctx, const char *key, int *exists)
{
    (void)ctx;
    ++calls;
    *exists = find(key, 0) != NULL;
    return 0;
}

int main(void)
{
    t_name = "store_bootstrap";
    struct weft_store_ops ops = {sizeof ops, NULL, 0, 1, put, get, add, check};
    struct weft_store_ops bad = ops;
    bad.get = NULL;
    CHECK(weft_bootstrap_use_store(&bad) == MPI_ERR_ARG, "a missing callback was accepted");
    bad = ops;
    bad.rank = 1;
    CHECK(weft_bootstrap_use_store(&bad) == MPI_ERR_ARG, "rank 1 of 1 was accepted");
    bad = ops;
    bad.struct_size = 8;
    CHECK(weft_bootstrap_use_store(&bad) == MPI_ERR_ARG, "a struct_size of 8 was accepted");
    CHECK(weft_bootstrap_use_store(NULL) == MPI_SUCCESS, "forgetting the store failed");
    CHECK(weft_bootstrap_use_store(&ops) == MPI_SUCCESS, "a valid store was refused");

    MPI_OK(MPI_Init(NULL, NULL));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
    CHECK(t_rank == 0 && t_size == 1, "rank %d of %d through a store of one", t_rank, t_size);
    CHECK(find("weft/host/0", 0) && find("weft/job", 0) && find("weft/b/0/done", 0),
          "the store lacks weft's host, job or barrier keys (%d keys, %d calls)", nkeys, calls);
    int modex = 0;
    for (int i = 0; i < nkeys; i++) modex += strncmp(keys[i].key, "weft/m/0/", 9) == 0;
    CHECK(modex > 0, "no modex key of rank 0 in the store (%d keys)", nkeys);
    long long in = 41, out = 0;
    MPI_OK(MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(out == 41, "allreduce of one rank gave %lld", out);
    CHECK(weft_bootstrap_use_store(&ops) == MPI_ERR_OTHER, "a store after MPI_Init was accepted");
    MPI_OK(MPI_Finalize());
    printf("store_bootstrap: arguments checked, MPI_Init through a store of %d keys, %d calls\n", nkeys, calls);
    for (int i = 0; i < nkeys; i++) {
        free(keys[i].key);
        free(keys[i].value);
    }
    return 0;
}
