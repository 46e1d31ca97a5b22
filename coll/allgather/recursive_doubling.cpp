// Recursive-doubling allgather(v): log2 p rounds for a power-of-two p. In round k a rank
// exchanges with rank ^ 2^k the 2^k blocks its half of the group holds so far, so the data
// held doubles each round: fewer messages than the ring for small blocks. Blocks may differ in
// size; blocks that lie back to back in the buffer travel as one message.
#include "coll/allgather/own_block.h"

namespace weft::coll {

namespace {

// Sends (or receives) the blocks of ranks [lo, hi) of `buf`, one message per run of blocks that
// are adjacent in the buffer. Empty blocks are skipped, so both sides agree on the messages.
void blocks_message(Schedule& s, bool send, int peer, char* buf, const std::vector<Block>& blocks,
                    int lo, int hi) {
  size_t start = 0, end = 0;
  bool open = false;
  auto flush = [&] {
    if (!open) return;
    if (send)
      s.send(peer, buf + start, end - start);
    else
      s.recv(peer, buf + start, end - start);
    open = false;
  };
  for (int r = lo; r < hi; ++r) {
    const Block& b = blocks[size_t(r)];
    if (b.bytes == 0) continue;
    if (open && b.offset == end) {
      end += b.bytes;
      continue;
    }
    flush();
    start = b.offset;
    end = b.offset + b.bytes;
    open = true;
  }
  flush();
}

std::shared_ptr<Schedule> build_allgather_recursive_doubling(const Comm& c, const void* mine,
                                                             char* recv,
                                                             const std::vector<Block>& blocks) {
  auto s = std::make_shared<Schedule>("allgather:recursive_doubling");
  const int p = c.size, me = c.rank;
  place_own_block(*s, c, mine, recv, blocks);
  for (int mask = 1; mask < p; mask <<= 1) {
    const int partner = me ^ mask;
    const int held = me & ~(mask - 1), incoming = partner & ~(mask - 1);
    s->new_round();
    blocks_message(*s, true, partner, recv, blocks, held, held + mask);
    blocks_message(*s, false, partner, recv, blocks, incoming, incoming + mask);
  }
  return s;
}

bool supports(const CollArgs&, const CollContext& ctx) { return is_power_of_two(ctx.comm.size); }
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size;
  return ceil_log2(c.size) * m.alpha_us + (p - 1) / p * double(a.bytes) * m.beta_us_per_byte;
}

}  // namespace

extern const Algorithm allgather_recursive_doubling{"recursive_doubling", Collective::allgather, supports,
                                                    estimate, allgather_call<build_allgather_recursive_doubling>};

}  // namespace weft::coll
