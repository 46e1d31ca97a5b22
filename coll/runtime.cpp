// The start and the end of a process's communication runtime.
#include "coll/runtime.h"

#include <cstdlib>

#include "coll/gpu/gpu_coll.h"
#include "coll/offload/offload.h"
#include "runtime/staging.h"

namespace weft::coll {

namespace {

// Requests the user freed while in flight are released once their operation completes.
int reap_orphans(void* ctx) {
  auto* rt = static_cast<Runtime*>(ctx);
  const int released = release_orphans(rt->requests, &rt->orphans);
  if (rt->orphans.empty()) rt->progress.disarm(rt->orphan_poller);
  return released;
}

}  // namespace

Status open_runtime(Runtime* rt, CpuSet* cpus) {
  rt->config = process_config();
  if (Status s = rt->config.check(); s != Status::ok) return s;
  return start_process(rt->config, rt->progress, &rt->boot, cpus);
}

Status start_runtime(Runtime* rt, const CpuSet& cpus) {
  const Status s = start_transport(rt->config, *rt->boot, rt->progress, rt->requests, cpus, &rt->node_topology,
                                   &rt->transport);
  if (s != Status::ok) return s;
  staging_set_cache_limit(rt->config.size("WEFT_STAGING_CACHE"));
  rt->board = std::make_unique<StatusBoard>(*rt->boot);
  // Armed only while they have work: a pass of a message-rate loop calls none of them.
  rt->orphan_poller = rt->progress.add_poller(reap_orphans, rt, false);
  rt->request_pairs.attach(&rt->progress);
  rt->coll_calls.attach(&rt->progress);
  return Status::ok;
}

void Runtime::free_request(Request* r) {
  weft::free_request(requests, &orphans, r);
  if (!orphans.empty()) progress.arm(orphan_poller);
}

Status finish_runtime(Runtime& rt, const std::function<void(std::vector<void*>*)>& release_before_transport) {
  finish_process(*rt.boot, *rt.transport, rt.bsend->pending, rt.orphans);
  std::vector<void*> memory;
  release_before_transport(&memory);
  rt.transport.reset();
  for (void* p : memory) free(p);
  release_device_resources();
  gpu::release_all();
  offload::unload();
  rt.board.reset();
  return rt.boot->finalize();
}

}  // namespace weft::coll
