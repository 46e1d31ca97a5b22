/* weft bootstrap through a key-value store, for launchers without PMIx (torchrun).
 *
 * Under mpirun or srun weft learns its rank, size and peers from the launcher's PMIx server.
 * A launcher without one (torchrun, whose agent runs a TCP store) can hand weft a store
 * instead: call weft_bootstrap_use_store before MPI_Init (or MPI_Init_thread), and that
 * initialisation takes rank and size from it and exchanges everything else through it (every
 * rank's host name, which groups the ranks into nodes; the transports' addresses; barriers).
 * torch_weft does this for torch.distributed.init_process_group("weft") under torchrun.
 *
 * The store must be shared by every rank of the job, fresh for it (no keys under "weft/"), and
 * callable from any thread (weft calls it from the threads that call MPI). Every callback
 * returns 0 on success, anything else on failure (weft then fails the call that needed it):
 *   set    stores len bytes under key (replacing any value);
 *   get    waits until key exists (up to the store's own timeout), then passes its value to
 *          sink once, before returning;
 *   add    adds delta to the integer under key (0 if absent) and gives the new value;
 *   check  tells, without waiting, whether key exists.
 * What the store holds comes from other processes: weft checks every value it reads.
 * Without a launcher's events, a rank learns of a peer's death on its own host by polling the
 * peer's process, and of one elsewhere from the transport.
 */
#ifndef WEFT_STORE_H
#define WEFT_STORE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*weft_store_sink_fn)(void *sink_ctx, const void *value, size_t len);

struct weft_store_ops {
    size_t struct_size; /* sizeof(struct weft_store_ops) */
    void *ctx;          /* passed to every callback */
    int rank, size;     /* this process's rank in the job, and the job's size */
    int (*set)(void *ctx, const char *key, const void *value, size_t len);
    int (*get)(void *ctx, const char *key, weft_store_sink_fn sink, void *sink_ctx);
    int (*add)(void *ctx, const char *key, long long delta, long long *result);
    int (*check)(void *ctx, const char *key, int *exists);
};

/* Copies *ops for the next initialisation. MPI_SUCCESS; MPI_ERR_ARG for a missing callback, a
 * struct_size too small, or a rank outside [0, size); MPI_ERR_OTHER once MPI is initialised.
 * ops NULL: forget a store set before. */
int weft_bootstrap_use_store(const struct weft_store_ops *ops);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_STORE_H */
