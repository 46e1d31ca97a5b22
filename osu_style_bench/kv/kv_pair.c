/* Process pairs for the KV examples and benchmarks (kv_pair.h). */
#define _POSIX_C_SOURCE 200809L
#include "kv_pair.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef KV_PAIR_HAVE_CUDA
#include <cuda_runtime.h>
#endif

void kv_pair_die(const char *what, int rc, const char *file, int line) {
  fprintf(stderr, "[pid %d] %s:%d: %s: %s (%s)\n", (int)getpid(), file, line, what, weft_kv_status_string(rc),
          weft_kv_last_error());
  exit(1);
}

static void die(const char *msg) {
  fprintf(stderr, "[pid %d] %s: %s\n", (int)getpid(), msg, errno ? strerror(errno) : "");
  exit(1);
}

/* Asked in a child process: CUDA initialised here would not work in the decoder forked later. */
int kv_pair_have_device(void) {
#ifdef KV_PAIR_HAVE_CUDA
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    int n = 0;
    _exit(cudaGetDeviceCount(&n) == cudaSuccess && n > 0 ? 0 : 1);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) die("waitpid");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
#else
  return 0;
#endif
}

void *kv_pair_alloc(size_t bytes, int device) {
  void *p = NULL;
#ifdef KV_PAIR_HAVE_CUDA
  if (device) {
    if (cudaMalloc(&p, bytes) != cudaSuccess || cudaMemset(p, 0, bytes) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess)
      die("cudaMalloc");
    return p;
  }
#else
  if (device) die("built without CUDA");
#endif
  p = calloc(1, bytes);
  if (!p) die("calloc");
  return p;
}

void kv_pair_free(void *p, int device) {
#ifdef KV_PAIR_HAVE_CUDA
  if (device) {
    cudaFree(p);
    return;
  }
#endif
  (void)device;
  free(p);
}

void kv_pair_copy(void *dst, const void *src, size_t bytes, int device) {
#ifdef KV_PAIR_HAVE_CUDA
  if (device) {
    if (cudaMemcpy(dst, src, bytes, cudaMemcpyDefault) != cudaSuccess) die("cudaMemcpy");
    return;
  }
#endif
  (void)device;
  memcpy(dst, src, bytes);
}

void kv_pair_send(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t k = write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) die("write to the peer");
    c += k;
    n -= (size_t)k;
  }
}

void kv_pair_recv(int fd, void *p, size_t n) {
  char *c = p;
  while (n) {
    ssize_t k = read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) die("read from the peer");
    c += k;
    n -= (size_t)k;
  }
}

void kv_pair_send_u64(int fd, uint64_t v) { kv_pair_send(fd, &v, sizeof v); }
uint64_t kv_pair_recv_u64(int fd) {
  uint64_t v;
  kv_pair_recv(fd, &v, sizeof v);
  return v;
}

static unsigned char *export_blob(weft_kv_agent_t agent, size_t *n) {
  KV_CALL(weft_kv_export(agent, NULL, 0, n));
  unsigned char *b = malloc(*n);
  if (!b) die("malloc");
  KV_CALL(weft_kv_export(agent, b, *n, n));
  return b;
}

void kv_pair_send_blob(int fd, weft_kv_agent_t agent) {
  size_t n;
  unsigned char *b = export_blob(agent, &n);
  kv_pair_send_u64(fd, n);
  kv_pair_send(fd, b, n);
  free(b);
}

weft_kv_peer_t kv_pair_import(int fd, weft_kv_agent_t agent) {
  size_t n = (size_t)kv_pair_recv_u64(fd);
  if (n == 0 || n > (1u << 24)) die("a blob of a strange length");
  unsigned char *b = malloc(n);
  if (!b) die("malloc");
  kv_pair_recv(fd, b, n);
  weft_kv_peer_t peer;
  KV_CALL(weft_kv_import(agent, b, n, &peer));
  free(b);
  return peer;
}

void kv_pair_write_blob(const char *path, weft_kv_agent_t agent) {
  size_t n;
  unsigned char *b = export_blob(agent, &n);
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) die("writing the blob file");
  if (rename(tmp, path) != 0) die("renaming the blob file"); /* readers never see half a blob */
  free(b);
}

weft_kv_peer_t kv_pair_import_file(const char *path, weft_kv_agent_t agent) {
  FILE *f = NULL;
  const double end = kv_pair_now() + 60;
  while (!(f = fopen(path, "rb"))) {
    if (kv_pair_now() > end) die("no blob file within 60 s");
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  unsigned char *b = malloc(1 << 24);
  if (!b) die("malloc");
  const size_t n = fread(b, 1, 1 << 24, f);
  fclose(f);
  weft_kv_peer_t peer;
  KV_CALL(weft_kv_import(agent, b, n, &peer));
  free(b);
  return peer;
}

int kv_pair_run(void (*prefill)(int fd, void *arg), void (*decode)(int fd, void *arg), void *arg) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) die("socketpair");
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    close(sv[0]);
    decode(sv[1], arg);
    fflush(stdout);
    _exit(0);
  }
  close(sv[1]);
  prefill(sv[0], arg);
  close(sv[0]);
  int status = 0;
  if (waitpid(child, &status, 0) != child) die("waitpid");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

double kv_pair_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
