// Algorithm choice for the first collectives: a size threshold for allreduce (from the
// config registry), one algorithm for the others. Each choice is logged at INFO once per
// (collective, algorithm).
#include <cstring>
#include <string>

#include "coll.h"
#include "runtime/core/log.h"

namespace weft::coll {

namespace {
void log_choice(const char* coll, const char* algo, size_t bytes, int p) {
  if (log_enabled(LogLevel::info, Subsys::coll) &&
      log_first_time(std::string("coll:") + coll + ":" + algo))
    log_write(LogLevel::info, Subsys::coll, "%s of %zu bytes on %d ranks: algorithm %s", coll,
              bytes, p, algo);
}
}  // namespace

Status barrier(CollContext& c) {
  log_choice("barrier", "dissemination", 0, c.comm.size);
  return barrier_dissemination(c);
}

Status bcast(CollContext& c, void* buf, size_t bytes, int root) {
  if (c.comm.size == 1) return Status::ok;
  log_choice("bcast", "binomial", bytes, c.comm.size);
  return bcast_binomial(c, buf, bytes, root);
}

Status reduce(CollContext& c, const void* send, void* recv, size_t count, const Reduction& red,
              int root) {
  log_choice("reduce", "binomial", count * red.elem_size, c.comm.size);
  return reduce_binomial(c, send, recv, count, red, root);
}

Status allreduce(CollContext& c, const void* send, void* recv, size_t count, const Reduction& red) {
  const size_t bytes = count * red.elem_size;
  if (send != recv) memcpy(recv, send, bytes);
  if (c.comm.size == 1 || count == 0) return Status::ok;
  // The ring reorders contributions: commutative operations only.
  if (bytes >= c.allreduce_ring_min && count >= size_t(c.comm.size) && red.commutative) {
    log_choice("allreduce", "ring", bytes, c.comm.size);
    return allreduce_ring(c, recv, count, red);
  }
  log_choice("allreduce", "recursive_doubling", bytes, c.comm.size);
  return allreduce_recursive_doubling(c, recv, count, red);
}

}  // namespace weft::coll
