/* The KV transfer API between two processes (a "prefill" parent and a "decode" child that
 * exchange blobs over a socket pair), without MPI:
 *   blocks    WRITE of 2,048 blocks of random sizes to random places, prepared once and
 *             posted three times with new data, each notification checked against every
 *             byte of the decoder's regions; then a READ of a random layout checked too
 *   order     four requests posted back to back: notifications arrive in posting order, and
 *             each one finds its own data in place
 *   errors    damaged blobs, blocks out of range, bad arguments
 *   peer_exit the decoder exits while the prefill keeps posting: WEFT_KV_ERR_PEER, no hang
 *   forged    the owner is the authority: blobs edited by someone without its key (a region
 *             grown, a base moved, another process's pid) and a stale blob are refused with
 *             WEFT_KV_ERR_BLOB; an importer that skips its own checks (WEFT_KV_UNCHECKED_PREPARE)
 *             is refused block by block by the owner; neither the owner's unregistered memory
 *             nor a bystander process's memory changes, and no unregistered byte is read
 *   signal    device-side completion: a WRITE to device regions advances a counter in the
 *             owner's device memory that a wait on the owner's stream holds for (host memory:
 *             refused)
 * Usage: kv_transfer [blocks|order|errors|peer_exit|forged|signal|all] [--device]
 * --device puts both sides' regions in GPU memory (exit 77, a skip, without a GPU). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <weft/kv.h>

#ifdef WEFT_TEST_CUDA
#include <cuda_runtime.h>
#endif

#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "[%s %d] check failed at line %d: %s: ", role, (int)getpid(), __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                             \
      fprintf(stderr, " (last error: %s)\n", weft_kv_last_error());            \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)
#define KV_OK(call) CHECK((rc = (call)) == WEFT_KV_SUCCESS, "%s", weft_kv_status_string(rc))

static const char *role = "main";
static int use_device = 0;

/* ---- memory that may be on the device ---------------------------------------------------- */

static void *mem_alloc(size_t n) {
#ifdef WEFT_TEST_CUDA
  if (use_device) {
    void *p = NULL;
    CHECK(cudaMalloc(&p, n) == cudaSuccess, "cudaMalloc of %zu bytes", n);
    CHECK(cudaMemset(p, 0, n) == cudaSuccess, "cudaMemset");
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
    return p;
  }
#endif
  void *p = calloc(1, n);
  CHECK(p != NULL, "calloc of %zu bytes", n);
  return p;
}

static void mem_free(void *p) {
#ifdef WEFT_TEST_CUDA
  if (use_device) {
    cudaFree(p);
    return;
  }
#endif
  free(p);
}

/* Copies between test memory and the host (plain memcpy for host memory). */
static void mem_copy(void *dst, const void *src, size_t n) {
#ifdef WEFT_TEST_CUDA
  if (use_device) {
    CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDefault) == cudaSuccess, "cudaMemcpy");
    return;
  }
#endif
  memcpy(dst, src, n);
}

/* ---- blob and message exchange over the socket ------------------------------------------- */

static void send_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t k = write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    CHECK(k > 0, "write to the peer: %s", strerror(errno));
    c += k;
    n -= (size_t)k;
  }
}

static void recv_all(int fd, void *p, size_t n) {
  char *c = p;
  while (n) {
    ssize_t k = read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    CHECK(k > 0, "read from the peer: %s", k == 0 ? "closed" : strerror(errno));
    c += k;
    n -= (size_t)k;
  }
}

static void send_u64(int fd, uint64_t v) { send_all(fd, &v, sizeof v); }
static uint64_t recv_u64(int fd) {
  uint64_t v;
  recv_all(fd, &v, sizeof v);
  return v;
}

static void send_blob(int fd, weft_kv_agent_t a) {
  int rc;
  size_t n = 0;
  KV_OK(weft_kv_export(a, NULL, 0, &n));
  unsigned char *b = malloc(n);
  KV_OK(weft_kv_export(a, b, n, &n));
  send_u64(fd, n);
  send_all(fd, b, n);
  free(b);
}

static unsigned char *recv_blob(int fd, size_t *n) {
  *n = (size_t)recv_u64(fd);
  CHECK(*n > 0 && *n < (1u << 24), "blob length %zu", *n);
  unsigned char *b = malloc(*n);
  recv_all(fd, b, *n);
  return b;
}

static weft_kv_peer_t import_from(int fd, weft_kv_agent_t a, const char *expect_name) {
  int rc;
  size_t n;
  unsigned char *b = recv_blob(fd, &n);
  weft_kv_peer_t peer;
  KV_OK(weft_kv_import(a, b, n, &peer));
  free(b);
  char name[64];
  KV_OK(weft_kv_peer_name(a, peer, name, sizeof name));
  CHECK(strcmp(name, expect_name) == 0, "imported agent is %s", name);
  return peer;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits for the next notification (at most 60 s), returning its sender and message. */
static size_t next_notification(weft_kv_agent_t a, char *from, char *msg, size_t cap) {
  const double end = now() + 60;
  for (;;) {
    size_t n = 0;
    int rc = weft_kv_get_notification(a, from, 64, msg, cap - 1, &n);
    if (rc == WEFT_KV_SUCCESS) {
      msg[n] = '\0';
      return n;
    }
    CHECK(rc == WEFT_KV_NO_NOTIFICATION, "%s", weft_kv_status_string(rc));
    CHECK(now() < end, "no notification within 60 s");
  }
}

/* ---- layouts ------------------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

enum { kRegionBytes = 8 << 20, kSlot = 8 << 10, kBlocks = 2 * (kRegionBytes / kSlot), kSourceBytes = 16 << 20 };

/* Block i goes into its own slot (a random permutation over the decoder's two regions), at a
 * random place in the slot, with a random length, from a random place of the source. */
static void make_layout(uint64_t seed, weft_kv_region_t src, const weft_kv_region_t dst[2], weft_kv_block_t *b) {
  uint64_t s = seed | 1;
  int slots[kBlocks];
  for (int i = 0; i < kBlocks; ++i) slots[i] = i;
  for (int i = kBlocks - 1; i > 0; --i) {
    int j = (int)(rng_next(&s) % (uint64_t)(i + 1));
    int t = slots[i];
    slots[i] = slots[j];
    slots[j] = t;
  }
  for (int i = 0; i < kBlocks; ++i) {
    const int slot = slots[i];
    const uint64_t length = 1 + rng_next(&s) % kSlot;
    b[i].local_region = src;
    b[i].local_offset = rng_next(&s) % (kSourceBytes - length + 1);
    b[i].remote_region = dst[slot / (kBlocks / 2)];
    b[i].remote_offset = (uint64_t)(slot % (kBlocks / 2)) * kSlot + rng_next(&s) % (kSlot - length + 1);
    b[i].length = length;
  }
}

static unsigned char source_byte(uint64_t i, int iter) { return (unsigned char)((i * 131u) ^ (i >> 11) ^ (unsigned)(iter * 29 + 1)); }

/* What the decoder's two regions hold after a WRITE of `layout` with the source of `iter`. */
static void expected_regions(const weft_kv_block_t *layout, const weft_kv_region_t dst[2], int iter, unsigned char *out) {
  memset(out, 0, 2 * (size_t)kRegionBytes);
  for (int i = 0; i < kBlocks; ++i) {
    unsigned char *d = out + (layout[i].remote_region == dst[0] ? 0 : kRegionBytes) + layout[i].remote_offset;
    for (uint64_t k = 0; k < layout[i].length; ++k) d[k] = source_byte(layout[i].local_offset + k, iter);
  }
}

/* The decoder: two regions, their ids sent to the prefill after the blob. */
typedef struct {
  weft_kv_agent_t agent;
  unsigned char *regions;  /* 2 * kRegionBytes, host or device */
  weft_kv_region_t ids[2];
} decoder_t;

static void decoder_start(decoder_t *d, int fd) {
  int rc;
  KV_OK(weft_kv_agent_create("decode", &d->agent));
  d->regions = mem_alloc(2 * (size_t)kRegionBytes);
  KV_OK(weft_kv_register(d->agent, d->regions, kRegionBytes, &d->ids[0]));
  KV_OK(weft_kv_register(d->agent, d->regions + kRegionBytes, kRegionBytes, &d->ids[1]));
  send_blob(fd, d->agent);
  send_u64(fd, d->ids[0]);
  send_u64(fd, d->ids[1]);
}

static void decoder_stop(decoder_t *d) {
  int rc;
  KV_OK(weft_kv_agent_destroy(d->agent));
  mem_free(d->regions);
}

/* ---- blocks ------------------------------------------------------------------------------- */

enum { kIters = 3 };

static void blocks_decode(int fd) {
  decoder_t d;
  decoder_start(&d, fd);
  const uint64_t seed = recv_u64(fd);
  weft_kv_block_t *layout = malloc(sizeof(weft_kv_block_t) * kBlocks);
  make_layout(seed, 1, d.ids, layout); /* the source id does not matter here */
  unsigned char *want = malloc(2 * (size_t)kRegionBytes), *got = malloc(2 * (size_t)kRegionBytes);
  for (int iter = 0; iter < kIters; ++iter) {
    char from[64], msg[128];
    next_notification(d.agent, from, msg, sizeof msg);
    char expect[32];
    snprintf(expect, sizeof expect, "layer batch %d", iter);
    CHECK(strcmp(from, "prefill") == 0 && strcmp(msg, expect) == 0, "notification '%s' from %s", msg, from);
    expected_regions(layout, d.ids, iter, want);
    mem_copy(got, d.regions, 2 * (size_t)kRegionBytes);
    for (size_t k = 0; k < 2 * (size_t)kRegionBytes; ++k)
      CHECK(got[k] == want[k], "iteration %d: byte %zu is %u, expected %u", iter, k, got[k], want[k]);
    if (iter + 1 < kIters) {
      unsigned char *zero = calloc(1, 2 * (size_t)kRegionBytes);
      mem_copy(d.regions, zero, 2 * (size_t)kRegionBytes);
      free(zero);
    }
    send_u64(fd, (uint64_t)iter);
  }
  (void)recv_u64(fd); /* the prefill's READ is done */
  free(layout);
  free(want);
  free(got);
  decoder_stop(&d);
}

static void blocks_prefill(int fd) {
  int rc;
  weft_kv_agent_t a;
  KV_OK(weft_kv_agent_create("prefill", &a));
  unsigned char *host = malloc(kSourceBytes);
  unsigned char *src = mem_alloc(kSourceBytes);
  weft_kv_region_t src_id;
  KV_OK(weft_kv_register(a, src, kSourceBytes, &src_id));
  weft_kv_peer_t peer = import_from(fd, a, "decode");
  weft_kv_region_t dst[2] = {(weft_kv_region_t)recv_u64(fd), (weft_kv_region_t)recv_u64(fd)};
  const uint64_t seed = 0x9e3779b97f4a7c15ull;
  send_u64(fd, seed);
  weft_kv_block_t *layout = malloc(sizeof(weft_kv_block_t) * kBlocks);
  make_layout(seed, src_id, dst, layout);
  weft_kv_request_t req;
  KV_OK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, layout, kBlocks, "x", 1, &req));
  weft_kv_release(req); /* a prepared request released before any post */
  for (int iter = 0; iter < kIters; ++iter) {
    char note[32];
    snprintf(note, sizeof note, "layer batch %d", iter);
    /* The notification is fixed at prepare: one request per message text. */
    KV_OK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, layout, kBlocks, note, strlen(note), &req));
    for (uint64_t k = 0; k < kSourceBytes; ++k) host[k] = source_byte(k, iter);
    mem_copy(src, host, kSourceBytes);
    KV_OK(weft_kv_post(req));
    KV_OK(weft_kv_wait(req, 60000));
    CHECK(recv_u64(fd) == (uint64_t)iter, "decoder's acknowledgement");
    KV_OK(weft_kv_release(req));
  }
  /* The same prepared request posted again and again (no notification): the data stays. */
  KV_OK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, layout, kBlocks, NULL, 0, &req));
  for (int again = 0; again < 3; ++again) {
    KV_OK(weft_kv_post(req));
    KV_OK(weft_kv_wait(req, 60000));
  }
  KV_OK(weft_kv_release(req));
  /* READ back a random layout of what the decoder now holds (the last iteration's data). */
  unsigned char *want = malloc(2 * (size_t)kRegionBytes);
  expected_regions(layout, dst, kIters - 1, want);
  weft_kv_block_t *back = malloc(sizeof(weft_kv_block_t) * kBlocks);
  make_layout(seed * 3, src_id, dst, back);
  unsigned char *zero = calloc(1, kSourceBytes);
  mem_copy(src, zero, kSourceBytes);
  free(zero);
  /* Reads into overlapping local places would race; read the first 1,024 blocks, each into
   * its own 8 KiB slot of the source region. */
  enum { kReads = 1024 };
  for (int i = 0; i < kReads; ++i) back[i].local_offset = (uint64_t)i * kSlot;
  KV_OK(weft_kv_prepare(a, WEFT_KV_READ, peer, back, kReads, NULL, 0, &req));
  KV_OK(weft_kv_post(req));
  KV_OK(weft_kv_wait(req, 60000));
  KV_OK(weft_kv_release(req));
  mem_copy(host, src, kSourceBytes);
  for (int i = 0; i < kReads; ++i) {
    const unsigned char *w = want + (back[i].remote_region == dst[0] ? 0 : kRegionBytes) + back[i].remote_offset;
    for (uint64_t k = 0; k < back[i].length; ++k)
      CHECK(host[back[i].local_offset + k] == w[k], "READ block %d byte %llu", i, (unsigned long long)k);
  }
  send_u64(fd, 1);
  printf("blocks: %d blocks x %d posts written and checked, %d blocks read back and checked\n", kBlocks, kIters + 3, kReads);
  free(back);
  free(want);
  free(layout);
  KV_OK(weft_kv_agent_destroy(a));
  mem_free(src);
  free(host);
}

/* ---- order -------------------------------------------------------------------------------- */

enum { kOrderRequests = 4, kOrderRounds = 5, kOrderBytes = kRegionBytes / kOrderRequests };

static void order_decode(int fd) {
  decoder_t d;
  decoder_start(&d, fd);
  unsigned char *got = malloc(kOrderBytes);
  for (int round = 0; round < kOrderRounds; ++round) {
    for (int r = 0; r < kOrderRequests; ++r) {
      char from[64], msg[128], expect[32];
      next_notification(d.agent, from, msg, sizeof msg);
      snprintf(expect, sizeof expect, "round %d request %d", round, r);
      CHECK(strcmp(msg, expect) == 0, "notification '%s', expected '%s'", msg, expect);
      /* Request r wrote its quarter of region 0 with the byte round * 16 + r + 1. */
      mem_copy(got, d.regions + (size_t)r * kOrderBytes, kOrderBytes);
      for (size_t k = 0; k < kOrderBytes; ++k)
        CHECK(got[k] == (unsigned char)(round * 16 + r + 1), "'%s' arrived before byte %zu of its data", msg, k);
    }
    send_u64(fd, (uint64_t)round);
  }
  free(got);
  decoder_stop(&d);
}

static void order_prefill(int fd) {
  int rc;
  weft_kv_agent_t a;
  KV_OK(weft_kv_agent_create("prefill", &a));
  unsigned char *src = mem_alloc((size_t)kRegionBytes);
  unsigned char *host = malloc(kRegionBytes);
  weft_kv_region_t src_id;
  KV_OK(weft_kv_register(a, src, kRegionBytes, &src_id));
  weft_kv_peer_t peer = import_from(fd, a, "decode");
  weft_kv_region_t dst[2] = {(weft_kv_region_t)recv_u64(fd), (weft_kv_region_t)recv_u64(fd)};
  for (int round = 0; round < kOrderRounds; ++round) {
    weft_kv_request_t req[kOrderRequests];
    for (int r = 0; r < kOrderRequests; ++r) memset(host + (size_t)r * kOrderBytes, round * 16 + r + 1, kOrderBytes);
    mem_copy(src, host, kRegionBytes);
    for (int r = 0; r < kOrderRequests; ++r) {
      /* Request r: its quarter in 64 blocks. */
      weft_kv_block_t b[64];
      for (int i = 0; i < 64; ++i) {
        const uint64_t at = (uint64_t)r * kOrderBytes + (uint64_t)i * (kOrderBytes / 64);
        b[i] = (weft_kv_block_t){src_id, at, dst[0], at, kOrderBytes / 64};
      }
      char note[32];
      snprintf(note, sizeof note, "round %d request %d", round, r);
      KV_OK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, b, 64, note, strlen(note), &req[r]));
    }
    for (int r = 0; r < kOrderRequests; ++r) KV_OK(weft_kv_post(req[r]));
    for (int r = kOrderRequests - 1; r >= 0; --r) KV_OK(weft_kv_wait(req[r], 60000));
    for (int r = 0; r < kOrderRequests; ++r) KV_OK(weft_kv_release(req[r]));
    CHECK(recv_u64(fd) == (uint64_t)round, "decoder's acknowledgement");
  }
  (void)dst[1];
  printf("order: %d rounds of %d requests, notifications in order, each after its data\n", kOrderRounds, kOrderRequests);
  KV_OK(weft_kv_agent_destroy(a));
  mem_free(src);
  free(host);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void errors_decode(int fd) {
  decoder_t d;
  decoder_start(&d, fd);
  (void)recv_u64(fd);
  decoder_stop(&d);
}

static void errors_prefill(int fd) {
  int rc;
  weft_kv_agent_t a;
  KV_OK(weft_kv_agent_create("prefill", &a));
  CHECK(weft_kv_agent_create("", &a) == WEFT_KV_ERR_ARG, "an empty name");
  unsigned char *src = mem_alloc(1 << 20);
  weft_kv_region_t src_id;
  KV_OK(weft_kv_register(a, src, 1 << 20, &src_id));
  CHECK(weft_kv_register(a, src, 0, &src_id) == WEFT_KV_ERR_ARG, "a zero-length region");
  size_t n;
  unsigned char *blob = recv_blob(fd, &n);
  weft_kv_region_t dst[2] = {(weft_kv_region_t)recv_u64(fd), (weft_kv_region_t)recv_u64(fd)};
  weft_kv_peer_t peer;
  /* Damaged copies of a real blob: every truncation, a flipped byte, another version. */
  for (size_t len = 0; len < n; len += (len < 64 ? 1 : 97)) {
    CHECK(weft_kv_import(a, blob, len, &peer) == WEFT_KV_ERR_BLOB, "truncated to %zu bytes", len);
    CHECK(strlen(weft_kv_last_error()) > 0, "no reason given");
  }
  for (size_t at = 0; at < n; at += 13) {
    blob[at] ^= 0x40;
    CHECK(weft_kv_import(a, blob, n, &peer) == WEFT_KV_ERR_BLOB, "byte %zu flipped", at);
    blob[at] ^= 0x40;
  }
  blob[8] = 9;
  CHECK(weft_kv_import(a, blob, n, &peer) == WEFT_KV_ERR_BLOB, "version 9");
  blob[8] = WEFT_KV_BLOB_VERSION;
  CHECK(weft_kv_import(a, NULL, n, &peer) == WEFT_KV_ERR_BLOB, "a null blob");
  KV_OK(weft_kv_import(a, blob, n, &peer));
  free(blob);
  weft_kv_request_t req;
  weft_kv_block_t b = {src_id, 0, dst[0], kRegionBytes - 100, 101};
  CHECK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, &b, 1, NULL, 0, &req) == WEFT_KV_ERR_RANGE, "past the remote region");
  b = (weft_kv_block_t){src_id, (1 << 20) - 10, dst[0], 0, 11};
  CHECK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, &b, 1, NULL, 0, &req) == WEFT_KV_ERR_RANGE, "past the local region");
  b = (weft_kv_block_t){src_id, 0, dst[0], UINT64_MAX, 2};
  CHECK(weft_kv_prepare(a, WEFT_KV_READ, peer, &b, 1, NULL, 0, &req) == WEFT_KV_ERR_RANGE, "an offset that wraps");
  b = (weft_kv_block_t){src_id, 0, 999, 0, 1};
  CHECK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, &b, 1, NULL, 0, &req) == WEFT_KV_ERR_ARG, "an unknown remote region");
  b = (weft_kv_block_t){src_id, 0, dst[1], 0, 0};
  CHECK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, &b, 1, NULL, 0, &req) == WEFT_KV_ERR_ARG, "an empty block");
  b = (weft_kv_block_t){src_id, 0, dst[1], 0, 8};
  CHECK(weft_kv_prepare(a, WEFT_KV_READ, peer, &b, 1, "n", 1, &req) == WEFT_KV_ERR_ARG, "a READ with a notification");
  CHECK(weft_kv_prepare(a, WEFT_KV_WRITE, peer + 100, &b, 1, NULL, 0, &req) == WEFT_KV_ERR_ARG, "an unknown agent");
  KV_OK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, &b, 1, NULL, 0, &req));
  CHECK(weft_kv_test(req) == WEFT_KV_ERR_ARG, "test before any post");
  CHECK(weft_kv_deregister(a, src_id) == WEFT_KV_ERR_BUSY, "deregistering a region a request uses");
  KV_OK(weft_kv_release(req));
  KV_OK(weft_kv_deregister(a, src_id));
  CHECK(weft_kv_deregister(a, src_id) == WEFT_KV_ERR_ARG, "deregistering twice");
  char small[4];
  size_t need = 0;
  CHECK(weft_kv_export(a, small, sizeof small, &need) == WEFT_KV_ERR_TOO_SMALL && need > sizeof small, "a small buffer");
  KV_OK(weft_kv_forget(a, peer));
  CHECK(weft_kv_forget(a, peer) == WEFT_KV_ERR_ARG, "forgetting twice");
  send_u64(fd, 1);
  printf("errors: damaged blobs, ranges and arguments refused\n");
  KV_OK(weft_kv_agent_destroy(a));
  mem_free(src);
}

/* ---- peer_exit ---------------------------------------------------------------------------- */

static void peer_exit_decode(int fd) {
  decoder_t d;
  decoder_start(&d, fd);
  (void)recv_u64(fd); /* the prefill is posting */
  usleep(20000);
  _exit(0); /* gone without a goodbye */
}

static void peer_exit_prefill(int fd, pid_t child) {
  int rc;
  weft_kv_agent_t a;
  KV_OK(weft_kv_agent_create("prefill", &a));
  unsigned char *src = mem_alloc(kRegionBytes);
  weft_kv_region_t src_id;
  KV_OK(weft_kv_register(a, src, kRegionBytes, &src_id));
  weft_kv_peer_t peer = import_from(fd, a, "decode");
  weft_kv_region_t dst[2] = {(weft_kv_region_t)recv_u64(fd), (weft_kv_region_t)recv_u64(fd)};
  weft_kv_block_t b[256];
  for (int i = 0; i < 256; ++i) b[i] = (weft_kv_block_t){src_id, (uint64_t)i * 32768, dst[i % 2], (uint64_t)(i / 2) * 32768, 32768};
  weft_kv_request_t req;
  KV_OK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, b, 256, "done", 4, &req));
  send_u64(fd, 1);
  const double start = now();
  int posts = 0;
  for (;;) {
    rc = weft_kv_post(req);
    if (rc == WEFT_KV_SUCCESS) rc = weft_kv_wait(req, 30000);
    if (rc != WEFT_KV_SUCCESS) break;
    ++posts;
    CHECK(now() - start < 30, "still posting after 30 s: the lost peer was not noticed");
  }
  CHECK(rc == WEFT_KV_ERR_PEER, "the transfer ended with %s, not a lost peer", weft_kv_status_string(rc));
  CHECK(weft_kv_post(req) == WEFT_KV_ERR_PEER, "posting again to the lost peer");
  printf("peer_exit: WEFT_KV_ERR_PEER after %d posts, %.2f s after the decoder was told to exit (%s)\n", posts,
         now() - start, weft_kv_last_error());
  KV_OK(weft_kv_release(req));
  KV_OK(weft_kv_agent_destroy(a));
  mem_free(src);
  (void)child;
}


/* ---- forged ------------------------------------------------------------------------------- */

/* Where a field of a version-3 blob starts (include/weft/kv.h, rma/kv/kv_blob.h). */
typedef struct {
  size_t pid, address, regions, region0_base, region0_length, checksum;
} blob_layout_t;

static uint16_t get_u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get_u32(const unsigned char *p) { return (uint32_t)get_u16(p) | (uint32_t)get_u16(p + 2) << 16; }
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static blob_layout_t blob_layout(const unsigned char *b, size_t n) {
  blob_layout_t l;
  size_t at = 8 + 4 + 4 + 16;  /* magic, version, total, instance */
  at += 2 + get_u16(b + at);   /* name */
  at += 2 + get_u16(b + at);   /* host */
  l.pid = at;
  at += 4 + 8;                 /* pid, start time */
  l.address = at;
  at += 4 + get_u32(b + at);   /* worker address */
  l.regions = at;
  at += 4;
  l.region0_base = at + 4 + 1 + 3;
  l.region0_length = l.region0_base + 8;
  l.checksum = n - 8;
  return l;
}

/* What anyone can do to a blob: recompute its plain checksum (the seal before it stays). */
static void fix_checksum(unsigned char *b, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i + 8 < n; ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  put_u64(b + n - 8, h);
}

enum { kForgedRegion = 1 << 20, kSecretBytes = 1 << 20 };
static unsigned char pattern_byte(size_t i, int salt) { return (unsigned char)(i * 17 + (i >> 9) + (unsigned)salt); }

/* A process that only holds memory: after the test it checks that nobody wrote it. */
static void bystander(int fd) {
  unsigned char *mem = malloc(kForgedRegion + kSecretBytes);
  for (size_t i = 0; i < (size_t)kForgedRegion + kSecretBytes; ++i) mem[i] = pattern_byte(i, 3);
  send_u64(fd, (uint64_t)(uintptr_t)mem);
  send_u64(fd, (uint64_t)getpid());
  (void)recv_u64(fd);
  for (size_t i = 0; i < (size_t)kForgedRegion + kSecretBytes; ++i)
    CHECK(mem[i] == pattern_byte(i, 3), "the bystander's byte %zu changed", i);
  send_u64(fd, 1);
  _exit(0);
}

static void forged_decode(int fd) {
  int rc;
  weft_kv_agent_t agent;
  KV_OK(weft_kv_agent_create("decode", &agent));
  /* One allocation: the registered region, then memory the agent never registers. */
  unsigned char *mem = malloc(kForgedRegion + kSecretBytes);
  for (size_t i = 0; i < (size_t)kForgedRegion + kSecretBytes; ++i) mem[i] = pattern_byte(i, 0);
  weft_kv_region_t id;
  KV_OK(weft_kv_register(agent, mem, kForgedRegion, &id));
  send_blob(fd, agent);
  send_u64(fd, id);
  send_u64(fd, (uint64_t)(uintptr_t)(mem + kForgedRegion));
  /* After the forgeries: a second region, registered after the blob went out (not granted). */
  (void)recv_u64(fd);
  unsigned char *late = calloc(1, 4096);
  weft_kv_region_t late_id;
  KV_OK(weft_kv_register(agent, late, 4096, &late_id));
  send_u64(fd, late_id);
  /* The replay: the prefill keeps the first blob; a region is deregistered and registered anew. */
  (void)recv_u64(fd);
  KV_OK(weft_kv_deregister(agent, id));
  KV_OK(weft_kv_register(agent, mem, kForgedRegion / 2, &id));
  send_blob(fd, agent);
  send_u64(fd, id);
  /* The prefill's genuine WRITE of 4 KiB at offset 8 KiB of the new region, then it is done. */
  (void)recv_u64(fd);
  for (size_t i = 0; i < (size_t)kForgedRegion + kSecretBytes; ++i) {
    const unsigned char want = i >= 8192 && i < 8192 + 4096 ? (unsigned char)(i ^ 0x5a) : pattern_byte(i, 0);
    CHECK(mem[i] == want, "owner byte %zu is %u, expected %u (%s)", i, mem[i], want,
          i >= kForgedRegion ? "unregistered memory" : "registered region");
  }
  for (size_t i = 0; i < 4096; ++i) CHECK(late[i] == 0, "the ungranted region's byte %zu changed", i);
  send_u64(fd, 1);
  KV_OK(weft_kv_agent_destroy(agent));
  free(mem);
  free(late);
}

static void expect_refused_import(weft_kv_agent_t a, const unsigned char *b, size_t n, const char *what) {
  weft_kv_peer_t peer;
  const int rc = weft_kv_import(a, b, n, &peer);
  CHECK(rc == WEFT_KV_ERR_BLOB, "a %s was imported (%s)", what, weft_kv_status_string(rc));
  printf("forged: %s refused: %s\n", what, weft_kv_last_error());
}

static void forged_prefill(int fd, int bystander_fd) {
  int rc;
  /* The importer skips its own checks, so that only the owner's stand between it and memory. */
  setenv("WEFT_KV_UNCHECKED_PREPARE", "1", 1);
  weft_kv_agent_t a;
  KV_OK(weft_kv_agent_create("prefill", &a));
  unsigned char *local = calloc(1, kForgedRegion * 2);
  weft_kv_region_t local_id;
  KV_OK(weft_kv_register(a, local, kForgedRegion * 2, &local_id));
  size_t n;
  unsigned char *good = recv_blob(fd, &n);
  const weft_kv_region_t id = (weft_kv_region_t)recv_u64(fd);
  const uint64_t secret = recv_u64(fd);
  const uint64_t bystander_mem = recv_u64(bystander_fd);
  const pid_t bystander_pid = (pid_t)recv_u64(bystander_fd);
  const blob_layout_t l = blob_layout(good, n);
  CHECK(get_u32(good + l.regions) == 1, "the owner exported %u regions", get_u32(good + l.regions));
  unsigned char *b = malloc(n);

  /* The region grown to cover the owner's unregistered memory. */
  memcpy(b, good, n);
  put_u64(b + l.region0_length, 2ull * kForgedRegion);
  fix_checksum(b, n);
  expect_refused_import(a, b, n, "blob with its region grown");
  /* The region moved onto the unregistered memory. */
  memcpy(b, good, n);
  put_u64(b + l.region0_base, secret);
  fix_checksum(b, n);
  expect_refused_import(a, b, n, "blob with its region moved");
  /* Another process's pid and memory (the bystander's). */
  memcpy(b, good, n);
  b[l.pid] = (unsigned char)bystander_pid;
  b[l.pid + 1] = (unsigned char)(bystander_pid >> 8);
  b[l.pid + 2] = (unsigned char)(bystander_pid >> 16);
  b[l.pid + 3] = (unsigned char)(bystander_pid >> 24);
  put_u64(b + l.region0_base, bystander_mem);
  fix_checksum(b, n);
  expect_refused_import(a, b, n, "blob naming another process");
  /* A flipped seal byte, checksum recomputed. */
  memcpy(b, good, n);
  b[n - 9] ^= 1;
  fix_checksum(b, n);
  expect_refused_import(a, b, n, "blob with a flipped seal");

  /* The genuine blob: imported; requests past the region or into other regions are refused by
   * the owner, which writes and reads nothing for them. */
  weft_kv_peer_t peer;
  KV_OK(weft_kv_import(a, good, n, &peer));
  send_u64(fd, 1);
  const weft_kv_region_t late_id = (weft_kv_region_t)recv_u64(fd);
  for (size_t i = 0; i < (size_t)kForgedRegion * 2; ++i) local[i] = (unsigned char)(0xee ^ i);
  struct {
    weft_kv_block_t block;
    const char *what;
  } bad[] = {
      {{local_id, 0, id, kForgedRegion - 16, 4096}, "a block running past the region"},
      {{local_id, 0, id, kForgedRegion, 4096}, "a block just past the region"},
      {{local_id, 0, id, UINT64_MAX - 8, 4096}, "an offset that wraps"},
      {{local_id, 0, id, 0, 2ull * kForgedRegion}, "a block longer than the region (rendezvous)"},
      {{local_id, 0, late_id, 0, 64}, "a region registered after the blob"},
      {{local_id, 0, 77, 0, 64}, "a region that does not exist"},
  };
  for (int op = 0; op < 2; ++op)
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
      weft_kv_request_t req;
      KV_OK(weft_kv_prepare(a, op ? WEFT_KV_READ : WEFT_KV_WRITE, peer, &bad[k].block, 1, NULL, 0, &req));
      KV_OK(weft_kv_post(req));
      rc = weft_kv_wait(req, 30000);
      CHECK(rc == WEFT_KV_ERR_RANGE, "%s %s: %s", op ? "READ of" : "WRITE of", bad[k].what, weft_kv_status_string(rc));
      printf("forged: %s %s refused by the owner: %s\n", op ? "READ of" : "WRITE of", bad[k].what, weft_kv_last_error());
      KV_OK(weft_kv_release(req));
    }
  /* No READ brought anything back: the local buffer is as it was. */
  for (size_t i = 0; i < (size_t)kForgedRegion * 2; ++i)
    CHECK(local[i] == (unsigned char)(0xee ^ i), "local byte %zu changed by a refused READ", i);

  /* The replay: the owner deregisters the region; the blob that named it is stale. */
  send_u64(fd, 2);
  size_t n2;
  unsigned char *fresh = recv_blob(fd, &n2);
  const weft_kv_region_t new_id = (weft_kv_region_t)recv_u64(fd);
  expect_refused_import(a, good, n, "stale blob (its region was deregistered)");
  weft_kv_request_t req;
  weft_kv_block_t old = {local_id, 0, id, 0, 64};
  KV_OK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, &old, 1, NULL, 0, &req));
  KV_OK(weft_kv_post(req));
  rc = weft_kv_wait(req, 30000);
  CHECK(rc == WEFT_KV_ERR_RANGE, "a WRITE to the deregistered region: %s", weft_kv_status_string(rc));
  KV_OK(weft_kv_release(req));
  /* The fresh blob works: 4 KiB at offset 8 KiB. */
  weft_kv_peer_t peer2;
  KV_OK(weft_kv_import(a, fresh, n2, &peer2));
  for (size_t i = 0; i < 4096; ++i) local[i] = (unsigned char)((8192 + i) ^ 0x5a);
  weft_kv_block_t ok = {local_id, 0, new_id, 8192, 4096};
  KV_OK(weft_kv_prepare(a, WEFT_KV_WRITE, peer2, &ok, 1, NULL, 0, &req));
  KV_OK(weft_kv_post(req));
  KV_OK(weft_kv_wait(req, 30000));
  KV_OK(weft_kv_release(req));
  send_u64(fd, 3);
  CHECK(recv_u64(fd) == 1, "the owner's memory check");
  send_u64(bystander_fd, 1);
  CHECK(recv_u64(bystander_fd) == 1, "the bystander's memory check");
  printf("forged: the owner's unregistered memory, its ungranted region and the bystander's memory are untouched\n");
  KV_OK(weft_kv_agent_destroy(a));
  free(b);
  free(good);
  free(fresh);
  free(local);
}

/* ---- signal ------------------------------------------------------------------------------- */

/* Device-side completion. Device memory: the decoder enqueues, on its own stream, a wait for
 * its counter (an 8-byte word of a third device region) to reach k and then a copy of its data
 * region to pinned host memory; the stream stays busy until the prefill posts a WRITE that
 * signals the counter, and the copy then holds the post's bytes. Two posts of one request.
 * Host memory: a host WRITE cannot signal (WEFT_KV_ERR_NOT_SUPPORTED), and a host word cannot
 * be waited for. */
enum { kSignalBytes = 1 << 20, kSignalPosts = 2 };

static unsigned char signal_byte(size_t k, int post) { return (unsigned char)((k * 131 + (size_t)post * 17 + 5) & 0xff); }

static void signal_decode(int fd) {
  int rc;
  weft_kv_agent_t a;
  KV_OK(weft_kv_agent_create("decode", &a));
  unsigned char *data = mem_alloc(kSignalBytes), *word = mem_alloc(256);
  weft_kv_region_t data_id, word_id;
  KV_OK(weft_kv_register(a, data, kSignalBytes, &data_id));
  KV_OK(weft_kv_register(a, word, 256, &word_id));
  send_blob(fd, a);
  send_u64(fd, data_id);
  send_u64(fd, word_id);
  if (!use_device) {
    uint64_t host_word = 0;
    rc = weft_kv_wait_signal_enqueue(a, &host_word, 1, NULL);
    CHECK(rc == WEFT_KV_ERR_ARG || rc == WEFT_KV_ERR_NOT_SUPPORTED, "waiting for a host word: %s",
          weft_kv_status_string(rc));
    (void)recv_u64(fd);
    KV_OK(weft_kv_agent_destroy(a));
    mem_free(data);
    mem_free(word);
    return;
  }
#ifdef WEFT_TEST_CUDA
  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess, "stream");
  unsigned char *copy = NULL;
  CHECK(cudaMallocHost((void **)&copy, kSignalBytes) == cudaSuccess, "pinned memory");
  for (int post = 0; post < kSignalPosts; ++post) {
    memset(copy, 0, kSignalBytes);
    KV_OK(weft_kv_wait_signal_enqueue(a, (const uint64_t *)word, (uint64_t)post + 1, st));
    CHECK(cudaMemcpyAsync(copy, data, kSignalBytes, cudaMemcpyDeviceToHost, st) == cudaSuccess, "copy");
    const cudaError_t q = cudaStreamQuery(st);
    CHECK(q == cudaErrorNotReady, "post %d: the stream did not wait for the signal (%s)", post, cudaGetErrorString(q));
    send_u64(fd, (uint64_t)post);  /* the prefill may post now */
    CHECK(cudaStreamSynchronize(st) == cudaSuccess, "sync");
    for (size_t k = 0; k < kSignalBytes; ++k)
      CHECK(copy[k] == signal_byte(k, post), "post %d: byte %zu is %u, expected %u", post, k, copy[k],
            signal_byte(k, post));
    uint64_t counter = 0;
    mem_copy(&counter, word, sizeof counter);
    CHECK(counter == (uint64_t)post + 1, "post %d: the counter is %llu", post, (unsigned long long)counter);
  }
  (void)recv_u64(fd);
  cudaFreeHost(copy);
  cudaStreamDestroy(st);
#endif
  KV_OK(weft_kv_agent_destroy(a));
  mem_free(data);
  mem_free(word);
}

static void signal_prefill(int fd) {
  int rc;
  weft_kv_agent_t a;
  KV_OK(weft_kv_agent_create("prefill", &a));
  unsigned char *src = mem_alloc(kSignalBytes), *host = malloc(kSignalBytes);
  weft_kv_region_t src_id;
  KV_OK(weft_kv_register(a, src, kSignalBytes, &src_id));
  weft_kv_peer_t peer = import_from(fd, a, "decode");
  const weft_kv_region_t data_id = (weft_kv_region_t)recv_u64(fd), word_id = (weft_kv_region_t)recv_u64(fd);
  /* Four blocks, the halves swapped, so the copy is not one straight run. */
  const uint64_t q = kSignalBytes / 4;
  weft_kv_block_t blocks[4] = {{src_id, 0, data_id, 0, q}, {src_id, q, data_id, q, q},
                               {src_id, 2 * q, data_id, 2 * q, q}, {src_id, 3 * q, data_id, 3 * q, q}};
  weft_kv_request_t req;
  KV_OK(weft_kv_prepare(a, WEFT_KV_WRITE, peer, blocks, 4, NULL, 0, &req));
  if (!use_device) {
    rc = weft_kv_set_device_signal(req, word_id, 0);
    CHECK(rc == WEFT_KV_ERR_NOT_SUPPORTED, "a host WRITE with a device signal: %s", weft_kv_status_string(rc));
    KV_OK(weft_kv_release(req));
    send_u64(fd, 0);
    KV_OK(weft_kv_agent_destroy(a));
    mem_free(src);
    free(host);
    return;
  }
  rc = weft_kv_set_device_signal(req, word_id, 4);
  CHECK(rc == WEFT_KV_ERR_RANGE, "a misaligned counter: %s", weft_kv_status_string(rc));
  rc = weft_kv_set_device_signal(req, word_id, 256);
  CHECK(rc == WEFT_KV_ERR_RANGE, "a counter past the region: %s", weft_kv_status_string(rc));
  KV_OK(weft_kv_set_device_signal(req, word_id, 0));
  for (int post = 0; post < kSignalPosts; ++post) {
    for (size_t k = 0; k < kSignalBytes; ++k) host[k] = signal_byte(k, post);
    mem_copy(src, host, kSignalBytes);
    CHECK(recv_u64(fd) == (uint64_t)post, "the decoder's go");
    KV_OK(weft_kv_post(req));
    KV_OK(weft_kv_wait(req, 60000));
  }
  send_u64(fd, 0);
  KV_OK(weft_kv_release(req));
  KV_OK(weft_kv_agent_destroy(a));
  mem_free(src);
  free(host);
}

/* ---- driver ------------------------------------------------------------------------------- */

static int run(const char *name) {
  int sv[2], bv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, bv) == 0, "socketpair");
  fflush(stdout);
  pid_t watcher = -1;
  if (!strcmp(name, "forged")) {
    watcher = fork();
    CHECK(watcher >= 0, "fork");
    if (watcher == 0) {
      role = "bystander";
      close(bv[0]);
      bystander(bv[1]);
    }
  }
  close(bv[1]);
  pid_t child = fork();
  CHECK(child >= 0, "fork");
  if (child == 0) {
    role = "decode";
    close(sv[0]);
    if (!strcmp(name, "blocks")) blocks_decode(sv[1]);
    if (!strcmp(name, "order")) order_decode(sv[1]);
    if (!strcmp(name, "errors")) errors_decode(sv[1]);
    if (!strcmp(name, "peer_exit")) peer_exit_decode(sv[1]);
    if (!strcmp(name, "forged")) forged_decode(sv[1]);
    if (!strcmp(name, "signal")) signal_decode(sv[1]);
    _exit(0);
  }
  /* The prefill runs in a child too: CUDA used by this process would not work in the next
   * test's forked children. */
  close(sv[1]);
  pid_t prefill = fork();
  CHECK(prefill >= 0, "fork");
  if (prefill == 0) {
    role = "prefill";
    if (!strcmp(name, "blocks")) blocks_prefill(sv[0]);
    if (!strcmp(name, "order")) order_prefill(sv[0]);
    if (!strcmp(name, "errors")) errors_prefill(sv[0]);
    if (!strcmp(name, "peer_exit")) peer_exit_prefill(sv[0], child);
    if (!strcmp(name, "forged")) forged_prefill(sv[0], bv[0]);
    if (!strcmp(name, "signal")) signal_prefill(sv[0]);
    fflush(stdout);
    _exit(0);
  }
  close(sv[0]);
  int status = 0;
  CHECK(waitpid(prefill, &status, 0) == prefill, "waitpid");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the prefill failed (status %d)", status);
  CHECK(waitpid(child, &status, 0) == child, "waitpid");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the decoder failed (status %d)", status);
  if (watcher > 0) {
    CHECK(waitpid(watcher, &status, 0) == watcher, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the bystander failed (status %d)", status);
  }
  close(bv[0]);
  return 0;
}

int main(int argc, char **argv) {
  const char *which = "all";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--device"))
      use_device = 1;
    else
      which = argv[i];
  }
  if (use_device) {
#ifdef WEFT_TEST_CUDA
    /* Asked in a child: this process forks the test's processes and must not use CUDA. */
    pid_t probe = fork();
    CHECK(probe >= 0, "fork");
    if (probe == 0) {
      int n = 0;
      _exit(cudaGetDeviceCount(&n) == cudaSuccess && n > 0 ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(probe, &status, 0) == probe, "waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      printf("no CUDA device: skipped\n");
      return 77;
    }
#else
    printf("built without CUDA: skipped\n");
    return 77;
#endif
  }
  const char *names[] = {"errors", "blocks", "order", "peer_exit", "forged", "signal"};
  int ran = 0;
  for (int i = 0; i < 6; ++i) {
    if (strcmp(which, "all") && strcmp(which, names[i])) continue;
    run(names[i]);
    ++ran;
  }
  CHECK(ran > 0, "unknown test %s", which);
  printf("kv_transfer %s%s: passed\n", which, use_device ? " (device memory)" : "");
  return 0;
}
