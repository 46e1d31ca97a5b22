// Partitioned point-to-point (MPI_Psend_init, MPI_Precv_init): a persistent request whose
// message is marked ready partition by partition. The send side posts the whole message once
// every partition of the current start is ready; the receive side posts one receive of the
// whole buffer at each start, so a partition has arrived once that receive completes. Sender
// and receiver may split the same data into different numbers of partitions.
//
// Matching follows the order of the init calls: the k-th MPI_Psend_init to (peer, tag) on a
// communicator meets the k-th MPI_Precv_init from the sender with that tag, whatever order the
// requests are started in. Each pair travels on the communicator's collective context, under
// the tag bit reserved for internal protocols (bit 23) and a tag drawn from (user tag, k), so
// user receives (MPI_ANY_TAG included) never see it.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "pt2pt/p2p.h"

namespace weft {

struct PartitionState {
  int partitions = 0;
  bool receive = false;
  int user_tag = 0;
  std::vector<uint8_t> ready;  // send: the partitions marked ready since the last start
  int ready_count = 0;
  std::function<Status(Request&)> post;  // the message of the whole buffer, sent or received
};

// The partitioned requests of a process: the init calls made so far per (context, peer, tag,
// direction), which give the k of the next pair, and the partitions of each request by pool
// index. A request holds its state in its start function; the table keeps a weak reference,
// so a request released to the pool (and its slot reused) is no partitioned one any more.
class PartitionedChannels {
 public:
  uint32_t next(uint32_t context, int peer, int tag, bool receive) {
    return next_[std::make_tuple(context, peer, tag, receive)]++;
  }
  void track(const Request& r, const std::shared_ptr<PartitionState>& p) { states_[r.index] = p; }
  // r's partitions, or null when r is no partitioned request.
  PartitionState* state_of(const Request& r) const {
    auto it = states_.find(r.index);
    return it == states_.end() ? nullptr : it->second.lock().get();
  }

 private:
  std::map<std::tuple<uint32_t, int, int, bool>, uint32_t> next_;
  std::unordered_map<uint32_t, std::weak_ptr<PartitionState>> states_;
};

// A partitioned request from pool for `partitions` partitions of m (m describes the whole
// buffer: partitions times the count of one; its comm and peer set), owned by the communicator
// handle `owner`, inactive until started. peer_rank: the peer's rank in m.comm; user_tag: the
// tag of the call, which the receive's status reports; null_status: what a request with
// MPI_PROC_NULL as its peer completes with.
Request* partitioned_request(Transport& t, RequestPool& pool, PartitionedChannels& channels, Message m, void* buf,
                             int partitions, int peer_rank, int user_tag, bool receive,
                             const RequestStatus& null_status, int owner);
// MPI_Pready: marks a partition of an active send request ready; the last one posts the send.
// Status::invalid_arg (detail set) for a partition out of range or marked twice, or a request
// that is no active partitioned send.
Status mark_ready(const PartitionedChannels& channels, Request& r, int partition);
// MPI_Parrived: whether the partition of a receive request has arrived (one progress pass when
// it has not yet; an inactive request's have). Status::invalid_arg (detail set) for a
// partition out of range or a request that is no partitioned receive.
Status partition_arrived(const PartitionedChannels& channels, Transport& t, Request& r, int partition,
                         bool* arrived);

}  // namespace weft
