/* An example profiler plugin (include/weft/profiler.h): counts events and bytes by type, name,
 * transport and parent type, checks that events nest (every parent is an event still open when
 * its child starts) and that every event is stopped, and prints a summary at MPI_Finalize:
 *
 *   profiler_count rank 0: api MPI_Send count 10
 *   profiler_count rank 0: coll allreduce:recursive_doubling count 4 bytes 64
 *   profiler_count rank 0: transfer send shm under p2p count 10 bytes 80
 *   profiler_count rank 0: totals started 61 stopped 61 unstopped 0 bad_parent 0 failed 0 max_depth 4
 *
 * to stderr, or to the file PROFILER_COUNT_OUT names (%r: the rank). PROFILER_COUNT_TYPES
 * (a list of api, coll, p2p, round, transfer, rma_epoch, gpu, kv) limits the events asked for.
 * GPU events must carry the device's times (start_ns <= end_ns, not 0): bad_gpu_times counts
 * those that do not. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/profiler.h"

#ifndef PROFILER_COUNT_ABI
#define PROFILER_COUNT_ABI WEFT_PROFILER_ABI_VERSION
#endif

struct open_event {
  struct open_event *prev, *next;
  uint32_t type;
  int depth;
};

struct tally {
  uint32_t type, parent_type;
  char name[64], transport[8];
  unsigned long long count, bytes;
};

#define MAX_TALLIES 512

static struct {
  pthread_mutex_t lock;
  int rank;
  struct open_event head; /* the list of open events */
  struct tally tallies[MAX_TALLIES];
  int n_tallies;
  unsigned long long started, stopped, bad_parent, failed, dropped, bad_gpu_times;
  int max_depth;
} g = {PTHREAD_MUTEX_INITIALIZER};

static const char *type_name(uint32_t type) {
  switch (type) {
    case WEFT_PROFILER_API: return "api";
    case WEFT_PROFILER_COLL: return "coll";
    case WEFT_PROFILER_P2P: return "p2p";
    case WEFT_PROFILER_ROUND: return "round";
    case WEFT_PROFILER_TRANSFER: return "transfer";
    case WEFT_PROFILER_RMA_EPOCH: return "rma_epoch";
    case WEFT_PROFILER_GPU: return "gpu";
    case WEFT_PROFILER_KV: return "kv";
    default: return "none";
  }
}

static uint32_t parse_types(const char *list) {
  uint32_t mask = 0;
  static const uint32_t all[] = {WEFT_PROFILER_API, WEFT_PROFILER_COLL, WEFT_PROFILER_P2P, WEFT_PROFILER_ROUND,
                                 WEFT_PROFILER_TRANSFER, WEFT_PROFILER_RMA_EPOCH, WEFT_PROFILER_GPU,
                                 WEFT_PROFILER_KV};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    if (strstr(list, type_name(all[i]))) mask |= all[i];
  return mask;
}

static int count_init(void **context, const weft_profiler_job_info_t *job, uint32_t *event_mask,
                      weft_profiler_log_fn log) {
  if (!job || job->struct_size < sizeof(weft_profiler_job_info_t)) return WEFT_PROFILER_ERR_ARG;
  g.rank = job->rank;
  g.head.prev = g.head.next = &g.head;
  const char *types = getenv("PROFILER_COUNT_TYPES");
  if (types && *types) *event_mask &= parse_types(types);
  *context = &g;
  if (log) log(WEFT_PROFILER_LOG_INFO, "counting events");
  return WEFT_PROFILER_OK;
}

static int is_open(const struct open_event *e) {
  for (const struct open_event *p = g.head.next; p != &g.head; p = p->next)
    if (p == e) return 1;
  return 0;
}

static void add_tally(const weft_profiler_event_t *e, uint32_t parent_type) {
  const char *name = e->type == WEFT_PROFILER_TRANSFER ? (e->name ? e->name : "?")
                     : e->type == WEFT_PROFILER_ROUND ? "round"
                                                     : (e->name ? e->name : "?");
  const char *transport = e->transport ? e->transport : "";
  for (int i = 0; i < g.n_tallies; ++i) {
    struct tally *t = &g.tallies[i];
    if (t->type == e->type && t->parent_type == parent_type && strcmp(t->name, name) == 0 &&
        strcmp(t->transport, transport) == 0) {
      t->count++;
      t->bytes += e->bytes;
      return;
    }
  }
  if (g.n_tallies == MAX_TALLIES) {
    g.dropped++;
    return;
  }
  struct tally *t = &g.tallies[g.n_tallies++];
  t->type = e->type;
  t->parent_type = parent_type;
  snprintf(t->name, sizeof t->name, "%s", name);
  snprintf(t->transport, sizeof t->transport, "%s", transport);
  t->count = 1;
  t->bytes = e->bytes;
}

static int count_start(void *context, void **handle, const weft_profiler_event_t *e) {
  (void)context;
  if (!handle || !e || e->struct_size < sizeof(weft_profiler_event_t)) return WEFT_PROFILER_ERR_ARG;
  struct open_event *o = malloc(sizeof *o);
  if (!o) return WEFT_PROFILER_ERR_NO_MEMORY;
  pthread_mutex_lock(&g.lock);
  uint32_t parent_type = 0;
  o->depth = 1;
  if (e->parent) {
    const struct open_event *p = e->parent;
    if (is_open(p)) {
      parent_type = p->type;
      o->depth = p->depth + 1;
    } else {
      g.bad_parent++;
    }
  }
  o->type = e->type;
  if (e->type == WEFT_PROFILER_GPU && (e->start_ns == 0 || e->end_ns < e->start_ns)) g.bad_gpu_times++;
  o->next = g.head.next;
  o->prev = &g.head;
  g.head.next->prev = o;
  g.head.next = o;
  g.started++;
  if (o->depth > g.max_depth) g.max_depth = o->depth;
  add_tally(e, parent_type);
  pthread_mutex_unlock(&g.lock);
  *handle = o;
  return WEFT_PROFILER_OK;
}

static int count_stop(void *handle) {
  struct open_event *o = handle;
  pthread_mutex_lock(&g.lock);
  if (!is_open(o)) {
    g.bad_parent++; /* a stop of an event that is not open */
    pthread_mutex_unlock(&g.lock);
    return WEFT_PROFILER_ERR_ARG;
  }
  o->prev->next = o->next;
  o->next->prev = o->prev;
  g.stopped++;
  pthread_mutex_unlock(&g.lock);
  free(o);
  return WEFT_PROFILER_OK;
}

static int count_state(void *handle, int state, int64_t value) {
  (void)handle;
  (void)value;
  if (state == WEFT_PROFILER_STATE_FAILED) {
    pthread_mutex_lock(&g.lock);
    g.failed++;
    pthread_mutex_unlock(&g.lock);
  }
  return WEFT_PROFILER_OK;
}

static int count_finalize(void *context) {
  (void)context;
  FILE *out = stderr;
  const char *pattern = getenv("PROFILER_COUNT_OUT");
  char path[512];
  if (pattern && *pattern) {
    const char *r = strstr(pattern, "%r");
    if (r)
      snprintf(path, sizeof path, "%.*s%d%s", (int)(r - pattern), pattern, g.rank, r + 2);
    else
      snprintf(path, sizeof path, "%s", pattern);
    out = fopen(path, "w");
    if (!out) out = stderr;
  }
  unsigned long long unstopped = 0;
  for (const struct open_event *p = g.head.next; p != &g.head; p = p->next) unstopped++;
  for (int i = 0; i < g.n_tallies; ++i) {
    const struct tally *t = &g.tallies[i];
    fprintf(out, "profiler_count rank %d: %s %s", g.rank, type_name(t->type), t->name);
    if (t->type == WEFT_PROFILER_TRANSFER) fprintf(out, " %s under %s", t->transport, type_name(t->parent_type));
    fprintf(out, " count %llu", t->count);
    if (t->type != WEFT_PROFILER_API && t->type != WEFT_PROFILER_ROUND) fprintf(out, " bytes %llu", t->bytes);
    fprintf(out, "\n");
  }
  fprintf(out,
          "profiler_count rank %d: totals started %llu stopped %llu unstopped %llu bad_parent %llu failed %llu "
          "max_depth %d dropped %llu bad_gpu_times %llu\n",
          g.rank, g.started, g.stopped, unstopped, g.bad_parent, g.failed, g.max_depth, g.dropped, g.bad_gpu_times);
  if (out != stderr) fclose(out);
  return WEFT_PROFILER_OK;
}

static const weft_profiler_plugin_t plugin = {
    PROFILER_COUNT_ABI, sizeof(weft_profiler_plugin_t), "profiler_count", count_init, count_start, count_stop,
    count_state, count_finalize, NULL};

const weft_profiler_plugin_t *weft_profiler_plugin_v1(void) { return &plugin; }
