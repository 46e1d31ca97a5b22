// Allreduce on an intercommunicator: each group reduces at its rank 0, the two leaders swap
// their results, and each leader broadcasts the other group's result to its own group.
#include "coll/algorithm.h"
#include "inter.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_inter_allreduce(const Comm& ic, const CollArgs& a) {
  auto s = std::make_shared<Schedule>("inter_allreduce", a.red);
  const size_t bytes = a.count * a.red.elem_size;
  const void* mine = reduce_to_leader(*s, ic, a.send, a.count, a.red);
  if (ic.rank == 0) {
    s->recv(0, a.recv, bytes);
    s->send(0, mine, bytes);
  }
  s->next_round();
  auto local = build_bcast_binomial(*ic.local, a.recv, bytes, 0);
  s->append_local(*local);
  return s;
}

}  // namespace weft::coll
