/* Disaggregated inference in miniature: a "prefill" process writes the KV cache of
 * layers x (K, V) x pages into a "decode" process with one request of many blocks, and the
 * decoder waits for the request's notification and checks every byte.
 *
 * The decoder keeps one region per layer and K/V, pages in order; the prefill keeps all its
 * pages in one region in a shuffled order, as a paged KV cache does, so every page is a block.
 *
 *   kv_prefill_decode [--layers N] [--pages P] [--page-bytes B] [--rounds R] [--device]
 *       runs both sides (the decoder forked), R rounds with new data each
 *   kv_prefill_decode --role decode|prefill --blob-dir DIR [same options]
 *       runs one side; the two meet through DIR/decode.blob (one round) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_pair.h"

typedef struct {
  int layers, pages, rounds, device;
  size_t page_bytes;
  const char *blob_dir;
} options_t;

static unsigned char cache_byte(int layer, int kv, int page, size_t k, int round) {
  return (unsigned char)(layer * 131 + kv * 71 + page * 17 + round * 7 + (int)(k * 3) + (int)(k >> 8));
}

static size_t region_bytes(const options_t *o) { return (size_t)o->pages * o->page_bytes; }
static int page_count(const options_t *o) { return o->layers * 2 * o->pages; }

static void blob_path(const options_t *o, char *out, size_t n) { snprintf(out, n, "%s/decode.blob", o->blob_dir); }

/* ---- decode ------------------------------------------------------------------------------- */

static void decode(int fd, void *arg) {
  const options_t *o = arg;
  weft_kv_agent_t agent;
  KV_CALL(weft_kv_agent_create("decode", &agent));
  const int regions = o->layers * 2;
  unsigned char *cache = kv_pair_alloc((size_t)regions * region_bytes(o), o->device);
  for (int r = 0; r < regions; ++r) {
    weft_kv_region_t id; /* regions are numbered 1, 2, ... in registration order */
    KV_CALL(weft_kv_register(agent, cache + (size_t)r * region_bytes(o), region_bytes(o), &id));
  }
  char path[4096];
  if (fd >= 0) {
    kv_pair_send_blob(fd, agent);
  } else {
    blob_path(o, path, sizeof path);
    kv_pair_write_blob(path, agent);
  }
  unsigned char *host = malloc(region_bytes(o));
  const int rounds = fd >= 0 ? o->rounds : 1;
  for (int round = 0; round < rounds; ++round) {
    char from[WEFT_KV_MAX_NAME + 1], msg[64];
    size_t n = 0;
    const double start = kv_pair_now();
    int rc;
    while ((rc = weft_kv_get_notification(agent, from, sizeof from, msg, sizeof msg - 1, &n)) ==
           WEFT_KV_NO_NOTIFICATION) {
      if (kv_pair_now() - start > 120) {
        fprintf(stderr, "decode: no notification within 120 s\n");
        exit(1);
      }
    }
    KV_CALL(rc);
    msg[n] = '\0';
    size_t bad = 0;
    for (int layer = 0; layer < o->layers; ++layer)
      for (int kv = 0; kv < 2; ++kv) {
        kv_pair_copy(host, cache + (size_t)(layer * 2 + kv) * region_bytes(o), region_bytes(o), o->device);
        for (int page = 0; page < o->pages; ++page)
          for (size_t k = 0; k < o->page_bytes; ++k)
            bad += host[(size_t)page * o->page_bytes + k] != cache_byte(layer, kv, page, k, round);
      }
    printf("decode: '%s' from %s: %d layers x (K, V) x %d pages of %zu bytes checked, %zu wrong bytes\n", msg, from,
           o->layers, o->pages, o->page_bytes, bad);
    fflush(stdout);
    if (bad) exit(1);
    if (fd >= 0) kv_pair_send_u64(fd, (uint64_t)round);
  }
  free(host);
  KV_CALL(weft_kv_agent_destroy(agent));
  kv_pair_free(cache, o->device);
}

/* ---- prefill ------------------------------------------------------------------------------ */

static void prefill(int fd, void *arg) {
  const options_t *o = arg;
  weft_kv_agent_t agent;
  KV_CALL(weft_kv_agent_create("prefill", &agent));
  const int pages = page_count(o);
  const size_t bytes = (size_t)pages * o->page_bytes;
  unsigned char *cache = kv_pair_alloc(bytes, o->device);
  unsigned char *host = malloc(bytes);
  weft_kv_region_t local;
  KV_CALL(weft_kv_register(agent, cache, bytes, &local));
  char path[4096];
  weft_kv_peer_t decoder;
  if (fd >= 0) {
    decoder = kv_pair_import(fd, agent);
  } else {
    blob_path(o, path, sizeof path);
    decoder = kv_pair_import_file(path, agent);
  }
  /* Where each (layer, K/V, page) lives in the prefill's cache: a fixed shuffle. */
  int *slot = malloc(sizeof(int) * (size_t)pages);
  for (int i = 0; i < pages; ++i) slot[i] = i;
  unsigned s = 12345;
  for (int i = pages - 1; i > 0; --i) {
    s = s * 1103515245u + 12345u;
    const int j = (int)((s >> 8) % (unsigned)(i + 1));
    const int t = slot[i];
    slot[i] = slot[j];
    slot[j] = t;
  }
  weft_kv_block_t *blocks = malloc(sizeof(weft_kv_block_t) * (size_t)pages);
  for (int layer = 0, b = 0; layer < o->layers; ++layer)
    for (int kv = 0; kv < 2; ++kv)
      for (int page = 0; page < o->pages; ++page, ++b)
        blocks[b] = (weft_kv_block_t){local, (uint64_t)slot[b] * o->page_bytes, (weft_kv_region_t)(layer * 2 + kv + 1),
                                      (uint64_t)page * o->page_bytes, o->page_bytes};
  const int rounds = fd >= 0 ? o->rounds : 1;
  for (int round = 0; round < rounds; ++round) {
    for (int layer = 0, b = 0; layer < o->layers; ++layer)
      for (int kv = 0; kv < 2; ++kv)
        for (int page = 0; page < o->pages; ++page, ++b)
          for (size_t k = 0; k < o->page_bytes; ++k)
            host[(size_t)slot[b] * o->page_bytes + k] = cache_byte(layer, kv, page, k, round);
    kv_pair_copy(cache, host, bytes, o->device);
    char note[64];
    snprintf(note, sizeof note, "kv ready: request %d", round);
    weft_kv_request_t req;
    KV_CALL(weft_kv_prepare(agent, WEFT_KV_WRITE, decoder, blocks, (size_t)pages, note, strlen(note), &req));
    const double start = kv_pair_now();
    KV_CALL(weft_kv_post(req));
    KV_CALL(weft_kv_wait(req, 120000));
    const double seconds = kv_pair_now() - start;
    printf("prefill: round %d: %d blocks, %zu bytes in %.3f ms (%.2f GB/s)\n", round, pages, bytes, seconds * 1e3,
           (double)bytes / seconds * 1e-9);
    fflush(stdout);
    KV_CALL(weft_kv_release(req));
    if (fd >= 0 && kv_pair_recv_u64(fd) != (uint64_t)round) {
      fprintf(stderr, "prefill: the decoder's acknowledgement is out of order\n");
      exit(1);
    }
  }
  free(blocks);
  free(slot);
  free(host);
  KV_CALL(weft_kv_agent_destroy(agent));
  kv_pair_free(cache, o->device);
}

static void usage(void) {
  fprintf(stderr,
          "usage: kv_prefill_decode [--layers N] [--pages P] [--page-bytes B] [--rounds R] [--device]\n"
          "                         [--role decode|prefill --blob-dir DIR]\n");
  exit(2);
}

int main(int argc, char **argv) {
  options_t o = {.layers = 8, .pages = 64, .rounds = 3, .device = 0, .page_bytes = 16384, .blob_dir = NULL};
  const char *role = NULL;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--device")) {
      o.device = 1;
    } else if (v && !strcmp(a, "--layers")) {
      o.layers = atoi(v), ++i;
    } else if (v && !strcmp(a, "--pages")) {
      o.pages = atoi(v), ++i;
    } else if (v && !strcmp(a, "--page-bytes")) {
      o.page_bytes = (size_t)strtoull(v, NULL, 10), ++i;
    } else if (v && !strcmp(a, "--rounds")) {
      o.rounds = atoi(v), ++i;
    } else if (v && !strcmp(a, "--role")) {
      role = v, ++i;
    } else if (v && !strcmp(a, "--blob-dir")) {
      o.blob_dir = v, ++i;
    } else {
      usage();
    }
  }
  if (o.layers < 1 || o.pages < 1 || o.rounds < 1 || o.page_bytes < 1) usage();
  if (o.device && !kv_pair_have_device()) {
    printf("kv_prefill_decode: no CUDA device: skipped\n");
    return 77;
  }
  if (role) {
    if (!o.blob_dir) usage();
    if (!strcmp(role, "decode"))
      decode(-1, &o);
    else if (!strcmp(role, "prefill"))
      prefill(-1, &o);
    else
      usage();
    return 0;
  }
  const int rc = kv_pair_run(prefill, decode, &o);
  printf("kv_prefill_decode: %s\n", rc == 0 ? "every byte arrived" : "FAILED");
  return rc;
}
