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
  if (rt->orphans.empty()) [[likely]] return 0;
  return release_orphans(rt->requests, &rt->orphans);
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
  rt->progress.add_poller(reap_orphans, rt);
  rt->progress.add_poller(RequestPairs::poll, &rt->request_pairs);
  rt->progress.add_poller(Calls::poll, &rt->coll_calls);
  return Status::ok;
}

Status finish_runtime(Runtime& rt, const std::function<void(std::vector<void*>*)>& release_before_transport) {
  finish_process(*rt.boot, *rt.transport, rt.bsend.pending, rt.orphans);
  std::vector<void*> memory;
  release_before_transport(&memory);
  rt.transport.reset();
  for (void* p : memory) free(p);
  release_device_resources();
  gpu::release_all();
  offload::unload();
  return rt.boot->finalize();
}

}  // namespace weft::coll
