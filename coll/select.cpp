// Algorithm choice: the argmin of the candidates' cost estimates, unless WEFT_COLL_TUNE forces
// or excludes one. The choice is cached per (communicator, collective, size bucket, kind of
// operation, memory kind) and logged at INFO with every candidate's estimate when first made.
// Memory kind is part of the key: a call on GPU device memory (coll/gpu/gpu_coll.h; every rank
// must pass device memory) chooses among the GPU algorithms, whose estimates carry the GPU
// rule (gpu::rule_pick), every other call among the host algorithms. Where a rule made the
// lowest estimate (the GPU rule, WEFT_OFFLOAD=require) the log says "rule, not a measured model".
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "algorithm.h"
#include "comm_state.h"
#include "gpu/gpu_coll.h"
#include "hier/hierarchy.h"
#include "offload/offload.h"
#include "runtime/log.h"
#include "tune.h"

namespace weft::coll {

namespace {

// Power-of-two size buckets: bucket b holds sizes in [2^(b-1), 2^b).
unsigned size_bucket(size_t bytes) { return bytes == 0 ? 0 : 64 - unsigned(__builtin_clzll(bytes)); }

uint32_t cache_key(const CollArgs& a, bool device) {
  return uint32_t(a.coll) << 24 | size_bucket(a.bytes) << 16 | uint32_t(a.any_start_order) << 3 |
         uint32_t(device) << 2 | uint32_t(a.red.commutative) << 1 | uint32_t(a.uniform);
}

// Only a communicator with a GPU workspace, or whose node levels gpu::gate() made ready, can
// see device-memory calls here (coll::Call stages device buffers otherwise), and only for the
// collectives coll/gpu has algorithms for, so other calls never ask for the memory kind.
bool device_call(const CollContext& c, const CollArgs& a) {
  const CommState& st = state_of(c);
  return (st.gpu || gpu::hier_ready(st)) && gpu::has_algorithms(a.coll) && gpu::device_call(a);
}

void log_choice(const CollContext& c, const CollArgs& a, const CostModel& m, const Algorithm* chosen,
                const char* why, bool device) {
  if (!log_enabled(LogLevel::info, Subsys::coll)) return;
  std::string estimates;
  char item[96];
  for (const Algorithm* alg : algorithms()) {
    if (alg->coll != a.coll || gpu::is_gpu_algorithm(*alg) != device) continue;
    if (alg->supports(a, c))
      snprintf(item, sizeof item, "%s%s %.1f", estimates.empty() ? "" : ", ", alg->name,
               alg->estimate_us(a, c, m));
    else
      snprintf(item, sizeof item, "%s%s n/a", estimates.empty() ? "" : ", ", alg->name);
    estimates += item;
  }
  const unsigned b = size_bucket(a.bytes);
  const size_t lo = b == 0 ? 0 : size_t(1) << (b - 1), hi = b == 0 ? 0 : (size_t(1) << b) - 1;
  log_write(LogLevel::info, Subsys::coll,
            "%s on %s (%d ranks), %zu-%zu bytes%s: %s (%s; estimates in us: %s)",
            collective_name(a.coll), c.comm.label().c_str(), c.comm.size, lo, hi,
            device ? " of cuda device memory" : "", chosen->name, why, estimates.c_str());
}

// tuning: exclusions to honour, or none. device: among coll/gpu's algorithms, else the host ones.
const Algorithm* argmin(const CollContext& c, const CollArgs& a, const CostModel& m, const Tuning* tuning,
                        bool device) {
  const Algorithm* best = nullptr;
  double best_us = std::numeric_limits<double>::infinity();
  for (const Algorithm* alg : algorithms()) {
    if (alg->coll != a.coll || gpu::is_gpu_algorithm(*alg) != device || !alg->supports(a, c)) continue;
    if (tuning && tuning->excluded(*alg, a.bytes)) continue;
    const double us = alg->estimate_us(a, c, m);
    if (!best || us < best_us) {
      best = alg;
      best_us = us;
    }
  }
  return best;
}

// Why the argmin chose `chosen`, for the log: where a rule rather than a measured model made its
// estimate the lowest (the GPU rule, WEFT_OFFLOAD=require), the rule's reason.
std::string reason(const CollContext& c, const CollArgs& a, const Algorithm& chosen, bool device) {
  if (device) return gpu::rule_reason(chosen, a, c.comm);
  if (offload::required(a, c) && !strcmp(chosen.name, "offload"))
    return "rule, not a measured model: WEFT_OFFLOAD=require";
  return "lowest estimate";
}

// The one decider: a WEFT_COLL_TUNE force that can run the call, else the argmin of the
// estimates (the GPU algorithms' carry the GPU rule, the offload algorithms' WEFT_OFFLOAD=require).
const Algorithm* choose(const CollContext& c, const CollArgs& a) {
  const bool device = device_call(c, a);
  const uint32_t key = cache_key(a, device);
  auto& choices = state_of(c).choices;
  auto it = choices.find(key);
  if (it != choices.end()) {
    const Algorithm* cached = it->second;
    if (cached->supports(a, c)) return cached;
  }
  const CostModel m = model_for(c.comm, c.model);
  const Algorithm* chosen = nullptr;
  std::string why;
  const Algorithm* forced = c.tuning ? c.tuning->forced(a.coll, a.bytes) : nullptr;
  if (forced && forced->supports(a, c) && gpu::is_gpu_algorithm(*forced) == device) {
    chosen = forced;
    why = "forced by WEFT_COLL_TUNE";
  } else {
    if (device) {
      // Across nodes a forced GPU algorithm applies to the node stages of gpu_hier.
      if (forced && !spans_nodes(c.comm) && log_first_time(std::string("tune-unsupported-gpu:") + forced->name))
        WEFT_WARN(Subsys::coll,
                  "WEFT_COLL_TUNE forces %s:%s, which cannot run this call on cuda device memory; "
                  "choosing by the gpu rule",
                  collective_name(a.coll), forced->name);
    } else if (forced && !gpu::is_gpu_algorithm(*forced) &&  // host memory: no warning for a GPU one
               log_first_time(std::string("tune-unsupported:") + forced->name)) {
      WEFT_WARN(Subsys::coll,
                "WEFT_COLL_TUNE forces %s:%s, which cannot run this call (%zu bytes, %s "
                "operation); choosing by the cost model",
                collective_name(a.coll), forced->name, a.bytes,
                a.red.commutative ? "commutative" : "non-commutative");
    }
    chosen = argmin(c, a, m, c.tuning, device);
    if (chosen) {
      why = reason(c, a, *chosen, device);
    } else if ((chosen = argmin(c, a, m, nullptr, device))) {
      why = "every other candidate cannot run this call";
      WEFT_WARN(Subsys::coll, "WEFT_COLL_TUNE excludes every algorithm that can run %s of %zu bytes; using %s",
                collective_name(a.coll), a.bytes, chosen->name);
    }
  }
  if (!chosen) return nullptr;
  if (it == choices.end()) {
    choices.emplace(key, chosen);
    log_choice(c, a, m, chosen, why.c_str(), device);
  }
  return chosen;
}

}  // namespace

const Algorithm* lowest_estimate(const CollArgs& a, const CollContext& c, const CostModel& m, bool device) {
  return argmin(c, a, model_for(c.comm, m), nullptr, device);
}

Status plan(const CollContext& c, const CollArgs& a, std::shared_ptr<Schedule>* out) {
  const Algorithm* alg = choose(c, a);
  if (!alg) {
    WEFT_ERROR(Subsys::coll, "no %s algorithm supports this call", collective_name(a.coll));
    return Status::not_supported;
  }
  ScratchAlignment align(a.recv ? a.recv : a.send);
  std::shared_ptr<Schedule> s = alg->build(a, c);
  // Allreduce algorithms work in place on recv: out of place, the first step copies the input
  // (the GPU algorithms read send themselves: it is device memory).
  if (a.coll == Collective::allreduce && a.send != a.recv && !gpu::is_gpu_algorithm(*alg)) {
    auto with_copy = std::make_shared<Schedule>(s->name());
    with_copy->set_reduction(a.red);
    with_copy->copy(a.send, a.recv, a.bytes);
    with_copy->append(*s);
    s = std::move(with_copy);
  }
  const auto all = algorithms();
  s->set_algorithm(int(std::find(all.begin(), all.end(), alg) - all.begin()));
  *out = std::move(s);
  return Status::ok;
}

Status allreduce(const CollContext& c, const void* send, void* recv, size_t count, const Reduction& red) {
  if (count == 0) return Status::ok;
  CollArgs a{Collective::allreduce};
  a.send = send;
  a.recv = recv;
  a.count = count;
  a.bytes = count * red.elem_size;
  a.red = red;
  std::shared_ptr<Schedule> s;
  WEFT_TRY(plan(c, a, &s));
  CollContext ctx = c;
  return run(ctx, s);
}

}  // namespace weft::coll
