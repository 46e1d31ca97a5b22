// The staging pool and the per-message pipeline behind device_staging.h. CUDA-free: the sets
// (chunks and copies) come from a backend (device_staging_backend.h).
#include "device_staging.h"

#include <algorithm>
#include <vector>

#include "device_staging_backend.h"
#include "log.h"

namespace weft {

struct DeviceStaging {
  std::unique_ptr<StagingSet> set;
  // One message:
  bool sending = false, started = false, finished = false;
  const void* src = nullptr;
  size_t bytes = 0;
  PackPipeline pack;
  UnpackPipeline unpack;
};

namespace {

constexpr size_t kMinChunk = 4096;
// Idle sets kept for reuse (two chunks each): up to 128 MiB of pinned memory, and at least 8
// sets. A window of messages in flight (osu_bw keeps 64) then reuses its sets; making a set
// (cudaHostAlloc of two chunks) costs far more than a message's copies.
constexpr size_t kIdlePinnedBytes = size_t(128) << 20, kIdleKeptMin = 8;
size_t idle_kept(size_t chunk) { return std::max(kIdleKeptMin, chunk ? kIdlePinnedBytes / (2 * chunk) : 0); }

size_t g_chunk = 0;
const StagingBackend* g_override = nullptr;
std::vector<DeviceStaging*> g_idle;
DeviceStagingStats g_stats;

const StagingBackend* backend() { return g_override ? g_override : cuda_staging_backend(); }

Status acquire(DeviceStaging** out) {
  const char* why = nullptr;
  if (!device_staging_usable(&why)) {
    set_error_detail(std::string("pipelined device staging is not usable: ") + why);
    return Status::not_supported;
  }
  const int device = backend()->current_device();
  for (size_t i = 0; i < g_idle.size(); ++i) {
    DeviceStaging* s = g_idle[i];
    if (s->set->device != device || s->set->chunk_bytes != g_chunk) continue;
    g_idle[i] = g_idle.back();
    g_idle.pop_back();
    ++g_stats.in_use;
    *out = s;
    return Status::ok;
  }
  std::unique_ptr<StagingSet> set;
  WEFT_TRY(backend()->make(g_chunk, device, &set));
  set->chunk_bytes = g_chunk;
  set->device = device;
  auto* s = new DeviceStaging;
  s->set = std::move(set);
  ++g_stats.sets_made;
  ++g_stats.in_use;
  *out = s;
  return Status::ok;
}

void prepare(DeviceStaging* s, bool sending) {
  s->sending = sending;
  s->started = s->finished = false;
  s->set->error_detail.clear();
}

}  // namespace

void device_staging_configure(size_t chunk_bytes) {
  g_chunk = chunk_bytes == 0 ? 0 : std::max(chunk_bytes, kMinChunk);
}

size_t device_staging_chunk() { return g_chunk; }

bool device_staging_usable(const char** why) {
  const StagingBackend* b = backend();
  if (!b) {
    if (why) *why = "weft was built without CUDA";
    return false;
  }
  if (!b->usable(why)) return false;
  if (g_chunk == 0) {
    if (why) *why = "WEFT_CUDA_STAGING_CHUNK is 0";
    return false;
  }
  return true;
}

Status device_staging_begin_send(const void* src, size_t bytes, DeviceStaging** out) {
  DeviceStaging* s = nullptr;
  WEFT_TRY(acquire(&s));
  prepare(s, true);
  s->src = src;
  s->bytes = bytes;
  s->pack.reset(s->set.get(), s->set->chunk[0], s->set->chunk[1], s->set->chunk_bytes);
  *out = s;
  return Status::ok;
}

Status device_staging_begin_recv(void* dst, size_t capacity, DeviceStaging** out) {
  DeviceStaging* s = nullptr;
  WEFT_TRY(acquire(&s));
  prepare(s, false);
  s->bytes = capacity;
  s->unpack.reset(s->set.get(), s->set->chunk[0], s->set->chunk[1], s->set->chunk_bytes);
  s->unpack.start(dst, capacity);
  *out = s;
  return Status::ok;
}

void device_staging_start(DeviceStaging* s) {
  if (s->started) return;
  s->started = true;
  if (s->sending) s->pack.start(s->src, s->bytes);
}

size_t device_staging_size(const DeviceStaging* s) { return s->bytes; }

size_t device_staging_pack(DeviceStaging* s, size_t offset, void* dest, size_t max_length) {
  if (!s->started) device_staging_start(s);
  return s->pack.pack(offset, dest, max_length);
}

void device_staging_unpack(DeviceStaging* s, size_t offset, const void* src, size_t length) {
  s->unpack.unpack(offset, src, length);
}

void device_staging_finish(DeviceStaging* s) {
  if (s->finished) return;
  s->finished = true;
  (void)(s->sending ? s->pack.finish() : s->unpack.finish());
}

Status device_staging_end(DeviceStaging* s) {
  device_staging_finish(s);
  const Status e = s->sending ? s->pack.error() : s->unpack.error();
  if (e != Status::ok && !s->set->error_detail.empty()) set_error_detail(s->set->error_detail);
  --g_stats.in_use;
  // A set whose copies failed is not reused (its stream may be unusable).
  if (e == Status::ok && s->set->chunk_bytes == g_chunk && g_idle.size() < idle_kept(g_chunk))
    g_idle.push_back(s);
  else
    delete s;
  return e;
}

DeviceStagingStats device_staging_stats() {
  DeviceStagingStats st = g_stats;
  st.idle = g_idle.size();
  return st;
}

void device_staging_release_all() {
  for (DeviceStaging* s : g_idle) delete s;
  g_idle.clear();
}

void device_staging_set_backend(const StagingBackend* b) {
  device_staging_release_all();
  g_override = b;
}

}  // namespace weft
