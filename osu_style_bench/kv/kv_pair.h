/* Two processes that meet through the KV transfer API (include/weft/kv.h): run_pair forks a
 * "decode" child, and the two exchange blobs and small messages over a socket pair; or, given
 * a blob file, each side runs as its own command. Memory may be host or CUDA device memory. */
#ifndef WEFT_KV_PAIR_H
#define WEFT_KV_PAIR_H

#include <stddef.h>
#include <stdint.h>

#include <weft/kv.h>

/* Exits with a message (and weft_kv_last_error) when a KV call fails. */
#define KV_CALL(call)                                                              \
  do {                                                                             \
    int kv_rc_ = (call);                                                           \
    if (kv_rc_ != WEFT_KV_SUCCESS) kv_pair_die(#call, kv_rc_, __FILE__, __LINE__); \
  } while (0)
void kv_pair_die(const char *what, int rc, const char *file, int line);

/* Host memory, or device memory when device is set (zeroed either way). */
void *kv_pair_alloc(size_t bytes, int device);
void kv_pair_free(void *p, int device);
void kv_pair_copy(void *dst, const void *src, size_t bytes, int device);
/* Whether a CUDA device is there (0 in a build without CUDA). */
int kv_pair_have_device(void);

void kv_pair_send(int fd, const void *p, size_t n);
void kv_pair_recv(int fd, void *p, size_t n);
void kv_pair_send_u64(int fd, uint64_t v);
uint64_t kv_pair_recv_u64(int fd);
/* Sends the agent's blob; receives one and imports it. */
void kv_pair_send_blob(int fd, weft_kv_agent_t agent);
weft_kv_peer_t kv_pair_import(int fd, weft_kv_agent_t agent);
/* The same through a file: write it, or wait up to 60 s for it to appear and import it. */
void kv_pair_write_blob(const char *path, weft_kv_agent_t agent);
weft_kv_peer_t kv_pair_import_file(const char *path, weft_kv_agent_t agent);

/* Forks: decode(fd) runs in the child, prefill(fd) here; returns once both are done, 0 when
 * both succeeded. CUDA must not have been used in this process before (a forked child cannot
 * use its parent's CUDA context). */
int kv_pair_run(void (*prefill)(int fd, void *arg), void (*decode)(int fd, void *arg), void *arg);

double kv_pair_now(void);

#endif
