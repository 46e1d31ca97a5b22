// Bruck alltoall: ceil(log2 p) rounds for any p, for small equal blocks. A local rotation puts
// the block for rank me + i at index i of a scratch buffer; in round k every block whose index
// has bit k set is packed, sent to rank + 2^k (the blocks from rank - 2^k take their place), so
// each block travels its index in hops of powers of two. An inverse rotation puts the block
// from rank me - i into place. Each byte moves about log2 p / 2 times, so it only pays off
// when latency dominates.
#include "coll/algorithm.h"

namespace weft::coll {

namespace {

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  const char* send = static_cast<const char*>(a.send);
  char* recv = static_cast<char*>(a.recv);
  const std::vector<Block>& send_blocks = a.send_blocks;
  const std::vector<Block>& recv_blocks = a.recv_blocks;
  auto s = std::make_shared<Schedule>("alltoall:bruck");
  const int p = c.size, me = c.rank;
  const size_t b = send_blocks[size_t(me)].bytes;
  if (p == 1) {
    s->new_round();
    s->copy(send + send_blocks[0].offset, recv + recv_blocks[0].offset, b);
    return s;
  }
  // work[i]: the block that goes to (and, at the end, the one that came from) rank me +- i.
  char* work = s->scratch(size_t(p) * b);
  char* packed_out = s->scratch(size_t(p / 2 + 1) * b);
  char* packed_in = s->scratch(size_t(p / 2 + 1) * b);
  // Blocks whose index has a given bit set.
  auto moving = [p](int dist) {
    std::vector<int> idx;
    for (int i = 1; i < p; ++i)
      if (i & dist) idx.push_back(i);
    return idx;
  };
  s->new_round();
  for (int i = 1; i < p; ++i) {
    const Block& from = send_blocks[size_t((me + i) % p)];
    s->copy(send + from.offset, work + size_t(i) * b, b);
  }
  for (int dist = 1; dist < p; dist <<= 1) {
    const std::vector<int> idx = moving(dist);
    for (size_t j = 0; j < idx.size(); ++j) s->copy(work + size_t(idx[j]) * b, packed_out + j * b, b);
    s->new_round();
    s->send((me + dist) % p, packed_out, idx.size() * b);
    s->recv((me - dist + p) % p, packed_in, idx.size() * b);
    for (size_t j = 0; j < idx.size(); ++j) s->copy(packed_in + j * b, work + size_t(idx[j]) * b, b);
  }
  // Inverse rotation (the own block goes straight across).
  const Block& own = recv_blocks[size_t(me)];
  s->copy(send + send_blocks[size_t(me)].offset, recv + own.offset, b);
  for (int i = 1; i < p; ++i) {
    const Block& to = recv_blocks[size_t((me - i + p) % p)];
    s->copy(work + size_t(i) * b, recv + to.offset, b);
  }
  return s;
}

bool supports(const CollArgs& a, const CollContext&) { return a.uniform; }
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double n = double(a.bytes);
  return ceil_log2(c.size) * (m.alpha_us + n / 2 * m.beta_us_per_byte) + 2 * n * m.beta_us_per_byte;
}

}  // namespace

extern const Algorithm alltoall_bruck{"bruck", Collective::alltoall, supports, estimate, build};

}  // namespace weft::coll
