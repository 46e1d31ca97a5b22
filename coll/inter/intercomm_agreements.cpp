// The agreements of intercommunicators (agreements.h): each group agrees among itself (an
// allreduce on the local group), its leader swaps the result with the remote group's leader,
// and the leader shares what it received with its group (another allreduce).
#include <algorithm>
#include <cstdio>

#include "coll/agreements.h"
#include "coll/comm_state.h"
#include "pt2pt/tag.h"

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

// The context pairs free on every rank of the local group (ctx.comm), followed by `extra`.
Status local_masks(const CollContext& ctx, const ContextIds& ids, const std::vector<uint64_t>& extra,
                   std::vector<uint64_t>* out) {
  ContextIds agreed = ids.blocking();
  const Reduction band{ReduceOp::band, BasicType::u64, sizeof(uint64_t)};
  WEFT_TRY(allreduce(ctx, agreed.free_mask, agreed.free_mask, kMaskWords, band));
  out->assign(agreed.free_mask, agreed.free_mask + kMaskWords);
  out->insert(out->end(), extra.begin(), extra.end());
  return Status::ok;
}

// Takes the lowest pair free in both groups' masks (the first kMaskWords of mine and theirs).
Status take_common(ContextIds* ids, const std::vector<uint64_t>& mine, const std::vector<uint64_t>& theirs,
                   uint32_t* context) {
  ContextIds agreed;
  if (theirs.size() < kMaskWords) {
    set_error_detail("malformed intercommunicator agreement from the remote group");
    return Status::transport;
  }
  for (size_t w = 0; w < kMaskWords; ++w) agreed.free_mask[w] = mine[w] & theirs[w];
  if (ids->take_lowest(agreed, context)) return Status::ok;
  char detail[120];
  snprintf(detail, sizeof(detail), "no free context id among the members of both groups (%u communicators exist)",
           kBlockingPairs);
  set_error_detail(detail);
  return Status::transport;
}

std::vector<int> to_ranks(std::vector<uint64_t>::const_iterator first, std::vector<uint64_t>::const_iterator last) {
  std::vector<int> ranks;
  for (auto it = first; it != last; ++it) ranks.push_back(int(*it));
  return ranks;
}

// The swap of an existing intercommunicator ctx.comm, run among its local group.
Status swap_on(const CollContext& ctx, const ContextIds& ids, const std::vector<uint64_t>& extra,
               std::vector<uint64_t>* mine, std::vector<uint64_t>* theirs) {
  const CollContext local = context_on(ctx, *ctx.comm.local);
  WEFT_TRY(local_masks(local, ids, extra, mine));
  return swap_with_remote(local, link_of(ctx.comm), *mine, theirs);
}

}  // namespace

Status make_intercomm(const CollContext& ctx, ContextIds* ids, int local_leader, const Comm& peer, int remote_leader,
                      int tag, Comm* out) {
  const Comm& c = ctx.comm;
  std::vector<uint64_t> mine, theirs;
  WEFT_TRY(local_masks(ctx, *ids, std::vector<uint64_t>(c.world_ranks.begin(), c.world_ranks.end()), &mine));
  Link link{local_leader, -1, 0, 0};
  if (c.rank == local_leader) {
    link.remote_world_rank = peer.peer_world_rank(remote_leader);
    link.send_tag = tag::make(peer.pt2pt_context(), uint32_t(peer.rank), uint32_t(tag));
    link.recv_tag = tag::make(peer.pt2pt_context(), uint32_t(remote_leader), uint32_t(tag));
  }
  WEFT_TRY(swap_with_remote(ctx, link, mine, &theirs));
  uint32_t context = 0;
  WEFT_TRY(take_common(ids, mine, theirs, &context));
  *out = inter_view(context, c.world_ranks, to_ranks(theirs.begin() + kMaskWords, theirs.end()),
                    c.world_rank(c.rank));
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
  std::vector<uint64_t> mine, theirs;
  Status s = local_masks(ctx, *ids, std::vector<uint64_t>(local_world_ranks.begin(), local_world_ranks.end()), &mine);
  if (s == Status::ok) s = swap_with_remote(ctx, link, mine, &theirs);
  release(group);  // what the agreement's collectives made on the temporary view
  WEFT_TRY(s);
  uint32_t context = 0;
  WEFT_TRY(take_common(ids, mine, theirs, &context));
  *out = inter_view(context, local_world_ranks, to_ranks(theirs.begin() + kMaskWords, theirs.end()), me);
  return Status::ok;
}

Status merge_intercomm(const CollContext& ctx, ContextIds* ids, bool high, Comm* out) {
  const Comm& ic = ctx.comm;
  std::vector<uint64_t> mine, theirs;
  WEFT_TRY(swap_on(ctx, *ids, {uint64_t(high)}, &mine, &theirs));
  uint32_t context = 0;
  WEFT_TRY(take_common(ids, mine, theirs, &context));
  const bool remote_high = theirs.size() > kMaskWords && theirs[kMaskWords] != 0;
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
  std::vector<uint64_t> mine, theirs;
  WEFT_TRY(swap_on(ctx, *ids, {}, &mine, &theirs));
  uint32_t context = 0;
  WEFT_TRY(take_common(ids, mine, theirs, &context));
  *out = inter_view(context, ic.world_ranks, ic.remote_world_ranks, ic.world_rank(ic.rank));
  return Status::ok;
}

Status split_intercomm(const CollContext& ctx, ContextIds* ids, int color, int key, int undefined, Comm* out,
                       bool* member) {
  const Comm& ic = ctx.comm;
  // Every local rank's (color, key), shared among the local group, then swapped for the remote
  // group's with the masks.
  std::vector<int64_t> table(size_t(ic.size) * 2, 0);
  table[size_t(ic.rank) * 2] = color;
  table[size_t(ic.rank) * 2 + 1] = key;
  const Reduction sum{ReduceOp::sum, BasicType::i64, sizeof(int64_t)};
  WEFT_TRY(allreduce(context_on(ctx, *ic.local), table.data(), table.data(), table.size(), sum));
  std::vector<uint64_t> mine, theirs;
  WEFT_TRY(swap_on(ctx, *ids, std::vector<uint64_t>(table.begin(), table.end()), &mine, &theirs));
  if (theirs.size() != kMaskWords + ic.remote_world_ranks.size() * 2) {
    set_error_detail("malformed intercommunicator split table from the remote group");
    return Status::transport;
  }
  uint32_t context = 0;
  WEFT_TRY(take_common(ids, mine, theirs, &context));
  std::vector<int> local, remote;
  if (color != undefined) {
    local = split_members(ic, table, color);
    Comm other = member_view(0, ic.remote_world_ranks, -1);
    remote = split_members(other, std::vector<int64_t>(theirs.begin() + kMaskWords, theirs.end()), color);
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
