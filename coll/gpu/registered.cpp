// Buffer registration for the GPU collectives (register_buffer in gpu_coll.h).
//
// Making one is collective: each rank describes its buffer (CUDA IPC handle, offset, buffer
// id, bytes checked against its allocation) and its free ids; one host allreduce (bitwise or
// over a table with one row per rank) exchanges the rows; the id is the lowest free on every
// rank, so ranks that dropped registrations at different times still agree. Each rank maps
// every peer's buffer, pinned in the IPC cache, and checks the declared bytes against the
// mapped allocation (the owner decides what peers may touch, and cannot declare more than it
// has); a second allreduce agrees that every rank succeeded. Dropping one is local.
//
// Registrations that stream-ordered calls make on their own (OwnRegistration::origin) cover the
// whole allocation that holds the buffer (peers may then touch all of it, as a CUDA IPC handle
// lets them anyway; the kernels bound every access by the registration's bytes), and are a
// cache: a registration first drops those whose memory some rank freed, and the user's (or a
// persistent call's), finding no id free, evicts the oldest uncaptured one. The choice comes
// from the exchanged rows alone, so every rank drops the same ids.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "coll/comm_state.h"
#include "runtime/cuda_ipc.h"
#include "registration_ids.h"
#include "runtime/log.h"
#include "workspace.h"

namespace weft::coll::gpu {

static_assert(kMaxRegistrations == kFusedMaxRegistrations && kMaxRegistrations <= 64);

namespace {

// One rank's row of the exchange (u64 words, combined with bitwise or).
struct Row {
  uint64_t ok = 0;
  RegistrationIds ids;  // this rank's
  uint64_t bytes = 0;
  IpcDescriptor desc{};
};
static_assert(sizeof(Row) % 8 == 0);

Status upload_table(GpuWorkspace& ws) {
  WEFT_CUDA_TRY(cudaMemcpyAsync(ws.regs.device, ws.regs.table.data(), ws.regs.table.size() * sizeof(FusedRegistration),
                                cudaMemcpyHostToDevice, ws.aux));
  WEFT_CUDA_TRY(cudaStreamSynchronize(ws.aux));
  return Status::ok;
}

// This rank's live ids, which of them it must keep, which are stale, and its oldest evictable.
RegistrationIds describe_ids(const Registrations& r) {
  RegistrationIds m;
  m.used = m.stale = r.released_here;
  uint64_t oldest_serial = UINT64_MAX;
  for (size_t k = 0; k < r.own.size(); ++k) {
    const OwnRegistration& o = r.own[k];
    if (!o.bytes) continue;
    const uint64_t bit = uint64_t(1) << k;
    m.used |= bit;
    if (o.origin == OwnRegistration::Origin::user) {
      m.keep |= bit;
      continue;
    }
    uint64_t after = 0, buffer_id = 0;
    if (cuda_ipc_own_range(o.at, &after, &buffer_id) != Status::ok || buffer_id != o.buffer_id) m.stale |= bit;
    if (o.origin == OwnRegistration::Origin::captured) {
      m.graph |= bit;
    } else if (o.serial < oldest_serial) {
      oldest_serial = o.serial;
      m.oldest = bit;
    }
  }
  return m;
}

// This rank's part: its buffer described, or *why.
void describe(const void* buf, size_t bytes, Row* row, OwnRegistration* own, std::string* why) {
  uint64_t after = 0;
  if (bytes == 0) {
    *why = "a registration of 0 bytes";
  } else if (cuda_ipc_own_range(buf, &after, &own->buffer_id) != Status::ok) {
    *why = "the buffer is not CUDA device memory (" + error_detail() + ")";
  } else if (bytes > after) {
    *why = std::to_string(bytes) + " bytes run past the end of the buffer's allocation (" + std::to_string(after) +
           " bytes from it)";
  } else if (cuda_ipc_describe(buf, &row->desc) != Status::ok) {
    *why = "the buffer has no CUDA IPC handle (" + error_detail() + ")";
  } else {
    row->ok = 1;
    row->bytes = bytes;
    own->at = static_cast<const char*>(buf);
    own->bytes = bytes;
  }
}

void drop(GpuWorkspace& ws, size_t id);

// Drops here the ids of mask that are live here.
void drop_ids(GpuWorkspace& ws, uint64_t mask) {
  for (size_t id = 0; id < ws.regs.own.size(); ++id)
    if ((mask >> id & 1) && ws.regs.own[id].bytes) drop(ws, id);
}

// Drops the ids of mask here, alike on every rank (the mask comes from the exchanged rows).
Status evict(GpuWorkspace& ws, uint64_t mask) {
  // Kernels this process enqueued may still use them.
  WEFT_CUDA_TRY(cudaDeviceSynchronize());
  drop_ids(ws, mask);
  ws.regs.released_here &= ~mask;
  return upload_table(ws);
}

// registration_stats' counters (registrations run under the runtime's lock; MPI_T reads them).
struct Counters {
  std::atomic<uint64_t> made{0}, dropped_stale{0}, evicted{0}, released_here{0};
};
Counters& counters() {
  static auto* c = new Counters();
  return *c;
}

// Workspaces that have made registrations, for the IPC cache's release hook.
std::vector<std::weak_ptr<GpuWorkspace>>& registering_workspaces() {
  static auto* all = new std::vector<std::weak_ptr<GpuWorkspace>>();
  return *all;
}

// The IPC cache's release hook (a map that holds no other mapping of the operation found a
// pinned mapping in its way): drops, here only, the calls' registrations whose memory this
// rank freed. This rank keeps reporting them live and stale (released_here), so no id is
// reused before the next registration drops them on every rank. A peer that still uses its
// buffer of such a registration in a fused call then finds it missing here: that call fails
// with the kernels' error (the peers normally free their buffers of one call alike).
void release_freed_call_registrations() {
  auto& all = registering_workspaces();
  for (auto it = all.begin(); it != all.end();) {
    const std::shared_ptr<GpuWorkspace> ws = it->lock();
    if (!ws || ws->released) {
      it = all.erase(it);
      continue;
    }
    const uint64_t stale = describe_ids(ws->regs).stale & ~ws->regs.released_here;
    if (stale) {
      drop_ids(*ws, stale);
      counters().released_here += uint64_t(__builtin_popcountll(stale));
      ws->regs.released_here |= stale;
      (void)upload_table(*ws);
      WEFT_INFO(Subsys::gpu, "%d buffer registrations (made by stream-ordered calls) dropped here: their memory was "
                "freed, and a peer buffer's mapping needed the memory they held mapped", __builtin_popcountll(stale));
    }
    ++it;
  }
}

// register_buffer, or (origin) a stream-ordered call's own registration; a call's evicts only
// stale ones. A captured call's evicts nothing (cuda_ipc_pin then closes only mappings of memory
// a peer freed). Failures are agreed, so every rank fails alike, except one after the agreement
// (the device copy of the table): *here_only is then true.
Status register_one(const CollContext& ctx, const void* buf, size_t bytes, uint64_t* token,
                    OwnRegistration::Origin origin, bool* here_only = nullptr) {
  if (here_only) *here_only = false;
  using Origin = OwnRegistration::Origin;
  const bool may_close = origin != Origin::captured;
  *token = 0;
  const Comm& c = ctx.comm;
  std::string why;
  GpuWorkspace* ws = workspace(ctx, &why);  // collective on the first use
  if (!ws) {
    set_error_detail("buffer registration needs the GPU collectives of " + c.label() + ": " + why);
    return Status::not_supported;
  }
  const auto p = size_t(c.size);
  std::vector<Row> rows(p);
  Row& mine = rows[size_t(c.rank)];
  OwnRegistration own;
  describe(buf, bytes, &mine, &own, &why);
  mine.ids = describe_ids(ws->regs);
  const Reduction bor{ReduceOp::bor, BasicType::u64, sizeof(uint64_t)};
  WEFT_TRY(coll::allreduce(ctx, rows.data(), rows.data(), rows.size() * sizeof(Row) / 8, bor));
  RegistrationIds all;
  for (const Row& r : rows) all |= r.ids;
  // Calls' registrations whose memory some rank freed go first (they pin stale mappings, under
  // which the driver refuses to map that memory again); the user's may evict a live one.
  const RegistrationIds::Choice choice = all.choose(kMaxRegistrations, may_close, origin == Origin::user);
  const int id = choice.id;
  if (choice.drop) {
    const uint64_t stale = choice.drop & ~(choice.evicts ? uint64_t(1) << id : 0);
    // Ids the release hook dropped here already were counted then.
    const uint64_t dropped_now = stale & ~ws->regs.released_here;
    if (stale)
      WEFT_INFO(Subsys::gpu, "%d buffer registrations on %s (made by stream-ordered calls) dropped: their memory "
                "was freed", __builtin_popcountll(stale), c.label().c_str());
    if (choice.evicts)
      WEFT_INFO(Subsys::gpu, "buffer registration %d on %s (made by a stream-ordered call) evicted for the user's",
                id, c.label().c_str());
    // Failing here must not skip the agreement below, which the peers are waiting in.
    if (evict(*ws, choice.drop) != Status::ok) {
      if (why.empty()) why = "dropping registrations failed: " + error_detail();
    } else {
      counters().dropped_stale += uint64_t(__builtin_popcountll(dropped_now));
      counters().evicted += choice.evicts ? 1 : 0;
    }
  }
  // Map every peer's buffer (pinned), checking what it declared against what it has.
  std::vector<int> pinned;
  std::vector<void*> mapped(p, nullptr);
  if (why.empty() && id < 0) why = "all " + std::to_string(kMaxRegistrations) + " registrations are live";
  for (size_t q = 0; q < p && why.empty(); ++q) {
    if (q == size_t(c.rank)) continue;
    const Row& r = rows[q];
    uint64_t after = 0;
    if (!r.ok) {
      why = "rank " + std::to_string(q) + " could not describe its buffer";
    } else if (cuda_ipc_pin(c.world_ranks[q], r.desc, &mapped[q], &after, may_close) != Status::ok) {
      why = "mapping rank " + std::to_string(q) + "'s buffer failed (" + error_detail() + ")";
    } else {
      pinned.push_back(int(q));
      if (r.bytes > after)
        why = "rank " + std::to_string(q) + " declared " + std::to_string(r.bytes) + " bytes, past its allocation's end";
    }
  }
  std::vector<int64_t> failed(p, 0);
  failed[size_t(c.rank)] = why.empty() ? 0 : 1;
  const Reduction sum{ReduceOp::sum, BasicType::i64, sizeof(int64_t)};
  Status s = coll::allreduce(ctx, failed.data(), failed.data(), failed.size(), sum);
  const auto first = std::find(failed.begin(), failed.end(), int64_t(1));
  if (s != Status::ok || first != failed.end()) {
    for (int q : pinned) cuda_ipc_unpin(c.world_ranks[size_t(q)], rows[size_t(q)].desc.buffer_id);
    if (why.empty()) why = "rank " + std::to_string(first - failed.begin()) + " could not register its buffer";
    WEFT_INFO(Subsys::gpu, "buffer registration on %s failed: %s", c.label().c_str(), why.c_str());
    set_error_detail("buffer registration on " + c.label() + " failed: " + why);
    return s != Status::ok ? s : Status::invalid_arg;
  }
  Registrations& regs = ws->regs;
  regs.world = c.world_ranks;  // the IPC cache keys mappings by world rank
  own.serial = ++regs.serial;
  own.origin = origin;
  regs.own[size_t(id)] = own;
  for (size_t q = 0; q < p; ++q) {
    const size_t at = q * kMaxRegistrations + size_t(id);
    regs.table[at] = {q == size_t(c.rank) ? own.at : static_cast<const char*>(mapped[q]), rows[q].bytes};
    regs.peer_buffer[at] = rows[q].desc.buffer_id;
  }
  ++regs.live;
  ++counters().made;
  auto& registering = registering_workspaces();
  std::erase_if(registering, [](const auto& w) { return w.expired(); });
  if (std::none_of(registering.begin(), registering.end(), [ws](const auto& w) { return w.lock().get() == ws; }))
    registering.push_back(shared_workspace(c));
  cuda_ipc_set_release_hook(release_freed_call_registrations);
  if (const Status up = upload_table(*ws); up != Status::ok) {
    if (here_only) *here_only = true;
    WEFT_ERROR(Subsys::gpu, "buffer registration %d on %s: the peers registered it, but its table could not be "
               "copied to the device here: %s", id, c.label().c_str(), error_detail().c_str());
    return up;
  }
  *token = own.serial << 8 | uint64_t(id + 1);
  WEFT_INFO(Subsys::gpu, "buffer registration %d on %s: %zu bytes here, peers' mapped", id, c.label().c_str(), bytes);
  return Status::ok;
}

}  // namespace

Status register_buffer(const CollContext& ctx, const void* buf, size_t bytes, uint64_t* token) {
  return register_one(ctx, buf, bytes, token, OwnRegistration::Origin::user);
}

namespace {

// Drops registration id here: its entries (this rank's and its view of the peers') and pins.
void drop(GpuWorkspace& ws, size_t id) {
  Registrations& regs = ws.regs;
  for (int q = 0; q < ws.size; ++q) {
    const size_t at = size_t(q) * kMaxRegistrations + id;
    if (q != ws.rank && regs.table[at].bytes) cuda_ipc_unpin(regs.world[size_t(q)], regs.peer_buffer[at]);
    regs.table[at] = {};
    regs.peer_buffer[at] = 0;
  }
  regs.own[id] = {};
  --regs.live;
}

}  // namespace

RegistrationStats registration_stats() {
  const Counters& c = counters();
  RegistrationStats out{c.made, c.dropped_stale, c.evicted, c.released_here, 0};
  for (const auto& w : registering_workspaces())
    if (const std::shared_ptr<GpuWorkspace> ws = w.lock(); ws && !ws->released) out.live += uint64_t(ws->regs.live);
  return out;
}

Status deregister_buffer(const Comm& c, uint64_t token) {
  GpuWorkspace* ws = existing_workspace(c);
  const uint64_t id = (token & 0xff) - 1;
  if (!ws || token == 0 || id >= uint64_t(kMaxRegistrations) || !ws->regs.own[id].bytes ||
      ws->regs.own[id].serial != token >> 8) {
    set_error_detail("not a live buffer registration of " + c.label());
    return Status::invalid_arg;
  }
  // Kernels this process enqueued may still use the registration.
  WEFT_CUDA_TRY(cudaDeviceSynchronize());
  drop(*ws, id);
  return upload_table(*ws);
}

namespace {

// What register_for_call returns: its registrations, dropped with it while the workspace lives.
struct CallRegistrations {
  std::weak_ptr<GpuWorkspace> ws;
  std::vector<size_t> ids;
  ~CallRegistrations() {
    std::shared_ptr<GpuWorkspace> w = ws.lock();
    if (!w || w->released || ids.empty()) return;
    (void)cudaDeviceSynchronize();  // kernels of the call's starts may still use them
    for (size_t id : ids) drop(*w, id);
    (void)upload_table(*w);
  }
};

}  // namespace

std::shared_ptr<const void> register_for_call(const CollContext& ctx, std::initializer_list<const void*> bufs,
                                              size_t bytes) {
  auto regs = std::make_shared<CallRegistrations>();
  regs->ws = shared_workspace(ctx.comm);
  const void* last = nullptr;
  for (const void* b : bufs) {
    // Null or in place (allreduce: alike on every rank): nothing more to register.
    if (!b || b == last || bytes == 0) continue;
    last = b;
    uint64_t token = 0;
    if (register_buffer(ctx, b, bytes, &token) == Status::ok) regs->ids.push_back((token & 0xff) - 1);
  }
  if (regs->ids.empty()) return nullptr;
  return regs;
}

void register_call_buffers(const CollContext& ctx, const void* send, const void* recv, size_t bytes, bool capturing) {
  GpuWorkspace* ws = existing_workspace(ctx.comm);
  if (!ws || bytes == 0 || (!capturing && !ws->auto_register)) return;
  // Uncaptured calls agree only where the schedule says (gpu_coll.h).
  if (!capturing && !ws->auto_schedule.due()) return;
  uint64_t offset = 0;
  const bool in_place = send == recv;  // alike on every rank
  int64_t missing[2] = {0, 0};  // send, recv: 1 where this rank has no registration of it
  const void* bufs[2] = {send, recv};
  // A call registers its buffers' whole allocations, so that later calls on other parts of them
  // (a larger count, another tensor of one allocator segment) find them registered; the
  // schedule may not agree again for up to kMaxGap calls.
  IpcDescriptor whole[2]{};
  for (int k = 0; k < 2; ++k) {
    if (!bufs[k] || (k == 0 && in_place)) continue;
    const int32_t id = find_registration(*ws, bufs[k], bytes, &offset);
    if (id < 0) {
      // Undescribable memory still counts as missing: register_one says why it fails.
      if (cuda_ipc_describe(bufs[k], &whole[k]) != Status::ok) whole[k] = IpcDescriptor{};
      // Both in one allocation: the send buffer's registration covers the receive buffer here.
      missing[k] = k == 1 && missing[0] && whole[0].alloc_start && whole[1].alloc_start == whole[0].alloc_start &&
                           whole[1].buffer_id == whole[0].buffer_id
                       ? 0
                       : 1;
    } else if (capturing && ws->regs.own[size_t(id)].origin == OwnRegistration::Origin::stream_call) {
      // The graph replays on it: no longer evictable while it lives (graph bits are or-ed, so
      // this rank's mark protects the id on every rank).
      ws->regs.own[size_t(id)].origin = OwnRegistration::Origin::captured;
    }
  }
  const Reduction max{ReduceOp::max, BasicType::i64, sizeof(int64_t)};
  if (coll::allreduce(ctx, missing, missing, 2, max) != Status::ok) return;
  if (!capturing && ws->auto_schedule.agreed(missing[0] || missing[1]))
    WEFT_INFO(Subsys::gpu, "automatic registration on %s settles at call %llu (%llu agreements in a row found "
              "every buffer registered): later calls agree on new buffers only every %llu to %llu calls",
              ctx.comm.label().c_str(),
              static_cast<unsigned long long>(ws->auto_schedule.calls),
              static_cast<unsigned long long>(AgreementSchedule::kQuiet),
              static_cast<unsigned long long>(ws->auto_schedule.gap),
              static_cast<unsigned long long>(AgreementSchedule::kMaxGap));
  for (int k = 0; k < 2; ++k) {
    if (!missing[k]) continue;
    uint64_t token = 0;
    const auto origin = capturing ? OwnRegistration::Origin::captured : OwnRegistration::Origin::stream_call;
    // Where this rank has it covered already (only a peer misses it), it registers it again.
    if (!whole[k].alloc_start && cuda_ipc_describe(bufs[k], &whole[k]) != Status::ok) whole[k] = IpcDescriptor{};
    const bool known = whole[k].alloc_start != 0;
    const void* at = known ? reinterpret_cast<const void*>(whole[k].alloc_start) : bufs[k];
    const size_t span = known ? size_t(whole[k].alloc_bytes) : bytes;
    bool here_only = false;
    if (register_one(ctx, at, span, &token, origin, &here_only) == Status::ok) {
      WEFT_INFO(Subsys::gpu, "a stream-ordered call%s on %s registered its %s buffer (%zu bytes; registered: %zu "
                "bytes, %s)", capturing ? " captured into a CUDA graph" : "", ctx.comm.label().c_str(),
                k ? "receive" : "send", bytes, span, known ? "its whole allocation" : "the call's");
    } else if (here_only) {
      // The peers go on to the next buffer's registration (collective): so does this rank, and
      // it keeps registering automatically as they do (logged as an error above).
      continue;
    } else if (!capturing) {
      // More buffers than registrations (say, many small buckets): stop asking, so later calls
      // pay no agreement; the ones registered so far stay in place, the others use the slots.
      ws->auto_register = false;
      WEFT_INFO(Subsys::gpu, "automatic registration on %s stops (%s); calls on unregistered buffers run on the "
                "slots", ctx.comm.label().c_str(), error_detail().c_str());
      return;
    }
  }
}

int registrations(const Comm& c) {
  const GpuWorkspace* ws = existing_workspace(c);
  return ws ? ws->regs.live : 0;
}

void release_registrations(GpuWorkspace& ws) {
  for (size_t id = 0; id < ws.regs.own.size(); ++id)
    if (ws.regs.own[id].bytes) drop(ws, id);
}

int32_t find_registration(const GpuWorkspace& ws, const void* ptr, size_t bytes, uint64_t* offset) {
  if (ws.regs.live == 0) return -1;
  const auto* at = static_cast<const char*>(ptr);
  for (size_t id = 0; id < ws.regs.own.size(); ++id) {
    const OwnRegistration& r = ws.regs.own[id];
    if (!r.bytes || at < r.at || size_t(at - r.at) > r.bytes || bytes > r.bytes - size_t(at - r.at)) continue;
    uint64_t after = 0, buffer_id = 0;
    if (cuda_ipc_own_range(ptr, &after, &buffer_id) != Status::ok || buffer_id != r.buffer_id) {
      // A newer registration may hold the new buffer; a stream-ordered call's own one is a
      // cache entry that a later registration evicts.
      if (r.origin == OwnRegistration::Origin::user && log_first_time("stale-registration:" + std::to_string(r.serial)))
        WEFT_WARN(Subsys::gpu, "buffer registration %zu holds memory that was freed and allocated again: "
                  "calls on it go through the GPU workspace (register the new buffer)", id);
      continue;
    }
    *offset = uint64_t(at - r.at);
    return int32_t(id);
  }
  return -1;
}

}  // namespace weft::coll::gpu
