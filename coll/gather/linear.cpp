// Linear gather(v): every rank sends its block to the root, which receives them all in one
// round (the transport overlaps them).
#include "coll/gather/rooted.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_gather_linear(const Comm& c, const void* mine, size_t mine_bytes,
                                              char* recv, const std::vector<Block>& blocks, int root) {
  return build_rooted_linear<true>("gather:linear", c, recv, blocks, mine, mine_bytes, root);
}

namespace {
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_gather_linear(c, a.send, a.own_bytes, static_cast<char*>(a.recv), a.recv_blocks, a.root);
}
}  // namespace

extern const Algorithm gather_linear{"linear", Collective::gather, always, rooted_linear_us, build};

}  // namespace weft::coll
