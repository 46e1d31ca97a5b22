// Context id pairs, member views and split order.
#include "pt2pt/communicators.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <utility>

#include "runtime/log.h"
#include "topo/topology.h"

namespace weft {

uint64_t next_comm_serial() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

void ContextIds::reset(uint32_t reserved_pairs) {
  for (auto& w : free_mask) w = ~0ull;
  for (auto& w : reserved) w = 0;
  for (uint32_t p = 0; p < reserved_pairs; ++p) set(p, false);
}

void ContextIds::set(uint32_t pair, bool free) {
  if (free) free_mask[pair / 64] |= 1ull << (pair % 64);
  else free_mask[pair / 64] &= ~(1ull << (pair % 64));
}

bool ContextIds::take_lowest(const ContextIds& agreed, uint32_t* context) {
  for (uint32_t w = 0; w < kContextPairs / 64; ++w) {
    if (agreed.free_mask[w] == 0) continue;
    const uint32_t pair = w * 64 + uint32_t(__builtin_ctzll(agreed.free_mask[w]));
    set(pair, false);
    *context = pair * 2;
    return true;
  }
  return false;
}

ContextIds ContextIds::blocking() const {
  ContextIds b = *this;
  for (uint32_t w = kBlockingPairs / 64; w < kContextPairs / 64; ++w) b.free_mask[w] = 0;
  return b;
}

uint64_t ContextIds::offer(uint32_t slice) {
  const uint64_t offered = free_mask[kBlockingPairs / 64 + slice] & ~reserved[slice];
  reserved[slice] |= offered;
  return offered;
}

void ContextIds::release(uint32_t slice, uint64_t offered) { reserved[slice] &= ~offered; }

uint32_t ContextIds::take_in_slice(uint32_t slice, uint64_t agreed) {
  const uint32_t pair = kBlockingPairs + slice * 64 + uint32_t(__builtin_ctzll(agreed));
  set(pair, false);
  return pair * 2;
}

Comm member_view(uint32_t context, const std::vector<int>& world_ranks, int my_world_rank) {
  Comm c;
  c.context_id = context;
  c.world_ranks = world_ranks;
  c.size = int(world_ranks.size());
  c.rank = int(std::find(world_ranks.begin(), world_ranks.end(), my_world_rank) - world_ranks.begin());
  return c;
}

Comm inter_view(uint32_t context, const std::vector<int>& local_world_ranks,
                const std::vector<int>& remote_world_ranks, int my_world_rank) {
  Comm c = member_view(context, local_world_ranks, my_world_rank);
  c.inter = true;
  c.remote_world_ranks = remote_world_ranks;
  c.local = std::make_shared<Comm>(member_view(c.local_context(), local_world_ranks, my_world_rank));
  return c;
}

bool merged_first(const std::vector<int>& local_world_ranks, bool local_high,
                  const std::vector<int>& remote_world_ranks, bool remote_high) {
  if (local_high != remote_high) return !local_high;
  return local_world_ranks.front() < remote_world_ranks.front();
}

std::vector<int> split_members(const Comm& parent, const std::vector<int64_t>& table, int color) {
  std::vector<std::pair<int64_t, int>> order;  // (key, parent rank)
  for (int r = 0; r < parent.size; ++r)
    if (table[size_t(r) * 2] == color) order.emplace_back(table[size_t(r) * 2 + 1], r);
  std::stable_sort(order.begin(), order.end());
  std::vector<int> members;
  for (auto& [k, r] : order) members.push_back(parent.world_rank(r));
  return members;
}

int split_type_color(uint32_t node, const char* resource, int none) {
  constexpr int kInstances = 1 << 16;
  if (!resource || !strcmp(resource, "mpi_shared_memory")) return int(node) * kInstances;
  int instance = -1;
  std::string error;
  if (topo::binding_instance(resource, &instance, &error) != Status::ok) {
    WEFT_INFO(Subsys::topo, "MPI_Comm_split_type: %s; returning MPI_COMM_NULL", error.c_str());
    return none;
  }
  return instance >= 0 && instance < kInstances ? int(node) * kInstances + instance : none;
}

}  // namespace weft
