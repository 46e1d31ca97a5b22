// Bcast on an intercommunicator: the root sends to rank 0 of the other group, which broadcasts
// it there (binomial tree); the rest of the root's group takes no part.
#include "coll/algorithm.h"
#include "inter.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_inter_bcast(const Comm& ic, void* buf, size_t bytes, int root) {
  auto s = std::make_shared<Schedule>("inter_bcast");
  if (root == kRootElsewhere) return s;
  if (root == kRootHere) {
    s->send(0, buf, bytes);
    return s;
  }
  if (ic.rank == 0) s->recv(root, buf, bytes);
  s->next_round();
  auto local = build_bcast_binomial(*ic.local, buf, bytes, 0);
  s->append_local(*local);
  return s;
}

}  // namespace weft::coll
