// Collectives on host memory, blocking. Each algorithm lives in coll/<collective>/<name>.cpp.
// These are the first algorithms; the schedule engine and cost-model selector replace the
// simple size threshold used by allreduce here.
#pragma once
#include <cstddef>
#include <memory>

#include "pt2pt/comm.h"
#include "pt2pt/transport.h"
#include "runtime/core/datatype.h"
#include "runtime/core/op.h"

namespace weft::coll {

// What a reduction combines and how: a predefined op on a basic type, or a user function.
// apply() computes inout = in (op) inout; for a non-commutative op, `in` must hold the
// contribution of the lower ranks.
struct Reduction {
  ReduceOp op = ReduceOp::sum;
  BasicType type = BasicType::none;
  size_t elem_size = 0;                 // bytes between consecutive elements
  bool commutative = true;
  Status (*user)(const void* ctx, const void* in, void* inout, size_t count) = nullptr;
  const void* user_ctx = nullptr;

  Status apply(const void* in, void* inout, size_t count) const {
    if (user) return user(user_ctx, in, inout, count);
    return reduce_local(op, type, in, inout, count);
  }
};

struct CollContext {
  Transport& transport;
  const Comm& comm;
  size_t allreduce_ring_min;  // bytes from which allreduce uses the ring
  bool dump = false;          // print every schedule before it runs (WEFT_COLL_DUMP)
};

class Schedule;

// Algorithms: each builds the schedule of one rank (coll/<collective>/<algorithm>.cpp).
std::shared_ptr<Schedule> build_barrier_dissemination(const Comm& c);
std::shared_ptr<Schedule> build_bcast_binomial(const Comm& c, void* buf, size_t bytes, int root);
// send == recv means in place. recv is significant at the root only.
std::shared_ptr<Schedule> build_reduce_binomial(const Comm& c, const void* send, void* recv,
                                                size_t count, const Reduction& red, int root);
std::shared_ptr<Schedule> build_allreduce_recursive_doubling(const Comm& c, void* buf, size_t count,
                                                             const Reduction& red);
std::shared_ptr<Schedule> build_allreduce_ring(const Comm& c, void* buf, size_t count,
                                               const Reduction& red);

// Selection: the schedule for a call, its choice logged at INFO. The same schedule runs
// blocking (below), non-blocking or persistently (coll/schedule.h).
std::shared_ptr<Schedule> plan_barrier(const CollContext& c);
std::shared_ptr<Schedule> plan_bcast(const CollContext& c, void* buf, size_t bytes, int root);
std::shared_ptr<Schedule> plan_reduce(const CollContext& c, const void* send, void* recv,
                                      size_t count, const Reduction& red, int root);
std::shared_ptr<Schedule> plan_allreduce(const CollContext& c, const void* send, void* recv,
                                         size_t count, const Reduction& red);

// Blocking entry points.
Status barrier(CollContext& c);
Status bcast(CollContext& c, void* buf, size_t bytes, int root);
Status reduce(CollContext& c, const void* send, void* recv, size_t count, const Reduction& red,
              int root);
Status allreduce(CollContext& c, const void* send, void* recv, size_t count, const Reduction& red);

}  // namespace weft::coll
