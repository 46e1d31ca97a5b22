// Linear scatter(v): the root sends every rank its block in one round.
#include "coll/gather/rooted.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_scatter_linear(const Comm& c, const char* send,
                                               const std::vector<Block>& blocks, void* mine,
                                               size_t mine_bytes, int root) {
  return build_rooted_linear<false>("scatter:linear", c, send, blocks, mine, mine_bytes, root);
}

namespace {
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_scatter_linear(c, static_cast<const char*>(a.send), a.send_blocks, a.recv, a.own_bytes, a.root);
}
}  // namespace

extern const Algorithm scatter_linear{"linear", Collective::scatter, always, rooted_linear_us, build};

}  // namespace weft::coll
