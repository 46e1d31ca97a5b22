// allreduce gpu_direct: no copy through the workspace. The ranks exchange CUDA IPC descriptors
// of their send and receive buffers (host messages), map the peers' buffers through the IPC
// cache, and meet in a flag barrier; then rank r reduces share r of every rank's input straight
// into share r of every rank's output, in one kernel, and a second barrier ends the call (every
// output is complete, and no peer reads an input any more). Each input byte is read once and
// each output byte written once, the 2pS bound of one GPU (gpu_two_shot moves (3p-1)S).
// For large messages: the exchange costs two rounds of host messages, and a buffer's first use
// costs an IPC open per peer (then cached, WEFT_CUDA_IPC_CACHE).
//
// Every rank takes the same path: when some rank's buffer has no IPC handle (memory from
// stream-ordered pools or the virtual memory API), CUDA IPC is off, the cache is too small to
// hold the call's mappings, or a mapping fails, all of them learn it from the exchange and run
// gpu_two_shot instead, with an INFO line.
#include <algorithm>

#include "runtime/cuda_ipc.h"
#include "runtime/log.h"
#include "runtime/op_gpu.h"
#include "workspace.h"

namespace weft::coll::gpu {

namespace {

// One rank's part of the exchange (plain bytes: it travels as a host message).
struct Exported {
  IpcDescriptor send, recv;
  uint64_t ok = 0;  // both described, and this rank can map every peer's buffers
};

// The state of one call, shared by the schedule's steps.
struct DirectCall {
  std::vector<Exported> rows;      // rows[q]: rank q's buffers
  std::vector<uint64_t> mapped;    // mapped[q]: rank q mapped every peer's buffers
  std::vector<void*> sends, recvs; // every rank's buffers, mapped here
  std::string why;                 // why this rank cannot take the direct path
};

void describe_own(const GpuWorkspace& ws, const void* send, void* recv, DirectCall& call) {
  Exported& mine = call.rows[size_t(ws.rank)];
  mine = Exported{};
  call.why.clear();
  const char* off = nullptr;
  const size_t needed = 2 * size_t(ws.size - 1);
  if (!cuda_ipc_usable(&off)) {
    call.why = std::string("CUDA IPC is not usable (") + off + ")";
  } else if (cuda_ipc_stats().capacity < needed) {
    call.why = "WEFT_CUDA_IPC_CACHE holds fewer than the " + std::to_string(needed) + " mappings a call needs";
  } else if (cuda_ipc_describe(send, &mine.send) != Status::ok ||
             (send != recv && cuda_ipc_describe(recv, &mine.recv) != Status::ok)) {
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
    const Exported& r = call.rows[size_t(q)];
    if (cuda_ipc_map(world[size_t(q)], r.send, &call.sends[size_t(q)]) != Status::ok ||
        cuda_ipc_map(world[size_t(q)], r.recv, &call.recvs[size_t(q)]) != Status::ok) {
      call.why = "mapping rank " + std::to_string(q) + "'s buffers failed (" + error_detail() + ")";
      return false;
    }
  }
  return true;
}

Status enqueue_direct(GpuWorkspace& ws, const DirectCall& call, size_t count, BasicType type, ReduceOp op,
                      cudaStream_t s) {
  const size_t elem = basic_type_size(type), p = size_t(ws.size);
  const size_t align = std::max<size_t>(1, 16 / elem);
  const size_t share = ((count + p - 1) / p + align - 1) / align * align;
  const size_t lo = std::min(count, size_t(ws.rank) * share), hi = std::min(count, lo + share);
  WEFT_TRY(enqueue_flag_barrier(ws, s));
  if (hi > lo) {
    DeviceInputs in;
    DeviceOutputs out;
    in.count = out.count = ws.size;
    for (size_t q = 0; q < p; ++q) {
      in.in[q] = static_cast<const char*>(call.sends[q]) + lo * elem;
      out.out[q] = static_cast<char*>(call.recvs[q]) + lo * elem;
    }
    WEFT_TRY(reduce_device_multi_out(op, type, in, out, hi - lo, s));
  }
  return enqueue_flag_barrier(ws, s);
}

// Blocking calls only: the device work waits for two rounds of host messages, so a
// non-blocking call's could be enqueued after a later call's on some rank.
bool supports(const CollArgs& a, const CollContext& ctx) {
  return a.blocking && kernel_call_supported(a, ctx.comm, true);
}

// A rough model, printed with the choice (the rule in choice.cpp decides): the launch floor
// (about 10 us), two host message rounds and two barriers, then one read and one write of the
// vector per rank at 3.3 TB/s (measured on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  const Comm& c = ctx.comm;
  constexpr double kLaunchUs = 10, kBytesPerUs = 3.3e6;
  return kLaunchUs + 8 + c.size * 1.0 + double(a.bytes) * 2 / kBytesPerUs;
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

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("gpu_direct");
  std::shared_ptr<GpuWorkspace> ws = shared_workspace(c);
  auto call = std::make_shared<DirectCall>();
  const auto p = size_t(c.size);
  call->rows.resize(p);
  call->mapped.assign(p, 0);
  call->sends.assign(p, nullptr);
  call->recvs.assign(p, nullptr);
  const void* send = a.send;
  void* recv = a.recv;
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
  s->call([ws, call, send, recv, count = a.count, type = a.red.type, op = a.red.op, name = c.label()] {
    const auto failed = std::find(call->mapped.begin(), call->mapped.end(), uint64_t(0));
    if (failed == call->mapped.end()) {
      WEFT_TRY(enqueue_direct(*ws, *call, count, type, op, ws->stream));
    } else {
      const std::string why = !call->why.empty() ? call->why
                                                 : "rank " + std::to_string(failed - call->mapped.begin()) +
                                                       " cannot map every peer's buffers";
      if (log_first_time("gpu-direct-fallback:" + name + why))
        WEFT_INFO(Subsys::gpu, "gpu_direct allreduce on %s runs as gpu_two_shot: %s", name.c_str(), why.c_str());
      WEFT_TRY(enqueue_two_shot(*ws, send, recv, count, type, op, ws->stream));
    }
    return record_done(*ws);
  });
  s->poll([ws](const CollContext&) { return query_done(*ws); });
  return s;
}

}  // namespace

extern const Algorithm allreduce_gpu_direct{"gpu_direct", Collective::allreduce, supports,
                                         ruled_estimate<estimate, allreduce_gpu_direct>, build};

}  // namespace weft::coll::gpu
