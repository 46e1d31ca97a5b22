// The agreements of a new communicator (agreements.h), each an allreduce on the parent.
#include "agreements.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "comm_state.h"
#include "pt2pt/process_setup.h"
#include "runtime/entry_lock.h"

namespace weft::coll {

namespace {

// Whose turn it is to offer this process's free pairs (see OfferTurn): the context ids of the
// parents of the blocking agreements under way, and whether one of them is offering.
struct Turns {
  std::multiset<uint64_t> waiting;
  bool offering = false;
};
Turns& turns() {
  static Turns t;
  return t;
}

// The lowest context pair free on every rank of ctx.comm, taken from *ids: its first id. A
// round in which some member did not offer its pairs (another of its threads was offering)
// finds none, and every member tries again; the last word of the reduction says whether every
// member offered.
Status agree_context(const CollContext& ctx, ContextIds* ids, uint32_t* context) {
  constexpr size_t kWords = kContextPairs / 64;
  const Reduction band{ReduceOp::band, BasicType::u64, sizeof(uint64_t)};
  // A communicator of one (MPI_COMM_SELF's duplicates) agrees with nobody: no turn to wait for,
  // so it never waits behind another thread's agreement that waits on a peer.
  if (!ctx.comm.inter && ctx.comm.size == 1) {
    if (ids->take_lowest(ids->blocking(), context)) return Status::ok;
    set_error_detail("no free context id (" + std::to_string(kBlockingPairs) + " communicators exist)");
    return Status::transport;
  }
  // Agreements on the group-creation channel share its context: their channel (the top bits of
  // their collective tags, make_comm_among) ranks them, the same way on every member.
  const uint64_t channel = ctx.comm.context_id == kGroupCreationContext ? (ctx.comm.coll_seq >> 12) & 0xfff : 0;
  OfferTurn turn(uint64_t(ctx.comm.context_id) << 12 | channel);
  std::vector<uint64_t> words(kWords + 1);
  // With other threads calling MPI, the first round only gathers the members: a thread must not
  // hold the turn through a round that waits for a member still busy elsewhere (another of that
  // member's threads may need this process's turn before it can come), and once every member is
  // here, each round completes.
  bool all_here = !g_entry_locking;
  for (;;) {
    // A channel has 4096 tags: rounds past them (threads sitting each other's rounds out) reuse
    // the channel's first tags, long finished, instead of running into the next channel's.
    if (channel && (ctx.comm.coll_seq >> 12) != channel) ctx.comm.coll_seq = uint32_t(channel << 12);
    const bool offering = all_here && turn.take();
    std::fill(words.begin(), words.end(), 0);
    if (offering) {
      const ContextIds offer = ids->blocking();
      std::copy(offer.free_mask, offer.free_mask + kWords, words.begin());
      words[kWords] = 1;
    }
    Status s = allreduce(ctx, words.data(), words.data(), words.size(), band);
    if (offering) turn.give_back();
    if (s != Status::ok) return s;
    all_here = true;
    if (words[kWords] == 0) continue;  // someone sat this round out
    ContextIds agreed{};
    std::copy(words.begin(), words.begin() + kWords, agreed.free_mask);
    if (ids->take_lowest(agreed, context)) return Status::ok;
    char detail[120];
    snprintf(detail, sizeof(detail), "no free context id among the members (%u communicators exist)", kBlockingPairs);
    set_error_detail(detail);
    return Status::transport;
  }
}

}  // namespace

OfferTurn::OfferTurn(uint64_t key) : parent_(key) { turns().waiting.insert(parent_); }

OfferTurn::~OfferTurn() {
  give_back();
  turns().waiting.erase(turns().waiting.find(parent_));
}

bool OfferTurn::take() {
  Turns& t = turns();
  if (t.offering || *t.waiting.begin() != parent_) return false;
  t.offering = offering_ = true;
  return true;
}

void OfferTurn::give_back() {
  if (offering_) turns().offering = offering_ = false;
}

Comm view_with_nodes(const CollContext& ctx, uint32_t context, const std::vector<int>& world_ranks) {
  Comm c = member_view(context, world_ranks, ctx.comm.world_rank(ctx.comm.rank));
  Bootstrap& boot = ctx.transport->boot();
  c.single_node = std::all_of(world_ranks.begin(), world_ranks.end(), [&](int w) { return boot.is_local(w); });
  c.nodes = node_ids(boot, world_ranks);
  return c;
}

Status make_comm(const CollContext& ctx, ContextIds* ids, const std::vector<int>& world_ranks, Comm* out,
                 bool* member) {
  uint32_t context = 0;
  Status s = agree_context(ctx, ids, &context);
  if (s != Status::ok) return s;
  *member = std::find(world_ranks.begin(), world_ranks.end(), ctx.comm.world_rank(ctx.comm.rank)) !=
            world_ranks.end();
  if (!*member) {
    ids->set(context / 2, true);  // not a member: the pair stays free here
    return Status::ok;
  }
  *out = view_with_nodes(ctx, context, world_ranks);
  return Status::ok;
}

uint32_t creation_channel(const void* tag, size_t bytes) {
  uint32_t h = 2166136261u;  // FNV-1a: the same on every rank
  for (size_t i = 0; i < bytes; ++i) h = (h ^ static_cast<const unsigned char*>(tag)[i]) * 16777619u;
  return 1 + h % 4095;
}

Status make_comm_among(const CollContext& ctx, ContextIds* ids, const std::vector<int>& world_ranks, Comm* out,
                       uint32_t channel) {
  Comm temp = member_view(kGroupCreationContext, world_ranks, ctx.comm.world_rank(ctx.comm.rank));
  temp.errhandler = ctx.comm.errhandler;
  temp.coll_seq = (channel & 0xfff) << 12;  // collective tags are 24 bits: 4096 channels of 4096
  uint32_t context = 0;
  Status s = agree_context(context_on(ctx, temp), ids, &context);
  release(temp);  // what the agreement's collective made on the temporary communicator
  if (s != Status::ok) return s;
  *out = view_with_nodes(ctx, context, world_ranks);
  return Status::ok;
}

Status split_comm(const CollContext& ctx, ContextIds* ids, int color, int key, int undefined, Comm* out,
                  bool* member) {
  const Comm& c = ctx.comm;
  std::vector<int64_t> table(size_t(c.size) * 2, 0);  // (color, key) of every rank
  table[size_t(c.rank) * 2] = color;
  table[size_t(c.rank) * 2 + 1] = key;
  const Reduction sum{ReduceOp::sum, BasicType::i64, sizeof(int64_t)};
  Status s = allreduce(ctx, table.data(), table.data(), table.size(), sum);
  if (s != Status::ok) return s;
  std::vector<int> members;
  if (color != undefined) members = split_members(c, table, color);
  return make_comm(ctx, ids, members, out, member);
}

Status share_edges(const CollContext& ctx, const std::vector<int64_t>& mine, DistGraph* g) {
  const Comm& c = ctx.comm;
  const Reduction sum{ReduceOp::sum, BasicType::i64, sizeof(int64_t)};
  std::vector<int64_t> counts(size_t(c.size), 0);
  counts[size_t(c.rank)] = int64_t(mine.size());
  Status s = allreduce(ctx, counts.data(), counts.data(), counts.size(), sum);
  if (s != Status::ok) return s;
  std::vector<int64_t> all(size_t(entries_before(counts, c.size)), 0);
  std::copy(mine.begin(), mine.end(), all.begin() + entries_before(counts, c.rank));
  if (!all.empty() && (s = allreduce(ctx, all.data(), all.data(), all.size(), sum)) != Status::ok) return s;
  keep_edges(all, c.rank, g);
  return Status::ok;
}

}  // namespace weft::coll
