// Gather(v) and Scatter(v) on an intercommunicator, one the mirror of the other: the root
// exchanges a block straight with each rank of the other group (gather: receives, scatter:
// sends); every rank of the other group sends or receives its own block; the rest of the root's
// group takes no part.
#include "inter.h"

namespace weft::coll {

namespace {

template <bool gather>
std::shared_ptr<Schedule> build_rooted(const char* name, const Comm& ic, const CollArgs& a) {
  auto s = std::make_shared<Schedule>(name);
  if (a.root == kRootHere) {
    const std::vector<Block>& blocks = gather ? a.recv_blocks : a.send_blocks;
    char* base = static_cast<char*>(gather ? a.recv : const_cast<void*>(a.send));
    for (int r = 0; r < ic.peer_count(); ++r) {
      const Block& b = blocks[size_t(r)];
      if (!b.bytes) continue;
      if (gather) s->recv(r, base + b.offset, b.bytes);
      else s->send(r, base + b.offset, b.bytes);
    }
  } else if (a.root >= 0 && a.own_bytes) {
    if (gather) s->send(a.root, a.send, a.own_bytes);
    else s->recv(a.root, a.recv, a.own_bytes);
  }
  return s;
}

}  // namespace

std::shared_ptr<Schedule> build_inter_gather(const Comm& ic, const CollArgs& a) {
  return build_rooted<true>("inter_gather", ic, a);
}

std::shared_ptr<Schedule> build_inter_scatter(const Comm& ic, const CollArgs& a) {
  return build_rooted<false>("inter_scatter", ic, a);
}

}  // namespace weft::coll
