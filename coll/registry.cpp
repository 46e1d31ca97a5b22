// The algorithms the selector chooses from, one entry per coll/<collective>/<name>.cpp.
#include <array>

#include "algorithm.h"
#include "gpu/gpu_coll.h"

namespace weft::coll {

extern const Algorithm barrier_dissemination, barrier_tree;
extern const Algorithm bcast_binomial, bcast_scatter_allgather, bcast_chain;
extern const Algorithm reduce_binomial, reduce_rabenseifner;
extern const Algorithm allreduce_recursive_doubling, allreduce_ring, allreduce_rabenseifner,
    allreduce_reduce_bcast;
extern const Algorithm allgather_ring, allgather_recursive_doubling, allgather_bruck;
extern const Algorithm gather_linear, gather_binomial;
extern const Algorithm scatter_linear, scatter_binomial;
extern const Algorithm alltoall_pairwise, alltoall_bruck, alltoall_linear;
extern const Algorithm reduce_scatter_ring, reduce_scatter_recursive_halving,
    reduce_scatter_reduce_scatterv;
extern const Algorithm scan_recursive_doubling, exscan_recursive_doubling;
extern const Algorithm neighbor_allgather_linear, neighbor_alltoall_linear;
extern const Algorithm allreduce_hier, allreduce_hier_multi, allreduce_hier_pipelined;
extern const Algorithm barrier_hier, bcast_hier, reduce_hier, allgather_hier;
extern const Algorithm allreduce_offload, reduce_scatter_offload, allgather_offload, barrier_offload;
extern const Algorithm barrier_shm, bcast_shm, reduce_shm, allreduce_shm, allreduce_shm_two_shot,
    allgather_shm;

namespace {
const std::array kAlgorithms{
    &barrier_dissemination, &barrier_tree,
    &bcast_binomial, &bcast_scatter_allgather, &bcast_chain,
    &reduce_binomial, &reduce_rabenseifner,
    &allreduce_recursive_doubling, &allreduce_ring, &allreduce_rabenseifner, &allreduce_reduce_bcast,
    &allgather_ring, &allgather_recursive_doubling, &allgather_bruck,
    &gather_linear, &gather_binomial,
    &scatter_linear, &scatter_binomial,
    &alltoall_pairwise, &alltoall_bruck, &alltoall_linear,
    &reduce_scatter_ring, &reduce_scatter_recursive_halving, &reduce_scatter_reduce_scatterv,
    &scan_recursive_doubling, &exscan_recursive_doubling,
    &neighbor_allgather_linear, &neighbor_alltoall_linear,
    &allreduce_hier, &allreduce_hier_multi, &allreduce_hier_pipelined,
    &barrier_hier, &bcast_hier, &reduce_hier, &allgather_hier,
    &allreduce_offload, &reduce_scatter_offload, &allgather_offload, &barrier_offload,
    &barrier_shm, &bcast_shm, &reduce_shm, &allreduce_shm, &allreduce_shm_two_shot, &allgather_shm,
    // GPU device memory only (coll/gpu); the selector offers them for device buffers alone.
#define WEFT_LIST_GPU_ALGORITHM(var, name, coll) &gpu::var,
    WEFT_GPU_ALGORITHMS(WEFT_LIST_GPU_ALGORITHM)
#undef WEFT_LIST_GPU_ALGORITHM
};
}  // namespace

std::span<const Algorithm* const> algorithms() { return kAlgorithms; }

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
