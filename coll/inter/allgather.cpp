// Allgather(v) on an intercommunicator: every rank sends its block to every rank of the other
// group and receives one block from each of them.
#include "inter.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_inter_allgather(const Comm& ic, const CollArgs& a) {
  auto s = std::make_shared<Schedule>("inter_allgather");
  for (int r = 0; r < ic.peer_count(); ++r) {
    const Block& b = a.recv_blocks[size_t(r)];
    if (b.bytes) s->recv(r, static_cast<char*>(a.recv) + b.offset, b.bytes);
    if (a.own_bytes) s->send(r, a.send, a.own_bytes);
  }
  return s;
}

}  // namespace weft::coll
