// Scatter(v) on an intercommunicator: the root sends each rank of the other group its block.
#include "inter.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_inter_scatter(const Comm& ic, const CollArgs& a) {
  auto s = std::make_shared<Schedule>("inter_scatter");
  if (a.root == kRootHere) {
    for (int r = 0; r < ic.peer_count(); ++r) {
      const Block& b = a.send_blocks[size_t(r)];
      if (b.bytes) s->send(r, static_cast<const char*>(a.send) + b.offset, b.bytes);
    }
  } else if (a.root >= 0 && a.own_bytes) {
    s->recv(a.root, a.recv, a.own_bytes);
  }
  return s;
}

}  // namespace weft::coll
