// Algorithm choice: a size threshold for allreduce (from the config registry), one algorithm
// for the others. Each choice is logged at INFO once per (collective, algorithm). The cost
// model and override grammar replace the threshold when more algorithms exist.
#include <string>

#include "runtime/core/log.h"
#include "schedule.h"

namespace weft::coll {

namespace {
void log_choice(const char* coll, const char* algo, size_t bytes, int p) {
  if (log_enabled(LogLevel::info, Subsys::coll) &&
      log_first_time(std::string("coll:") + coll + ":" + algo))
    log_write(LogLevel::info, Subsys::coll, "%s of %zu bytes on %d ranks: algorithm %s", coll,
              bytes, p, algo);
}
}  // namespace

std::shared_ptr<Schedule> plan_barrier(const CollContext& c) {
  log_choice("barrier", "dissemination", 0, c.comm.size);
  return build_barrier_dissemination(c.comm);
}

std::shared_ptr<Schedule> plan_bcast(const CollContext& c, void* buf, size_t bytes, int root) {
  log_choice("bcast", "binomial", bytes, c.comm.size);
  return build_bcast_binomial(c.comm, buf, bytes, root);
}

std::shared_ptr<Schedule> plan_reduce(const CollContext& c, const void* send, void* recv,
                                      size_t count, const Reduction& red, int root) {
  log_choice("reduce", "binomial", count * red.elem_size, c.comm.size);
  return build_reduce_binomial(c.comm, send, recv, count, red, root);
}

std::shared_ptr<Schedule> plan_allreduce(const CollContext& c, const void* send, void* recv,
                                         size_t count, const Reduction& red) {
  const size_t bytes = count * red.elem_size;
  std::shared_ptr<Schedule> s;
  // The ring reorders contributions: commutative operations only.
  if (c.comm.size > 1 && bytes >= c.allreduce_ring_min && count >= size_t(c.comm.size) &&
      red.commutative) {
    log_choice("allreduce", "ring", bytes, c.comm.size);
    s = build_allreduce_ring(c.comm, recv, count, red);
  } else {
    log_choice("allreduce", "recursive_doubling", bytes, c.comm.size);
    s = build_allreduce_recursive_doubling(c.comm, recv, count, red);
  }
  if (send != recv) {  // out of place: the first local step copies the input
    auto with_copy = std::make_shared<Schedule>(s->name());
    with_copy->set_reduction(red);
    with_copy->copy(send, recv, bytes);
    with_copy->append(*s);
    return with_copy;
  }
  return s;
}

Status barrier(CollContext& c) { return run(c, plan_barrier(c)); }

Status bcast(CollContext& c, void* buf, size_t bytes, int root) {
  if (c.comm.size == 1) return Status::ok;
  return run(c, plan_bcast(c, buf, bytes, root));
}

Status reduce(CollContext& c, const void* send, void* recv, size_t count, const Reduction& red,
              int root) {
  return run(c, plan_reduce(c, send, recv, count, red, root));
}

Status allreduce(CollContext& c, const void* send, void* recv, size_t count, const Reduction& red) {
  return run(c, plan_allreduce(c, send, recv, count, red));
}

}  // namespace weft::coll
