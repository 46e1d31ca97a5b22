/* weft profiler plugin: the ABI.
 *
 * A tool sees inside a job through a plugin: a shared object named by WEFT_PROFILER_PLUGIN,
 * loaded with dlopen at MPI_Init (after the launcher's bootstrap, so the job is known), that
 * exports
 *
 *   const struct weft_profiler_plugin *weft_profiler_plugin_v1(void);
 *
 * (WEFT_PROFILER_ENTRY_V1). weft checks the table's abi_version and struct_size before calling
 * anything else; a plugin that cannot be loaded, or refuses init, fails MPI_Init with a message
 * (a profile silently missing is worse than none).
 *
 * Call sequence, from the threads that call MPI (one at a time unless the job runs
 * MPI_THREAD_MULTIPLE, when the plugin must be thread safe):
 *   init once  ->  start_event / stop_event / record_event_state, any number of times  ->
 *   finalize once, in MPI_Finalize.
 * init says which event types the plugin wants (event_mask); weft does not build events of the
 * others, so a type left out costs one predictable branch per site.
 *
 * Events nest: each carries its parent's handle (the handle start_event returned for it, or
 * NULL at the top), open when the child starts:
 *   API call (an MPI function: point-to-point, collectives, the wait and test family,
 *   one-sided synchronisation)
 *     -> collective (with the algorithm chosen), or a blocking point-to-point operation
 *       -> schedule round of a collective
 *         -> transfer (one message to or from one peer: bytes and transport)
 *   A non-blocking call's transfer hangs under its API call and outlives it: it stops when
 *   weft learns it has completed (MPI_Wait and friends, or the request's release), not when
 *   the network finished it. A collective's transfers stop at the end of their round.
 *   RMA epochs are top-level (they outlive the calls that open them): from a fence to the
 *   next, lock to unlock (peer: the target's rank in the window), lock_all to unlock_all,
 *   start to complete, post to wait.
 *   GPU work is top-level too, and reported late: the kernels and copies weft enqueues on a
 *   stream for one collective (blocking or stream-ordered) or one CUDA IPC copy are timed with
 *   CUDA events, and weft starts and stops their event at once when it sees the work complete,
 *   giving the device's times in start_ns and end_ns (the first GPU event of a process waits
 *   for an empty stream of its own once, to place the device's clock on CLOCK_MONOTONIC).
 *   KV-cache transfers (include/weft/kv.h) are top-level: from weft_kv_post to the
 *   weft_kv_test or weft_kv_wait that sees them finished (or weft_kv_release).
 * Not reported yet: the messages weft sends for itself (one-sided control messages,
 * fault-tolerance agreements) and device copies of point-to-point staging.
 *
 * Every function returns WEFT_PROFILER_OK or a negative weft_profiler_status_t. Timestamps are
 * the plugin's to take (weft passes none); CLOCK_MONOTONIC is what MPI_Wtime reads. */
#ifndef WEFT_PROFILER_H
#define WEFT_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_PROFILER_ABI_VERSION 1
#define WEFT_PROFILER_ENTRY_V1 "weft_profiler_plugin_v1"

typedef enum {
  WEFT_PROFILER_OK = 0,
  WEFT_PROFILER_ERR_ARG = -1,
  WEFT_PROFILER_ERR_NO_MEMORY = -2,
  WEFT_PROFILER_ERR_INTERNAL = -3
} weft_profiler_status_t;

/* Event types, as bits of the event mask. */
typedef enum {
  WEFT_PROFILER_API = 1u << 0,       /* an MPI call: name */
  WEFT_PROFILER_COLL = 1u << 1,      /* a collective: name, algorithm, comm, seq, bytes */
  WEFT_PROFILER_P2P = 1u << 2,       /* a point-to-point operation: name, peer, bytes, tag */
  WEFT_PROFILER_ROUND = 1u << 3,     /* one round of a collective's schedule: round */
  WEFT_PROFILER_TRANSFER = 1u << 4,  /* one message: name ("send"/"recv"), peer, bytes, transport */
  WEFT_PROFILER_RMA_EPOCH = 1u << 5, /* an access epoch on a window: name, peer (lock target or -1) */
  WEFT_PROFILER_GPU = 1u << 6,       /* work on a GPU stream: name (the algorithm or "ipc_copy"), bytes,
                                        comm, start_ns, end_ns */
  WEFT_PROFILER_KV = 1u << 7         /* a KV-cache transfer: name ("kv_write"/"kv_read"), bytes */
} weft_profiler_event_type_t;

/* What record_event_state reports. */
typedef enum {
  WEFT_PROFILER_STATE_FAILED = 1 /* the operation ended with an error: value = weft's status */
} weft_profiler_state_t;

typedef struct weft_profiler_event {
  size_t struct_size;     /* sizeof(weft_profiler_event_t) of the weft that made it */
  uint32_t type;          /* one weft_profiler_event_type_t */
  void *parent;           /* the enclosing event's handle, or NULL */
  const char *name;       /* static storage: the MPI function, collective or transfer kind */
  const char *algorithm;  /* COLL: the algorithm chosen (static storage); else NULL */
  const char *transport;  /* TRANSFER: "shm", "ucx" or "self"; else NULL */
  int peer;               /* P2P, TRANSFER: the peer's rank in the job; RMA_EPOCH: the lock's target
                             in the window; -1: none or any */
  int tag;                /* P2P: the MPI tag, or -1 */
  uint64_t bytes;         /* P2P, TRANSFER: the message's bytes; COLL: the bytes this rank sends */
  uint32_t comm;          /* COLL, P2P: the communicator's context id */
  int comm_size;          /* COLL: members of the communicator */
  uint32_t seq;           /* COLL: the collective's number on its communicator (grows by one or more
                             per collective) */
  int round;              /* ROUND: the round's index in its schedule, from 0 */
  /* Added within version 1 (check struct_size): GPU: when the work ran on the device, in
   * CLOCK_MONOTONIC nanoseconds (the report comes after it); 0 for the other types. */
  uint64_t start_ns;
  uint64_t end_ns;
} weft_profiler_event_t;

typedef struct weft_profiler_job_info {
  size_t struct_size;
  int rank;               /* in the job (MPI_COMM_WORLD) */
  int size;
  int local_rank;         /* on this host */
  int local_size;
  const char *job_id;     /* the launcher's namespace */
  const char *version;    /* weft's version */
} weft_profiler_job_info_t;

/* Log levels of the callback weft passes to init (its own WEFT_DEBUG filter applies). */
typedef enum { WEFT_PROFILER_LOG_ERROR = 0, WEFT_PROFILER_LOG_WARN = 1, WEFT_PROFILER_LOG_INFO = 2 } weft_profiler_log_level_t;
typedef void (*weft_profiler_log_fn)(int level, const char *message);

typedef struct weft_profiler_plugin {
  uint32_t abi_version;   /* WEFT_PROFILER_ABI_VERSION */
  uint32_t struct_size;   /* sizeof(weft_profiler_plugin_t) */
  const char *name;

  /* *event_mask on entry: every type this weft reports; on return, the types wanted. */
  int (*init)(void **context, const weft_profiler_job_info_t *job, uint32_t *event_mask, weft_profiler_log_fn log);
  /* *handle: what later calls pass back for this event (may be NULL: no stop_event follows). */
  int (*start_event)(void *context, void **handle, const weft_profiler_event_t *event);
  int (*stop_event)(void *handle);
  int (*record_event_state)(void *handle, int state, int64_t value);
  int (*finalize)(void *context);
  /* Optional: the last error's text. */
  const char *(*last_error)(void *context);
} weft_profiler_plugin_t;

typedef const weft_profiler_plugin_t *(*weft_profiler_entry_v1_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_PROFILER_H */
