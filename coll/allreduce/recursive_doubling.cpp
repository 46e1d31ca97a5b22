// Recursive-doubling allreduce: log2 p exchange rounds of the whole vector, latency-optimal.
// Non-power-of-two p: the first 2*rem ranks pair up, the even one of each pair folds its data
// into the odd one and waits for the result, leaving a power of two to run the rounds.
// Every partial result covers a contiguous range of ranks, so non-commutative operations are
// applied in rank order (the lower range on the left).
#include <cstring>
#include <vector>

#include "coll/p2p.h"

namespace weft::coll {

Status allreduce_recursive_doubling(CollContext& c, void* buf, size_t count, const Reduction& red) {
  const int p = c.comm.size, me = c.comm.rank;
  const size_t bytes = count * red.elem_size;
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  std::vector<char> incoming(bytes);

  int vrank;  // rank among the pof2 participants, or -1 for a folded-out rank
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      WEFT_TRY(send_to(c, buf, bytes, me + 1, kTagAllreduce));
      vrank = -1;
    } else {
      WEFT_TRY(recv_from(c, incoming.data(), bytes, me - 1, kTagAllreduce));
      WEFT_TRY(red.apply(incoming.data(), buf, count));
      vrank = me / 2;
    }
  } else {
    vrank = me - rem;
  }

  if (vrank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      int vpeer = vrank ^ mask;
      int peer = vpeer < rem ? vpeer * 2 + 1 : vpeer + rem;
      WEFT_TRY(sendrecv(c, buf, bytes, peer, incoming.data(), bytes, peer, kTagAllreduce));
      if (peer < me || red.commutative) {
        WEFT_TRY(red.apply(incoming.data(), buf, count));
      } else {  // buf holds the lower ranks: combine into incoming, then keep it
        WEFT_TRY(red.apply(buf, incoming.data(), count));
        memcpy(buf, incoming.data(), bytes);
      }
    }
  }

  if (me < 2 * rem) {
    if (me % 2 == 0) WEFT_TRY(recv_from(c, buf, bytes, me + 1, kTagAllreduce));
    else WEFT_TRY(send_to(c, buf, bytes, me - 1, kTagAllreduce));
  }
  return Status::ok;
}

}  // namespace weft::coll
