// Collectives on host memory, blocking. Each algorithm lives in coll/<collective>/<name>.cpp.
// These are the first algorithms; the schedule engine and cost-model selector replace the
// simple size threshold used by allreduce here.
#pragma once
#include <cstddef>

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
};

Status barrier_dissemination(CollContext& c);
Status bcast_binomial(CollContext& c, void* buf, size_t bytes, int root);
// send == recv means in place. recv is significant at the root only.
Status reduce_binomial(CollContext& c, const void* send, void* recv, size_t count,
                       const Reduction& red, int root);
Status allreduce_recursive_doubling(CollContext& c, void* buf, size_t count, const Reduction& red);
Status allreduce_ring(CollContext& c, void* buf, size_t count, const Reduction& red);

// Entry points used by the MPI bindings: pick an algorithm and log the choice at INFO.
Status barrier(CollContext& c);
Status bcast(CollContext& c, void* buf, size_t bytes, int root);
Status reduce(CollContext& c, const void* send, void* recv, size_t count, const Reduction& red,
              int root);
Status allreduce(CollContext& c, const void* send, void* recv, size_t count, const Reduction& red);

}  // namespace weft::coll
