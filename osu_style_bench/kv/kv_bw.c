/* KV transfer sweep: WRITE bandwidth of one request of N blocks of B bytes (B from 4 KiB to
 * 1 MiB, N from 1 to 4,096, at most --max-bytes in all), prepared once and posted again and
 * again, between two processes (the decoder forked), against one transfer of --max-bytes in
 * a single block. The decoder checks the bytes of the last transfer.
 *   kv_bw [--device] [--max-bytes M] [--iters N] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_pair.h"

typedef struct {
  int device, iters;
  size_t max_bytes;
} options_t;

static unsigned char pattern(size_t i) { return (unsigned char)(i * 7 + (i >> 12)); }

static void decode(int fd, void *arg) {
  const options_t *o = arg;
  weft_kv_agent_t agent;
  KV_CALL(weft_kv_agent_create("decode", &agent));
  unsigned char *dst = kv_pair_alloc(o->max_bytes, o->device);
  weft_kv_region_t id;
  KV_CALL(weft_kv_register(agent, dst, o->max_bytes, &id));
  kv_pair_send_blob(fd, agent);
  (void)kv_pair_recv_u64(fd); /* the sweep is over; the progress thread landed the data */
  unsigned char *host = malloc(o->max_bytes);
  kv_pair_copy(host, dst, o->max_bytes, o->device);
  size_t bad = 0;
  for (size_t i = 0; i < o->max_bytes; ++i) bad += host[i] != pattern(i);
  kv_pair_send_u64(fd, bad);
  free(host);
  KV_CALL(weft_kv_agent_destroy(agent));
  kv_pair_free(dst, o->device);
}

/* Seconds per post of `count` blocks of `block` bytes. */
static double measure(weft_kv_agent_t agent, weft_kv_peer_t peer, weft_kv_region_t local, size_t block, size_t count,
                      int iters) {
  weft_kv_block_t *b = malloc(sizeof(weft_kv_block_t) * count);
  for (size_t i = 0; i < count; ++i) b[i] = (weft_kv_block_t){local, i * block, 1, i * block, block};
  weft_kv_request_t req;
  KV_CALL(weft_kv_prepare(agent, WEFT_KV_WRITE, peer, b, count, NULL, 0, &req));
  KV_CALL(weft_kv_post(req)); /* warm-up: connection and registration caches */
  KV_CALL(weft_kv_wait(req, 120000));
  const double start = kv_pair_now();
  for (int it = 0; it < iters; ++it) {
    KV_CALL(weft_kv_post(req));
    KV_CALL(weft_kv_wait(req, 120000));
  }
  const double per_post = (kv_pair_now() - start) / iters;
  KV_CALL(weft_kv_release(req));
  free(b);
  return per_post;
}

static void prefill(int fd, void *arg) {
  const options_t *o = arg;
  weft_kv_agent_t agent;
  KV_CALL(weft_kv_agent_create("prefill", &agent));
  unsigned char *src = kv_pair_alloc(o->max_bytes, o->device);
  unsigned char *host = malloc(o->max_bytes);
  for (size_t i = 0; i < o->max_bytes; ++i) host[i] = pattern(i);
  kv_pair_copy(src, host, o->max_bytes, o->device);
  free(host);
  weft_kv_region_t local;
  KV_CALL(weft_kv_register(agent, src, o->max_bytes, &local));
  weft_kv_peer_t peer = kv_pair_import(fd, agent);

  printf("# weft KV transfer sweep: WRITE, %s memory, one request of N blocks, posted repeatedly\n",
         o->device ? "device" : "host");
  printf("%-12s %8s %14s %12s %10s\n", "# block", "blocks", "bytes", "us/post", "GB/s");
  const double single = measure(agent, peer, local, o->max_bytes, 1, o->iters);
  double at_64k_4096 = 0;
  const size_t blocks[] = {4096, 16384, 65536, 262144, 1048576};
  const size_t counts[] = {1, 16, 256, 4096};
  for (int bi = 0; bi < 5; ++bi)
    for (int ci = 0; ci < 4; ++ci) {
      const size_t total = blocks[bi] * counts[ci];
      if (total > o->max_bytes) continue;
      int iters = (int)(((size_t)o->iters * o->max_bytes) / total);
      if (iters > 200) iters = 200;
      const double t = measure(agent, peer, local, blocks[bi], counts[ci], iters);
      printf("%-12zu %8zu %14zu %12.1f %10.2f\n", blocks[bi], counts[ci], total, t * 1e6, (double)total / t * 1e-9);
      if (blocks[bi] == 65536 && counts[ci] == 4096) at_64k_4096 = (double)total / t;
    }
  const double single_bw = (double)o->max_bytes / single;
  printf("%-12zu %8d %14zu %12.1f %10.2f  (one block)\n", o->max_bytes, 1, o->max_bytes, single * 1e6, single_bw * 1e-9);
  if (at_64k_4096 > 0)
    printf("# 4096 x 64 KiB reaches %.0f%% of one %zu-byte transfer\n", 100 * at_64k_4096 / single_bw, o->max_bytes);
  /* The last post wrote every byte once more: the decoder checks them. */
  kv_pair_send_u64(fd, 1);
  const uint64_t bad = kv_pair_recv_u64(fd);
  printf("# decoder check: %llu wrong bytes of %zu\n", (unsigned long long)bad, o->max_bytes);
  KV_CALL(weft_kv_agent_destroy(agent));
  kv_pair_free(src, o->device);
  if (bad) exit(1);
}

int main(int argc, char **argv) {
  options_t o = {.device = 0, .iters = 5, .max_bytes = (size_t)256 << 20};
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--device")) {
      o.device = 1;
    } else if (i + 1 < argc && !strcmp(argv[i], "--max-bytes")) {
      o.max_bytes = (size_t)strtoull(argv[++i], NULL, 10);
    } else if (i + 1 < argc && !strcmp(argv[i], "--iters")) {
      o.iters = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: kv_bw [--device] [--max-bytes M] [--iters N]\n");
      return 2;
    }
  }
  if (o.iters < 1 || o.max_bytes < 4096) return 2;
  if (o.device && !kv_pair_have_device()) {
    printf("kv_bw: no CUDA device: skipped\n");
    return 77;
  }
  return kv_pair_run(prefill, decode, &o);
}
