// Reduce_scatter(_block) on an intercommunicator: each group reduces its whole vector at its
// rank 0, the two leaders swap their results, and each leader scatters the other group's
// result over its own group by a.counts.
#include "coll/algorithm.h"
#include "inter.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_inter_reduce_scatter(const Comm& ic, const CollArgs& a) {
  auto s = std::make_shared<Schedule>("inter_reduce_scatter", a.red);
  const size_t unit = a.red.elem_size;
  std::vector<Block> blocks;
  size_t total = 0;
  for (size_t n : a.counts) {
    blocks.push_back(Block{total * unit, n * unit});
    total += n;
  }
  const void* mine = reduce_to_leader(*s, ic, a.send, total, a.red);
  char* theirs = nullptr;
  if (ic.rank == 0) {
    theirs = s->scratch(total * unit);
    s->recv(0, theirs, total * unit);
    s->send(0, mine, total * unit);
  }
  s->next_round();
  auto local = build_scatter_linear(*ic.local, theirs, blocks, a.recv, blocks[size_t(ic.rank)].bytes, 0);
  s->append_local(*local);
  return s;
}

}  // namespace weft::coll
