// One collective algorithm: its name, what it supports, its cost estimate and its builder.
// Every algorithm is listed in registry.cpp; select.cpp takes the argmin of the estimates.
// Each sees the call's context (coll.h): the communicator, coll's settings and the
// communicator's state.
#pragma once
#include <span>
#include <string_view>

#include "schedule.h"

namespace weft::coll {

struct Algorithm {
  const char* name;
  Collective coll;
  // Whether the algorithm handles this call (e.g. commutative operations only).
  bool (*supports)(const CollArgs& a, const CollContext& c);
  // Predicted time of the call in microseconds; pure, so every rank predicts alike.
  double (*estimate_us)(const CollArgs& a, const CollContext& c, const CostModel& m);
  std::shared_ptr<Schedule> (*build)(const CollArgs& a, const CollContext& c);
};

std::span<const Algorithm* const> algorithms();
// Collective calls run by each algorithm (indexed as algorithms()) since the process started:
// the MPI_T performance variables. Counted when a planned schedule starts.
uint64_t algorithm_calls(size_t index);
void count_algorithm_call(int index);
// The algorithm the cost model alone picks for a call on c (no WEFT_COLL_TUNE rules): among the
// host algorithms, or among coll/gpu's for a call on device memory (`device`).
const Algorithm* lowest_estimate(const CollArgs& a, const CollContext& c, const CostModel& m, bool device = false);
const Algorithm* find_algorithm(Collective coll, std::string_view name);

// Helpers for estimates and predicates.
int ceil_log2(int p);
inline bool is_power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }
// Rounds of recursive doubling among p ranks: two more where p is not a power of two.
inline int recursive_doubling_rounds(int p) { return ceil_log2(p) + (is_power_of_two(p) ? 0 : 2); }
inline bool always(const CollArgs&, const CollContext&) { return true; }

// Builders with explicit arguments (unit tests call them directly).
std::shared_ptr<Schedule> build_barrier_dissemination(const Comm& c);
std::shared_ptr<Schedule> build_barrier_tree(const Comm& c);
std::shared_ptr<Schedule> build_bcast_binomial(const Comm& c, void* buf, size_t bytes, int root);
std::shared_ptr<Schedule> build_bcast_scatter_allgather(const Comm& c, void* buf, size_t bytes, int root);
// segment: bytes per pipeline step (the last may be shorter); bcast_chain_segment picks it.
std::shared_ptr<Schedule> build_bcast_chain(const Comm& c, void* buf, size_t bytes, int root,
                                            size_t segment);
size_t bcast_chain_segment(size_t bytes, int p);
// send == recv means in place. recv is significant at the root only.
std::shared_ptr<Schedule> build_reduce_binomial(const Comm& c, const void* send, void* recv,
                                                size_t count, const Reduction& red, int root);
// Commutative operations only; count >= the largest power of two <= p.
std::shared_ptr<Schedule> build_reduce_rabenseifner(const Comm& c, const void* send, void* recv,
                                                    size_t count, const Reduction& red, int root);
std::shared_ptr<Schedule> build_allreduce_recursive_doubling(const Comm& c, void* buf, size_t count,
                                                             const Reduction& red);
std::shared_ptr<Schedule> build_allreduce_ring(const Comm& c, void* buf, size_t count,
                                               const Reduction& red);
// The ring allreduce's halves: after the reduce-scatter, rank r holds the full reduction of
// segment ring_owned_segment(r, p), elements [ring_segment_start(k), ring_segment_start(k+1));
// the allgather then circulates every segment from its owner.
std::shared_ptr<Schedule> build_ring_reduce_scatter_in_place(const Comm& c, void* buf, size_t count,
                                                             const Reduction& red);
std::shared_ptr<Schedule> build_ring_allgather_in_place(const Comm& c, void* buf, size_t count,
                                                        size_t elem_size);
size_t ring_segment_start(size_t count, int p, int k);
inline int ring_owned_segment(int rank, int p) { return (rank + 1) % p; }
// Commutative operations only; count >= the largest power of two <= p.
std::shared_ptr<Schedule> build_allreduce_rabenseifner(const Comm& c, void* buf, size_t count,
                                                       const Reduction& red);
std::shared_ptr<Schedule> build_allreduce_reduce_bcast(const Comm& c, void* buf, size_t count,
                                                       const Reduction& red);
// blocks[r]: where rank r's block lies in the receive (or send) buffer.
std::shared_ptr<Schedule> build_allgather_ring(const Comm& c, const void* mine, char* recv,
                                               const std::vector<Block>& blocks);
std::shared_ptr<Schedule> build_gather_linear(const Comm& c, const void* mine, size_t mine_bytes,
                                              char* recv, const std::vector<Block>& blocks, int root);
std::shared_ptr<Schedule> build_scatter_linear(const Comm& c, const char* send,
                                               const std::vector<Block>& blocks, void* mine,
                                               size_t mine_bytes, int root);
std::shared_ptr<Schedule> build_alltoall_pairwise(const Comm& c, const char* send,
                                                  const std::vector<Block>& send_blocks, char* recv,
                                                  const std::vector<Block>& recv_blocks);
// counts[r]: elements of the result that rank r receives.
std::shared_ptr<Schedule> build_reduce_scatter_ring(const Comm& c, const void* send, void* recv,
                                                    const std::vector<size_t>& counts,
                                                    const Reduction& red);
std::shared_ptr<Schedule> build_scan_recursive_doubling(const Comm& c, const void* send, void* recv,
                                                        size_t count, const Reduction& red,
                                                        bool exclusive);

// Algorithm::build for the builders above: each passes a call's arguments the way one
// collective's builders take them.
template <auto builder>  // (c, send, recv, count, red, root)
std::shared_ptr<Schedule> reduce_call(const CollArgs& a, const CollContext& ctx) {
  return builder(ctx.comm, a.send, a.recv, a.count, a.red, a.root);
}
template <auto builder>  // (c, buf, count, red): in place in recv, where coll::plan put the input
std::shared_ptr<Schedule> allreduce_call(const CollArgs& a, const CollContext& ctx) {
  return builder(ctx.comm, a.recv, a.count, a.red);
}
template <auto builder>  // (c, send, recv, counts, red)
std::shared_ptr<Schedule> reduce_scatter_call(const CollArgs& a, const CollContext& ctx) {
  return builder(ctx.comm, a.send, a.recv, a.counts, a.red);
}
template <auto builder>  // (c, mine, recv, blocks)
std::shared_ptr<Schedule> allgather_call(const CollArgs& a, const CollContext& ctx) {
  return builder(ctx.comm, a.send, static_cast<char*>(a.recv), a.recv_blocks);
}

}  // namespace weft::coll
