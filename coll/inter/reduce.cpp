// Reduce on an intercommunicator: the other group reduces at its rank 0 (binomial tree), which
// sends the result to the root; the rest of the root's group takes no part.
#include "inter.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_inter_reduce(const Comm& ic, const CollArgs& a) {
  auto s = std::make_shared<Schedule>("inter_reduce", a.red);
  const size_t bytes = a.count * a.red.elem_size;
  if (a.root == kRootHere) {
    s->recv(0, a.recv, bytes);
  } else if (a.root >= 0) {
    const void* result = reduce_to_leader(*s, ic, a.send, a.count, a.red);
    if (ic.rank == 0) s->send(a.root, result, bytes);
  }
  return s;
}

}  // namespace weft::coll
