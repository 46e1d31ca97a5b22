// Binomial-tree broadcast: log2 p rounds, latency-optimal for small messages.
#include "coll/p2p.h"

namespace weft::coll {

Status bcast_binomial(CollContext& c, void* buf, size_t bytes, int root) {
  const int p = c.comm.size;
  const int rel = (c.comm.rank - root + p) % p;
  int mask = 1;
  while (mask < p) {  // receive from the parent: the rank that differs in our lowest set bit
    if (rel & mask) {
      WEFT_TRY(recv_from(c, buf, bytes, (rel - mask + root) % p, kTagBcast));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rel + mask < p) WEFT_TRY(send_to(c, buf, bytes, (rel + mask + root) % p, kTagBcast));
  }
  return Status::ok;
}

}  // namespace weft::coll
