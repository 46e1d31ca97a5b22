// Alltoall(v,w) on an intercommunicator: block r goes to remote rank r, and remote rank r's
// block for this rank lands in receive block r.
#include "inter.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_inter_alltoall(const Comm& ic, const CollArgs& a) {
  auto s = std::make_shared<Schedule>("inter_alltoall");
  for (int r = 0; r < ic.peer_count(); ++r) {
    const Block& in = a.recv_blocks[size_t(r)];
    const Block& out = a.send_blocks[size_t(r)];
    if (in.bytes) s->recv(r, static_cast<char*>(a.recv) + in.offset, in.bytes);
    if (out.bytes) s->send(r, static_cast<const char*>(a.send) + out.offset, out.bytes);
  }
  return s;
}

}  // namespace weft::coll
