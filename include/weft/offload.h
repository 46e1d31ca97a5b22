/* weft in-network reduction offload: the plugin ABI.
 *
 * On fabrics whose switches reduce data in flight (SHARP-style), each node leader sends its
 * contribution once and receives the result, instead of log p or 2(p-1) network steps. weft
 * reaches such hardware through a plugin: a shared object named by WEFT_OFFLOAD_PLUGIN,
 * loaded with dlopen at MPI_Init, that exports
 *
 *   const struct weft_offload_plugin *weft_offload_plugin_v1(void);
 *
 * (WEFT_OFFLOAD_ENTRY_V1). weft checks the returned table's abi_version and struct_size before
 * calling anything else: an unknown version is refused with a message naming both versions.
 *
 * Call sequence, all from the thread that calls MPI:
 *   init once per process  ->  comm_setup by each node leader of a communicator that spans
 *   nodes (may decline)  ->  query  ->  post / test, any number of times, one operation in
 *   flight per communicator  ->  comm_teardown  ->  finalize once.
 * Non-leaders never call the plugin: weft reduces within each node first and broadcasts the
 * leader's result afterwards. Every leader of a communicator posts the same operations in the
 * same order.
 *
 * Every function returns WEFT_OFFLOAD_OK or a negative weft_offload_status_t; after an error,
 * last_error (if set) describes it. */
#ifndef WEFT_OFFLOAD_H
#define WEFT_OFFLOAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_OFFLOAD_ABI_VERSION 1
#define WEFT_OFFLOAD_ENTRY_V1 "weft_offload_plugin_v1"

typedef enum {
  WEFT_OFFLOAD_OK = 0,
  WEFT_OFFLOAD_DECLINED = 1,     /* comm_setup: not for this communicator (weft uses host algorithms) */
  WEFT_OFFLOAD_ERR_ARG = -1,     /* a bad argument */
  WEFT_OFFLOAD_ERR_UNSUPPORTED = -2, /* an operation the capabilities do not cover */
  WEFT_OFFLOAD_ERR_NO_MEMORY = -3,
  WEFT_OFFLOAD_ERR_NETWORK = -4, /* the aggregation service is unreachable or gone */
  WEFT_OFFLOAD_ERR_PROTOCOL = -5,/* a malformed or unexpected answer */
  WEFT_OFFLOAD_ERR_TIMEOUT = -6, /* no progress within the plugin's time limit */
  WEFT_OFFLOAD_ERR_INTERNAL = -7
} weft_offload_status_t;

/* Collectives, element types and operations, as bits of the capability masks. */
typedef enum {
  WEFT_OFFLOAD_ALLREDUCE = 1u << 0,
  WEFT_OFFLOAD_REDUCE_SCATTER = 1u << 1,
  WEFT_OFFLOAD_ALLGATHER = 1u << 2,
  WEFT_OFFLOAD_BARRIER = 1u << 3
} weft_offload_coll_t;

typedef enum {
  WEFT_OFFLOAD_INT32 = 0,
  WEFT_OFFLOAD_UINT32 = 1,
  WEFT_OFFLOAD_INT64 = 2,
  WEFT_OFFLOAD_UINT64 = 3,
  WEFT_OFFLOAD_FLOAT32 = 4,
  WEFT_OFFLOAD_FLOAT64 = 5,
  WEFT_OFFLOAD_DTYPE_COUNT = 6
} weft_offload_dtype_t;

typedef enum {
  WEFT_OFFLOAD_SUM = 0,
  WEFT_OFFLOAD_PROD = 1,
  WEFT_OFFLOAD_MIN = 2,
  WEFT_OFFLOAD_MAX = 3,
  WEFT_OFFLOAD_BAND = 4, /* integer types only */
  WEFT_OFFLOAD_BOR = 5,
  WEFT_OFFLOAD_BXOR = 6,
  WEFT_OFFLOAD_OP_COUNT = 7
} weft_offload_op_t;

/* Log levels of the callback weft passes to init (its own WEFT_DEBUG filter applies). */
typedef enum { WEFT_OFFLOAD_LOG_ERROR = 0, WEFT_OFFLOAD_LOG_WARN = 1, WEFT_OFFLOAD_LOG_INFO = 2, WEFT_OFFLOAD_LOG_TRACE = 3 } weft_offload_log_level_t;
typedef void (*weft_offload_log_fn)(int level, const char *message);

struct weft_offload_node_info {
  uint32_t struct_size;     /* sizeof(struct weft_offload_node_info) of the caller */
  const char *job_id;       /* names the job (the PMIx namespace) */
  int32_t job_rank, job_size;
  uint32_t node_id, node_count; /* this process's node (virtual nodes under WEFT_FAKE_NODES) */
  const char *hostname;
  /* The value of a registered WEFT_* setting as weft read it at init (weft_info --config lists
   * them), or NULL when unset. A plugin takes its settings from here, not from the environment. */
  const char *(*setting)(const char *name);
};

struct weft_offload_comm_info {
  uint32_t struct_size;
  uint64_t comm_key;        /* the same at every leader of the communicator, unique per setup */
  int32_t leader_index;     /* this leader's place among the leaders, 0..leader_count-1 */
  int32_t leader_count;
};

struct weft_offload_caps {
  uint32_t struct_size;
  uint32_t collectives;     /* weft_offload_coll_t bits */
  uint32_t dtypes;          /* 1 << weft_offload_dtype_t */
  uint32_t ops;             /* 1 << weft_offload_op_t */
  uint64_t max_bytes;       /* largest result of one operation */
  uint64_t fragment_bytes;  /* the service's reduction unit (for weft's cost model) */
};

/* One operation of a leader. Buffers are host memory and stay untouched by weft until test
 * reports completion.
 * - ALLREDUCE: send and recv hold count elements (send may equal recv).
 * - REDUCE_SCATTER: send holds count elements; recv receives the reduced elements
 *   [recv_offset, recv_offset + recv_count) of the result.
 * - ALLGATHER: send holds send_bytes bytes, this leader's contribution, which lands at byte
 *   send_offset of the result; recv receives the whole result of total_bytes bytes (the
 *   contributions of all leaders, which do not overlap and cover it).
 * - BARRIER: no buffers; completes once every leader has posted it. */
struct weft_offload_op_args {
  uint32_t struct_size;
  uint32_t coll;            /* one weft_offload_coll_t */
  uint32_t dtype;           /* reductions */
  uint32_t op;              /* reductions */
  const void *send;
  void *recv;
  uint64_t count;           /* ALLREDUCE, REDUCE_SCATTER: elements of the whole vector */
  uint64_t recv_offset, recv_count; /* REDUCE_SCATTER: elements */
  uint64_t send_offset, send_bytes, total_bytes; /* ALLGATHER: bytes */
};

struct weft_offload_plugin {
  uint32_t abi_version;     /* WEFT_OFFLOAD_ABI_VERSION the plugin was built for */
  uint32_t struct_size;     /* sizeof(struct weft_offload_plugin) of the plugin */
  const char *name;
  /* Once per process. A failure disables offload for the job's life (weft logs a WARN). */
  int (*init)(const struct weft_offload_node_info *node, weft_offload_log_fn log, void **plugin);
  /* By each node leader of a communicator that spans nodes; may return WEFT_OFFLOAD_DECLINED. */
  int (*comm_setup)(void *plugin, const struct weft_offload_comm_info *info, void **comm);
  int (*query)(void *comm, struct weft_offload_caps *caps);
  /* Starts an operation; *op identifies it to test. */
  int (*post)(void *comm, const struct weft_offload_op_args *args, void **op);
  /* Advances it without blocking: *done becomes 1 once recv holds the result (op is then
   * released). An error ends the operation (and may end the communicator's offload). */
  int (*test)(void *comm, void *op, int *done);
  /* Optional (may be NULL): registration of buffers the service reads or writes directly. */
  int (*mem_register)(void *plugin, void *addr, size_t bytes, void **handle);
  int (*mem_deregister)(void *plugin, void *handle);
  void (*comm_teardown)(void *comm);
  void (*finalize)(void *plugin);
  /* Optional: the last error of the plugin or of one communicator (comm may be NULL). */
  const char *(*last_error)(void *plugin, void *comm);
};

typedef const struct weft_offload_plugin *(*weft_offload_entry_v1_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_OFFLOAD_H */
