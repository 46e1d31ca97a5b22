// Barrier on an intercommunicator: every local rank signals local rank 0, the two leaders
// signal each other, and each leader releases its group. No rank leaves before every rank of
// the other group has entered.
#include "inter.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_inter_barrier(const Comm& ic) {
  auto s = std::make_shared<Schedule>("inter_barrier");
  const bool leader = ic.rank == 0;
  s->new_round();
  if (leader)
    for (int r = 1; r < ic.size; ++r) s->recv(local_peer(r), nullptr, 0);
  else
    s->send(local_peer(0), nullptr, 0);
  s->new_round();
  if (leader) {
    s->send(0, nullptr, 0);
    s->recv(0, nullptr, 0);
  }
  s->new_round();
  if (leader)
    for (int r = 1; r < ic.size; ++r) s->send(local_peer(r), nullptr, 0);
  else
    s->recv(local_peer(0), nullptr, 0);
  return s;
}

}  // namespace weft::coll
