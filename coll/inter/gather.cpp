// Gather(v) on an intercommunicator: every rank of the other group sends its block straight to
// the root, which receives one block from each.
#include "inter.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_inter_gather(const Comm& ic, const CollArgs& a) {
  auto s = std::make_shared<Schedule>("inter_gather");
  if (a.root == kRootHere) {
    for (int r = 0; r < ic.peer_count(); ++r) {
      const Block& b = a.recv_blocks[size_t(r)];
      if (b.bytes) s->recv(r, static_cast<char*>(a.recv) + b.offset, b.bytes);
    }
  } else if (a.root >= 0 && a.own_bytes) {
    s->send(a.root, a.send, a.own_bytes);
  }
  return s;
}

}  // namespace weft::coll
