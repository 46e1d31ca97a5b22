// The agreements of intercommunicators (agreements.h): each group agrees among itself (an
// allreduce on the local group), its leader swaps the result with the remote group's leader,
// and the leader shares what it received with its group (another allreduce). Threads making
// communicators at the same time take turns offering their free pairs, as in agreements.cpp.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "coll/agreements.h"
#include "coll/comm_state.h"
#include "pt2pt/tag.h"
#include "runtime/entry_lock.h"

namespace weft::coll {

namespace {

constexpr size_t kMaskWords = kContextPairs / 64;
const Reduction kSum{ReduceOp::sum, BasicType::u64, sizeof(uint64_t)};

// How the two leaders meet: this group's leader (a rank of the local group), the job rank of
// the other leader, and the tags of the leaders' messages each way.
struct Link {
  int leader;
  int remote_world_rank;
  uint64_t send_tag, recv_tag;
};

// The link of an existing intercommunicator: the leaders are both groups' rank 0; their
// messages go on its collective context, under its next collective tag.
Link link_of(const Comm& ic) {
  const uint32_t seq = ic.coll_seq++ & uint32_t(tag::kTagMask);
  return {0, ic.remote_world_ranks[0], tag::make(ic.coll_context(), uint32_t(ic.rank), seq),
          tag::make(ic.coll_context(), 0, seq)};
}

Status exchange(Transport& t, const Link& link, const void* mine, size_t my_bytes, void* theirs,
                size_t their_bytes) {
  Request r;
  r.kind = RequestKind::send;
  WEFT_TRY(t.isend(mine, my_bytes, link.remote_world_rank, link.send_tag, SendMode::standard, &r));
  MatchInfo info;
  Status s = t.recv(theirs, their_bytes, link.remote_world_rank, link.recv_tag, ~0ull, &info);
  t.wait(&r);
  return s != Status::ok ? s : r.status.error;
}

// Swaps `mine` (the same on every rank of the local group, ctx.comm) for the remote group's:
// the leaders swap them over link, and the leader shares what it received with its group.
Status swap_with_remote(const CollContext& ctx, const Link& link, const std::vector<uint64_t>& mine,
                        std::vector<uint64_t>* theirs) {
  const bool leader = ctx.comm.rank == link.leader;
  uint64_t my_count = mine.size(), count = 0;
  if (leader) WEFT_TRY(exchange(*ctx.transport, link, &my_count, sizeof my_count, &count, sizeof count));
  WEFT_TRY(allreduce(ctx, &count, &count, 1, kSum));
  theirs->assign(size_t(count), 0);
  if (leader)
    WEFT_TRY(exchange(*ctx.transport, link, mine.data(), mine.size() * sizeof(uint64_t), theirs->data(),
                      theirs->size() * sizeof(uint64_t)));
  if (count == 0) return Status::ok;
  return allreduce(ctx, theirs->data(), theirs->data(), theirs->size(), kSum);
}

// The turn order of an agreement between two groups (OfferTurn): the same on every rank of
// both. Each group names its side (its local communicator's context id, or the
// intercommunicator's own where one exists, the same in both groups).
uint64_t turn_key(uint64_t mine, uint64_t theirs) {
  if (mine == theirs) return mine << 12;
  return uint64_t(1) << 40 | std::min(mine, theirs) << 13 | std::max(mine, theirs);
}

// The agreement between the local group (ctx.comm) and the remote group: swaps `extra` (the
// same on every rank of the local group) for the remote group's and takes the lowest context
// pair free on every rank of both. Each round's words are the local group's free pairs (and-ed),
// whether all of its ranks offered them, then `extra` (first round only). As in agree_context,
// threads offer one at a time (OfferTurn), and with other threads calling MPI the first round
// only gathers both groups; a round in which a rank sat out finds no pair and all try again.
// `side` names this group for the turn order (turn_key); next_link gives each round's link.
template <class NextLink>
Status agree_across(const CollContext& ctx, ContextIds* ids, uint64_t side, NextLink next_link,
                    const std::vector<uint64_t>& extra, std::vector<uint64_t>* their_extra, uint32_t* context) {
  const Reduction band{ReduceOp::band, BasicType::u64, sizeof(uint64_t)};
  std::optional<OfferTurn> turn;
  std::vector<uint64_t> words, theirs;
  for (int round = 0;; ++round) {
    // Unthreaded, the first round offers (no other agreement can be under way here).
    const bool offering = !g_entry_locking || (turn && turn->take());
    words.assign(kMaskWords + 1, 0);
    if (offering) {
      const ContextIds offer = ids->blocking();
      std::copy(offer.free_mask, offer.free_mask + kMaskWords, words.begin());
      words[kMaskWords] = 1;
    }
    if (round == 0) {
      words.push_back(side);
      words.insert(words.end(), extra.begin(), extra.end());
    }
    Status s = allreduce(ctx, words.data(), words.data(), words.size(), band);
    if (s == Status::ok) s = swap_with_remote(ctx, next_link(), words, &theirs);
    if (turn) turn->give_back();
    WEFT_TRY(s);
    if (theirs.size() < kMaskWords + 1 + (round == 0 ? 1 : 0)) {
      set_error_detail("malformed intercommunicator agreement from the remote group");
      return Status::transport;
    }
    if (round == 0) {
      their_extra->assign(theirs.begin() + kMaskWords + 2, theirs.end());
      turn.emplace(turn_key(side, theirs[kMaskWords + 1]));
    }
    if (words[kMaskWords] == 0 || theirs[kMaskWords] == 0) continue;  // someone sat this round out
    ContextIds agreed;
    for (size_t w = 0; w < kMaskWords; ++w) agreed.free_mask[w] = words[w] & theirs[w];
    if (ids->take_lowest(agreed, context)) return Status::ok;
    char detail[120];
    snprintf(detail, sizeof(detail), "no free context id among the members of both groups (%u communicators exist)",
             kBlockingPairs);
    set_error_detail(detail);
    return Status::transport;
  }
}

std::vector<int> to_ranks(std::vector<uint64_t>::const_iterator first, std::vector<uint64_t>::const_iterator last) {
  std::vector<int> ranks;
  for (auto it = first; it != last; ++it) ranks.push_back(int(*it));
  return ranks;
}

// The agreement of an existing intercommunicator ctx.comm, run among its local group; its
// leaders' messages go on its collective context (link_of).
Status agree_on(const CollContext& ctx, ContextIds* ids, const std::vector<uint64_t>& extra,
                std::vector<uint64_t>* their_extra, uint32_t* context) {
  const Comm& ic = ctx.comm;
  return agree_across(context_on(ctx, *ic.local), ids, ic.context_id, [&] { return link_of(ic); }, extra,
                      their_extra, context);
}

}  // namespace

Status make_intercomm(const CollContext& ctx, ContextIds* ids, int local_leader, const Comm& peer, int remote_leader,
                      int tag, Comm* out) {
  const Comm& c = ctx.comm;
  Link link{local_leader, -1, 0, 0};
  if (c.rank == local_leader) {
    link.remote_world_rank = peer.peer_world_rank(remote_leader);
    link.send_tag = tag::make(peer.pt2pt_context(), uint32_t(peer.rank), uint32_t(tag));
    link.recv_tag = tag::make(peer.pt2pt_context(), uint32_t(remote_leader), uint32_t(tag));
  }
  std::vector<uint64_t> theirs;
  uint32_t context = 0;
  WEFT_TRY(agree_across(ctx, ids, c.context_id, [&] { return link; },
                        std::vector<uint64_t>(c.world_ranks.begin(), c.world_ranks.end()), &theirs, &context));
  *out = inter_view(context, c.world_ranks, to_ranks(theirs.begin(), theirs.end()), c.world_rank(c.rank));
  return Status::ok;
}

Status make_intercomm_from_groups(const CollContext& world, ContextIds* ids, const std::vector<int>& local_world_ranks,
                                  int local_leader, int remote_leader_world_rank, int tag, Comm* out) {
  const int me = world.comm.world_rank(world.comm.rank);
  Comm group = member_view(kGroupCreationContext, local_world_ranks, me);
  group.errhandler = world.comm.errhandler;
  const CollContext ctx = context_on(world, group);
  Link link{local_leader, -1, 0, 0};
  if (group.rank == local_leader) {
    link.remote_world_rank = remote_leader_world_rank;
    link.send_tag = tag::make(group.pt2pt_context(), uint32_t(me), uint32_t(tag));
    link.recv_tag = tag::make(group.pt2pt_context(), uint32_t(remote_leader_world_rank), uint32_t(tag));
  }
  std::vector<uint64_t> theirs;
  uint32_t context = 0;
  Status s = agree_across(ctx, ids, kGroupCreationContext, [&] { return link; },
                          std::vector<uint64_t>(local_world_ranks.begin(), local_world_ranks.end()), &theirs, &context);
  release(group);  // what the agreement's collectives made on the temporary view
  WEFT_TRY(s);
  *out = inter_view(context, local_world_ranks, to_ranks(theirs.begin(), theirs.end()), me);
  return Status::ok;
}

Status merge_intercomm(const CollContext& ctx, ContextIds* ids, bool high, Comm* out) {
  const Comm& ic = ctx.comm;
  std::vector<uint64_t> theirs;
  uint32_t context = 0;
  WEFT_TRY(agree_on(ctx, ids, {uint64_t(high)}, &theirs, &context));
  const bool remote_high = !theirs.empty() && theirs[0] != 0;
  const std::vector<int>& a = ic.world_ranks;
  const std::vector<int>& b = ic.remote_world_ranks;
  std::vector<int> merged = merged_first(a, high, b, remote_high) ? a : b;
  merged.insert(merged.end(), merged_first(a, high, b, remote_high) ? b.begin() : a.begin(),
                merged_first(a, high, b, remote_high) ? b.end() : a.end());
  *out = view_with_nodes(ctx, context, merged);
  return Status::ok;
}

Status dup_intercomm(const CollContext& ctx, ContextIds* ids, Comm* out) {
  const Comm& ic = ctx.comm;
  std::vector<uint64_t> theirs;
  uint32_t context = 0;
  WEFT_TRY(agree_on(ctx, ids, {}, &theirs, &context));
  *out = inter_view(context, ic.world_ranks, ic.remote_world_ranks, ic.world_rank(ic.rank));
  return Status::ok;
}

Status split_intercomm(const CollContext& ctx, ContextIds* ids, int color, int key, int undefined, Comm* out,
                       bool* member) {
  const Comm& ic = ctx.comm;
  // Every local rank's (color, key), shared among the local group, then swapped for the remote
  // group's in the agreement.
  std::vector<int64_t> table(size_t(ic.size) * 2, 0);
  table[size_t(ic.rank) * 2] = color;
  table[size_t(ic.rank) * 2 + 1] = key;
  const Reduction sum{ReduceOp::sum, BasicType::i64, sizeof(int64_t)};
  WEFT_TRY(allreduce(context_on(ctx, *ic.local), table.data(), table.data(), table.size(), sum));
  std::vector<uint64_t> theirs;
  uint32_t context = 0;
  WEFT_TRY(agree_on(ctx, ids, std::vector<uint64_t>(table.begin(), table.end()), &theirs, &context));
  if (theirs.size() != ic.remote_world_ranks.size() * 2) {
    ids->set(context / 2, true);
    set_error_detail("malformed intercommunicator split table from the remote group");
    return Status::transport;
  }
  std::vector<int> local, remote;
  if (color != undefined) {
    local = split_members(ic, table, color);
    Comm other = member_view(0, ic.remote_world_ranks, -1);
    remote = split_members(other, std::vector<int64_t>(theirs.begin(), theirs.end()), color);
  }
  *member = !local.empty() && !remote.empty();
  if (!*member) {
    ids->set(context / 2, true);  // not a member: the pair stays free here
    return Status::ok;
  }
  *out = inter_view(context, local, remote, ic.world_rank(ic.rank));
  return Status::ok;
}

}  // namespace weft::coll
