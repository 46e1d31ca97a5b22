// The algorithms the selector chooses from. Adding one is its file, coll/<collective>/<name>.cpp
// (defining `extern const Algorithm <collective>_<name>`; coll/CMakeLists.txt picks the file
// up), and its line below: the list declares the variables and fills the table.
#include <array>
#include <atomic>

#include "algorithm.h"
#include "gpu/gpu_coll.h"

#define WEFT_HOST_ALGORITHMS(X)                                                                    \
  X(barrier_dissemination) X(barrier_tree)                                                         \
  X(bcast_binomial) X(bcast_scatter_allgather) X(bcast_chain)                                      \
  X(reduce_binomial) X(reduce_rabenseifner)                                                        \
  X(allreduce_recursive_doubling) X(allreduce_ring) X(allreduce_rabenseifner)                      \
  X(allreduce_reduce_bcast)                                                                        \
  X(allgather_ring) X(allgather_recursive_doubling) X(allgather_bruck)                             \
  X(gather_linear) X(gather_binomial)                                                              \
  X(scatter_linear) X(scatter_binomial)                                                            \
  X(alltoall_pairwise) X(alltoall_bruck) X(alltoall_linear)                                        \
  X(reduce_scatter_ring) X(reduce_scatter_recursive_halving) X(reduce_scatter_reduce_scatterv)     \
  X(scan_recursive_doubling) X(exscan_recursive_doubling)                                          \
  X(neighbor_allgather_linear) X(neighbor_alltoall_linear)                                         \
  X(allreduce_hier) X(allreduce_hier_multi) X(allreduce_hier_pipelined)                            \
  X(barrier_hier) X(bcast_hier) X(reduce_hier) X(allgather_hier)                                   \
  X(allreduce_offload) X(reduce_scatter_offload) X(allgather_offload) X(barrier_offload)           \
  X(barrier_shm) X(bcast_shm) X(reduce_shm) X(allreduce_shm) X(allreduce_shm_two_shot)            \
  X(allgather_shm)

namespace weft::coll {

#define WEFT_DECLARE_ALGORITHM(var) extern const Algorithm var;
WEFT_HOST_ALGORITHMS(WEFT_DECLARE_ALGORITHM)
#undef WEFT_DECLARE_ALGORITHM

namespace {
const std::array kAlgorithms{
#define WEFT_LIST_ALGORITHM(var) &var,
    WEFT_HOST_ALGORITHMS(WEFT_LIST_ALGORITHM)
#undef WEFT_LIST_ALGORITHM
    // GPU device memory only (coll/gpu, its own list in gpu_coll.h); the selector offers them
    // for device buffers alone.
#define WEFT_LIST_GPU_ALGORITHM(var, name, coll) &gpu::var,
    WEFT_GPU_ALGORITHMS(WEFT_LIST_GPU_ALGORITHM)
#undef WEFT_LIST_GPU_ALGORITHM
};
}  // namespace

std::span<const Algorithm* const> algorithms() { return kAlgorithms; }

namespace {
// Relaxed loads and stores rather than an atomic add: a count that two threads bump at the same
// instant may lose one, which a statistic can afford on the collective path.
std::array<std::atomic<uint64_t>, kAlgorithms.size()> g_algorithm_calls{};
}  // namespace

uint64_t algorithm_calls(size_t index) {
  return index < g_algorithm_calls.size() ? g_algorithm_calls[index].load(std::memory_order_relaxed) : 0;
}

void count_algorithm_call(int index) {
  if (index < 0 || size_t(index) >= g_algorithm_calls.size()) return;
  auto& n = g_algorithm_calls[size_t(index)];
  n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

const Algorithm* find_algorithm(Collective coll, std::string_view name) {
  for (const Algorithm* a : kAlgorithms)
    if (a->coll == coll && name == a->name) return a;
  return nullptr;
}

const char* collective_name(Collective c) {
  static constexpr const char* kNames[] = {
      "barrier", "bcast",  "reduce", "allreduce", "allgather", "alltoall", "gather",
      "scatter", "reduce_scatter", "scan", "exscan", "neighbor_allgather", "neighbor_alltoall"};
  static_assert(std::size(kNames) == size_t(Collective::count_));
  return kNames[size_t(c)];
}

int ceil_log2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}

}  // namespace weft::coll
