// build_direct (direct.h): the exchange of the direct algorithms.
#include "direct.h"

#include <algorithm>

#include "runtime/log.h"

namespace weft::coll::gpu {

namespace {

void describe_own(const GpuWorkspace& ws, const void* send, void* recv, DirectCall& call) {
  DirectCall::Exported& mine = call.rows[size_t(ws.rank)];
  mine = DirectCall::Exported{};
  call.why.clear();
  const char* off = nullptr;
  const size_t needed = (call.with_recv ? 2 : 1) * size_t(ws.size - 1);
  if (!cuda_ipc_usable(&off)) {
    call.why = std::string("CUDA IPC is not usable (") + off + ")";
  } else if (cuda_ipc_stats().capacity < needed) {
    call.why = "WEFT_CUDA_IPC_CACHE holds fewer than the " + std::to_string(needed) + " mappings a call needs";
  } else if (cuda_ipc_describe(send, &mine.send) != Status::ok ||
             (call.with_recv && send != recv && cuda_ipc_describe(recv, &mine.recv) != Status::ok)) {
    call.why = "a buffer has no CUDA IPC handle (" + error_detail() + ")";
  } else {
    if (send == recv) mine.recv = mine.send;
    mine.ok = 1;
  }
}

// Maps the peers' buffers; false (and call.why) when some rank cannot take the direct path.
bool map_peers(const GpuWorkspace& ws, const std::vector<int>& world, const void* send, void* recv, DirectCall& call) {
  for (int q = 0; q < ws.size; ++q) {
    if (!call.rows[size_t(q)].ok) {
      if (call.why.empty()) call.why = "rank " + std::to_string(q) + " cannot export its buffers";
      return false;
    }
  }
  call.sends[size_t(ws.rank)] = const_cast<void*>(send);
  call.recvs[size_t(ws.rank)] = recv;
  for (int q = 0; q < ws.size; ++q) {
    if (q == ws.rank) continue;
    const DirectCall::Exported& r = call.rows[size_t(q)];
    if (cuda_ipc_map(world[size_t(q)], r.send, &call.sends[size_t(q)]) != Status::ok ||
        (call.with_recv && cuda_ipc_map(world[size_t(q)], r.recv, &call.recvs[size_t(q)]) != Status::ok)) {
      call.why = "mapping rank " + std::to_string(q) + "'s buffers failed (" + error_detail() + ")";
      return false;
    }
  }
  return true;
}

// A round of host messages in which every rank sends entries[its rank] to every other rank q
// and receives entries[q] from it.
template <class T>
void exchange_entries(Schedule& s, const Comm& c, std::vector<T>& entries) {
  s.new_round();
  for (int q = 0; q < c.size; ++q) {
    if (q == c.rank) continue;
    s.send(q, &entries[size_t(c.rank)], sizeof(T));
    s.recv(q, &entries[size_t(q)], sizeof(T));
  }
}

}  // namespace

std::shared_ptr<Schedule> build_direct(const char* name, const Comm& c, const void* send, void* recv, bool with_recv,
                                       DirectRun run, EnqueueFn fallback, const char* fallback_name) {
  auto s = std::make_shared<Schedule>(name);
  std::shared_ptr<GpuWorkspace> ws = shared_workspace(c);
  auto call = std::make_shared<DirectCall>();
  const auto p = size_t(c.size);
  call->with_recv = with_recv;
  call->rows.resize(p);
  call->mapped.assign(p, 0);
  call->sends.assign(p, nullptr);
  call->recvs.assign(p, nullptr);
  s->call([ws, call, send, recv] {
    describe_own(*ws, send, recv, *call);
    return Status::ok;
  });
  exchange_entries(*s, c, call->rows);
  s->call([ws, call, send, recv, world = c.world_ranks] {
    call->mapped[size_t(ws->rank)] = map_peers(*ws, world, send, recv, *call) ? 1 : 0;
    return Status::ok;
  });
  exchange_entries(*s, c, call->mapped);
  s->call([ws, call, name, run = std::move(run), fallback = std::move(fallback), fallback_name, label = c.label()] {
    const auto failed = std::find(call->mapped.begin(), call->mapped.end(), uint64_t(0));
    if (failed == call->mapped.end()) {
      WEFT_TRY(run(*ws, *call, ws->stream));
    } else {
      const std::string why = !call->why.empty() ? call->why
                                                 : "rank " + std::to_string(failed - call->mapped.begin()) +
                                                       " cannot map every peer's buffers";
      if (log_first_time(std::string(name) + "-fallback:" + label + why))
        WEFT_INFO(Subsys::gpu, "%s on %s runs as %s: %s", name, label.c_str(), fallback_name, why.c_str());
      WEFT_TRY(fallback(*ws, ws->stream));
    }
    return record_done(*ws);
  });
  s->poll([ws](const CollContext&) { return query_done(*ws); });
  return s;
}

}  // namespace weft::coll::gpu
