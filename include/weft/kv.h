/* weft KV transfer API: one-sided, non-blocking, many-block transfers between agents, for
 * moving KV-cache pages from prefill workers to decode workers.
 *
 * Usable without MPI_Init: an agent has its own UCX context and worker. Two agents meet by
 * exchanging metadata blobs (weft_kv_export / weft_kv_import) by any means (file, socket,
 * MPI); they may belong to different jobs. A transfer request is a list of blocks prepared
 * once and posted any number of times. A WRITE may carry a notification that the remote
 * agent receives after every byte of that post has landed.
 *
 * The agent that registers a region owns it and is the only one that touches it: a blob is
 * sealed with the owner's secret key and names the regions it grants; importing it asks the
 * owner to vouch for it, and every block of every request is checked by the owner against
 * what it has registered before it copies bytes in or out. A blob edited by anyone else, or
 * one naming a region deregistered since, is refused with WEFT_KV_ERR_BLOB. Whoever holds a
 * valid blob may transfer to and from its regions until they are deregistered.
 *
 * Threading: one thread at a time per agent (different agents are independent).
 * Every function returns WEFT_KV_SUCCESS or a negative weft_kv_status_t; weft_kv_last_error()
 * describes the most recent error of the calling thread. */
#ifndef WEFT_KV_H
#define WEFT_KV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_KV_BLOB_VERSION 3
#define WEFT_KV_MAX_NAME 255         /* bytes of an agent name */
#define WEFT_KV_MAX_NOTIFICATION 4096 /* bytes of one notification message */

typedef enum {
  WEFT_KV_SUCCESS = 0,
  WEFT_KV_IN_PROGRESS = 1,       /* weft_kv_test: posted and not finished yet */
  WEFT_KV_NO_NOTIFICATION = 2,   /* weft_kv_get_notification: none has arrived */
  WEFT_KV_ERR_ARG = -1,          /* a bad argument (null handle, unknown region, zero length) */
  WEFT_KV_ERR_RANGE = -2,        /* a block outside its local or remote region, or one the
                                    owner refused (a region not granted or deregistered) */
  WEFT_KV_ERR_BLOB = -3,         /* a blob that is corrupt, truncated, of another version, or
                                    that its owner does not vouch for (forged or stale) */
  WEFT_KV_ERR_PEER = -4,         /* the remote agent is gone or unreachable */
  WEFT_KV_ERR_BUSY = -5,         /* posting a request that is still in progress */
  WEFT_KV_ERR_NO_MEMORY = -6,
  WEFT_KV_ERR_NOT_SUPPORTED = -7,
  WEFT_KV_ERR_TRANSPORT = -8,    /* UCX failed */
  WEFT_KV_ERR_TIMEOUT = -9,      /* weft_kv_wait ran out of time; the request stays posted */
  WEFT_KV_ERR_TOO_SMALL = -10    /* an output buffer too small; the needed size is returned */
} weft_kv_status_t;

typedef enum { WEFT_KV_WRITE = 0, WEFT_KV_READ = 1 } weft_kv_op_t;

typedef struct weft_kv_agent_s *weft_kv_agent_t;
typedef struct weft_kv_request_s *weft_kv_request_t;
typedef uint32_t weft_kv_region_t; /* a local region, or a region of an imported agent */
typedef uint32_t weft_kv_peer_t;   /* an imported remote agent */

/* One block: `length` bytes between a local region and a remote region. WRITE copies local to
 * remote, READ remote to local. */
typedef struct {
  weft_kv_region_t local_region;
  uint64_t local_offset;
  weft_kv_region_t remote_region;
  uint64_t remote_offset;
  uint64_t length;
} weft_kv_block_t;

int weft_kv_agent_create(const char *name, weft_kv_agent_t *agent);
/* Releases every request, import and region of the agent. */
int weft_kv_agent_destroy(weft_kv_agent_t agent);

/* Registers [base, base + length) of host or CUDA device memory (detected) for transfers.
 * An agent numbers its regions 1, 2, 3, ... in registration order, so two sides that agree on
 * a layout agree on region ids; blocks name a remote region by that id. Device regions are
 * reachable from agents on the same host (CUDA IPC); copies between local device memory and a
 * remote host region are not supported. */
int weft_kv_register(weft_kv_agent_t agent, void *base, size_t length, weft_kv_region_t *region);
int weft_kv_deregister(weft_kv_agent_t agent, weft_kv_region_t region);

/* The agent's metadata (name, address, regions) as a sealed blob: a capability to its regions
 * registered now. With blob == NULL or capacity too small, *length gets the size needed (and
 * WEFT_KV_ERR_TOO_SMALL when blob != NULL). */
int weft_kv_export(weft_kv_agent_t agent, void *blob, size_t capacity, size_t *length);
/* Checks a remote agent's blob, connects to that agent and has it vouch for the blob (its seal,
 * its regions as registered now): WEFT_KV_ERR_BLOB when it does not, WEFT_KV_ERR_PEER when it
 * does not answer within WEFT_KV_IMPORT_TIMEOUT ms. The owner must progress (its progress
 * thread, or weft_kv_progress) to answer. */
int weft_kv_import(weft_kv_agent_t agent, const void *blob, size_t length, weft_kv_peer_t *peer);
int weft_kv_forget(weft_kv_agent_t agent, weft_kv_peer_t peer);
/* The imported agent's name (NUL-terminated, truncated to capacity). */
int weft_kv_peer_name(weft_kv_agent_t agent, weft_kv_peer_t peer, char *name, size_t capacity);

/* Prepares a request of `count` blocks to `peer`, checking every block against its regions.
 * notification (may be NULL) is copied; a WRITE delivers it once per post, after the data. */
int weft_kv_prepare(weft_kv_agent_t agent, weft_kv_op_t op, weft_kv_peer_t peer,
                    const weft_kv_block_t *blocks, size_t count, const void *notification,
                    size_t notification_length, weft_kv_request_t *request);
/* Device-side completion: a prepared WRITE whose blocks all go to device regions of an agent
 * on this host also adds 1 to a 64-bit counter in the owner's device memory, on the GPU, right
 * after each post's data (no host on either side). The counter is the 8 bytes at remote_offset
 * (8-byte aligned) of the owner's device region remote_region, checked like a block; the owner
 * zeroes it before the first post and reads it with weft_kv_wait_signal_enqueue.
 * WEFT_KV_ERR_NOT_SUPPORTED for a READ, for blocks through host memory, or without CUDA. */
int weft_kv_set_device_signal(weft_kv_request_t request, weft_kv_region_t remote_region, uint64_t remote_offset);
/* Enqueues on `stream` (a cudaStream_t) a wait until the counter at device_word (this
 * process's device memory) reaches `value`; work enqueued after it sees the data of the posts
 * it counted. Returns at once. The wait also ends, without the data, when the agent finds a
 * peer gone or is destroyed, so a GPU stream never waits for a dead producer: check the
 * counter (or weft_kv_agent's status) before trusting what follows. */
int weft_kv_wait_signal_enqueue(weft_kv_agent_t agent, const uint64_t *device_word, uint64_t value,
                                void *stream);
/* Starts the transfer and returns without waiting. */
int weft_kv_post(weft_kv_request_t request);
/* WEFT_KV_SUCCESS when the last post has finished, WEFT_KV_IN_PROGRESS, or its error. */
int weft_kv_test(weft_kv_request_t request);
/* Waits up to timeout_ms milliseconds (negative: no limit, but a dead peer still ends it). */
int weft_kv_wait(weft_kv_request_t request, int timeout_ms);
/* Frees the request; an active one is cancelled (its notification is not sent). */
int weft_kv_release(weft_kv_request_t request);

/* Drives the agent's communication (incoming notifications, one-sided traffic). */
int weft_kv_progress(weft_kv_agent_t agent);
/* Takes the oldest notification: the sender's name into `from` (NUL-terminated, truncated to
 * from_capacity) and the message into `message`. WEFT_KV_NO_NOTIFICATION if none arrived;
 * WEFT_KV_ERR_TOO_SMALL (notification kept, *length set) if message_capacity is too small. */
int weft_kv_get_notification(weft_kv_agent_t agent, char *from, size_t from_capacity,
                             void *message, size_t message_capacity, size_t *length);

const char *weft_kv_status_string(int status);
const char *weft_kv_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_KV_H */
