// Ring allreduce: reduce-scatter then allgather around the ring, 2(p-1) steps each moving
// 1/p of the vector; bandwidth-optimal for large messages.
#include <algorithm>
#include <vector>

#include "coll/p2p.h"

namespace weft::coll {

Status allreduce_ring(CollContext& c, void* buf, size_t count, const Reduction& red) {
  const int p = c.comm.size, me = c.comm.rank;
  if (p == 1 || count == 0) return Status::ok;
  char* data = static_cast<char*>(buf);
  const size_t es = red.elem_size;
  // Segment s covers elements [start(s), start(s+1)).
  auto start = [&](int s) { return count / size_t(p) * size_t(s) + std::min<size_t>(size_t(s), count % size_t(p)); };
  auto seg_count = [&](int s) { return start(s + 1) - start(s); };
  const int right = (me + 1) % p, left = (me - 1 + p) % p;
  std::vector<char> incoming((count / size_t(p) + 1) * es);

  for (int step = 0; step < p - 1; ++step) {
    int send_seg = (me - step + p) % p, recv_seg = (me - step - 1 + p) % p;
    WEFT_TRY(sendrecv(c, data + start(send_seg) * es, seg_count(send_seg) * es, right,
                      incoming.data(), seg_count(recv_seg) * es, left, kTagAllreduce));
    WEFT_TRY(red.apply(incoming.data(), data + start(recv_seg) * es, seg_count(recv_seg)));
  }
  for (int step = 0; step < p - 1; ++step) {
    int send_seg = (me + 1 - step + p) % p, recv_seg = (me - step + p) % p;
    WEFT_TRY(sendrecv(c, data + start(send_seg) * es, seg_count(send_seg) * es, right,
                      data + start(recv_seg) * es, seg_count(recv_seg) * es, left, kTagAllreduce));
  }
  return Status::ok;
}

}  // namespace weft::coll
