// Partitioned point-to-point: the requests, MPI_Pready's marks and MPI_Parrived's answer.
#include "pt2pt/partitioned.h"

#include <algorithm>
#include <string>

#include "pt2pt/tag.h"

namespace weft {

namespace {

constexpr uint32_t kInternalBit = 1u << 23;  // tag bit reserved for internal protocols

// The tag of the k-th pair with this user tag: below the reserved bit, spread over its 23 bits.
uint32_t pair_tag(int user_tag, uint32_t k) {
  return kInternalBit | ((uint32_t(user_tag) + k * 0x9E3779B1u) & (kInternalBit - 1));
}

Status refuse(const std::string& msg) {
  set_error_detail(msg);
  return Status::invalid_arg;
}

Status check_partition(PartitionState* p, const Request& r, int partition, bool receive) {
  if (!p || p->receive != receive)
    return refuse(std::string("not a partitioned ") + (receive ? "receive" : "send") + " request");
  if (!r.active && !receive) return refuse("the partitioned request is not active (MPI_Start it first)");
  if (partition < 0 || partition >= p->partitions)
    return refuse("invalid partition " + std::to_string(partition) + " (the request has " +
                  std::to_string(p->partitions) + ")");
  return Status::ok;
}

}  // namespace

Request* partitioned_request(Transport& t, RequestPool& pool, PartitionedChannels& channels, Message m, void* buf,
                             int partitions, int peer_rank, int user_tag, bool receive,
                             const RequestStatus& null_status, int owner) {
  auto p = std::make_shared<PartitionState>();
  p->partitions = partitions;
  p->receive = receive;
  p->user_tag = user_tag;
  p->ready.assign(size_t(partitions), 0);
  if (m.peer != kNoPeer) {
    const uint32_t k = channels.next(m.comm->context_id, m.peer, user_tag, receive);
    const int source = receive ? peer_rank : m.comm->rank;
    m.tag = tag::make(m.comm->coll_context(), uint32_t(source), pair_tag(user_tag, k));
    m.mask = ~0ull;
  }
  Request* r = persistent_request(t, pool, m, buf, receive ? PersistentKind::recv : PersistentKind::send, BsendScopes{},
                                  null_status, owner);
  p->post = std::move(r->start);
  channels.track(*r, p);
  r->start = [p](Request& q) {
    PartitionState* ps = p.get();
    std::fill(ps->ready.begin(), ps->ready.end(), 0);
    ps->ready_count = 0;
    q.complete = false;
    if (!ps->receive) return Status::ok;  // posted by the last MPI_Pready
    const Status s = ps->post(q);
    // The status reports the user's tag, not the pair's.
    auto unpack = std::move(q.finish);
    const int user = ps->user_tag;
    q.finish = [unpack, user](Request& done) {
      if (unpack) unpack(done);
      if (done.status.source >= 0) done.status.tag = user;
    };
    return s;
  };
  return r;
}

Status mark_ready(const PartitionedChannels& channels, Request& r, int partition) {
  PartitionState* ps = channels.state_of(r);
  WEFT_TRY(check_partition(ps, r, partition, false));
  PartitionState& p = *ps;
  if (p.ready[size_t(partition)]) return refuse("partition " + std::to_string(partition) + " is already ready");
  p.ready[size_t(partition)] = 1;
  if (++p.ready_count < p.partitions) return Status::ok;
  return p.post(r);
}

Status partition_arrived(const PartitionedChannels& channels, Transport& t, Request& r, int partition,
                         bool* arrived) {
  WEFT_TRY(check_partition(channels.state_of(r), r, partition, true));
  if (r.active && !r.complete) t.progress();
  *arrived = !r.active || r.complete;
  // A receive through a staging copy (a non-contiguous type) is unpacked now, not at the wait:
  // the program may read every partition Parrived reports before it waits.
  if (*arrived && r.active) run_finish(&r);
  return Status::ok;
}

}  // namespace weft
