#include "topo/link_cost.h"

#include <algorithm>

namespace weft::topo {

namespace {
constexpr double kNvlinkLaneBytesPerUs = 25e3, kNvlinkAlphaUs = 1.5;
constexpr double kPcieBytesPerUs = 20e3, kPcieAlphaUs = 3.0;
}  // namespace

LinkCost gpu_link_cost(const NodeTopology& t, int a, int b) {
  for (const GpuLink& l : t.links) {
    if (!((l.a == a && l.b == b) || (l.a == b && l.b == a)) || l.kind != "nvlink") continue;
    return {kNvlinkAlphaUs, 1.0 / (kNvlinkLaneBytesPerUs * std::max(1, l.lanes))};
  }
  return {kPcieAlphaUs, 1.0 / kPcieBytesPerUs};
}

int island_of(const std::vector<std::vector<int>>& islands, int g) {
  for (size_t i = 0; i < islands.size(); ++i)
    if (std::find(islands[i].begin(), islands[i].end(), g) != islands[i].end()) return int(i);
  return -1;
}

}  // namespace weft::topo
