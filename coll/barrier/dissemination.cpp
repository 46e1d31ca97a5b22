// Dissemination barrier: ceil(log2 p) rounds; in round k each rank signals rank + 2^k and
// waits for rank - 2^k. Works for any p.
#include "coll/p2p.h"

namespace weft::coll {

Status barrier_dissemination(CollContext& c) {
  const int p = c.comm.size, me = c.comm.rank;
  for (int dist = 1; dist < p; dist <<= 1) {
    int to = (me + dist) % p, from = (me - dist + p) % p;
    WEFT_TRY(sendrecv(c, nullptr, 0, to, nullptr, 0, from, kTagBarrier));
  }
  return Status::ok;
}

}  // namespace weft::coll
