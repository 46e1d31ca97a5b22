// What a GPU-to-GPU link costs a message, for the collective cost model's levels: from the
// link's kind (NVLink lanes, or PCIe), with typical figures of current parts. A described
// topology (WEFT_TOPO_FILE) can so stand for a machine that is not there.
#pragma once
#include "topo/topology.h"

namespace weft::topo {

struct LinkCost {
  double alpha_us = 0;          // per message
  double beta_us_per_byte = 0;  // 1 / bandwidth
};

// The link between GPUs a and b of t: NVLink (25 GB/s per lane and direction, 1.5 us), else
// PCIe (20 GB/s, 3 us; through the host bridge where they sit behind different switches).
LinkCost gpu_link_cost(const NodeTopology& t, int a, int b);

// Index of the GPU island (NodeTopology::gpu_islands) holding GPU g, or -1.
int island_of(const std::vector<std::vector<int>>& islands, int g);

}  // namespace weft::topo
