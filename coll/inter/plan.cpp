// The builder of each collective on an intercommunicator (inter.h).
#include <string>

#include "coll/algorithm.h"
#include "inter.h"

namespace weft::coll {

const void* reduce_to_leader(Schedule& s, const Comm& ic, const void* send, size_t count, const Reduction& red) {
  if (ic.size == 1) return send;
  void* result = ic.rank == 0 ? s.scratch(count * red.elem_size) : nullptr;
  auto local = build_reduce_binomial(*ic.local, send, result, count, red, 0);
  s.append_local(*local);
  s.next_round();
  return result;
}

Status plan_inter(const CollContext& ctx, const CollArgs& a, std::shared_ptr<Schedule>* out) {
  const Comm& ic = ctx.comm;
  switch (a.coll) {
    case Collective::barrier: *out = build_inter_barrier(ic); break;
    case Collective::bcast: *out = build_inter_bcast(ic, a.recv, a.bytes, a.root); break;
    case Collective::gather: *out = build_inter_gather(ic, a); break;
    case Collective::scatter: *out = build_inter_scatter(ic, a); break;
    case Collective::allgather: *out = build_inter_allgather(ic, a); break;
    case Collective::alltoall: *out = build_inter_alltoall(ic, a); break;
    case Collective::reduce: *out = build_inter_reduce(ic, a); break;
    case Collective::allreduce: *out = build_inter_allreduce(ic, a); break;
    case Collective::reduce_scatter: *out = build_inter_reduce_scatter(ic, a); break;
    default:
      set_error_detail(std::string(collective_name(a.coll)) + " is not defined on intercommunicators");
      return Status::not_supported;
  }
  return Status::ok;
}

}  // namespace weft::coll
