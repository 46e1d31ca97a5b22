// weft_offload_model: the selector's cost model for allreduce with and without in-network
// offload, at node counts no test machine has. For each node count and message size it
// prints the best host algorithm's estimate (the one the selector would take among the flat
// and hierarchical candidates), the offload path's estimate, and their ratio; then, per node
// count, the smallest size from which offload stays ahead. One rank per node, so the node
// phases cost nothing and the comparison is the leaders' exchange alone.
//
//   weft_offload_model [--alpha US] [--beta US_PER_BYTE] [--gamma US_PER_BYTE]
//                      [--hop US] [--radix R] [--fragment-us US] [--fragment-bytes N]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"
#include "coll/offload/offload.h"

using namespace weft;

namespace {

double arg_value(int argc, char** argv, const char* name, double fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], name)) return strtod(argv[i + 1], nullptr);
  return fallback;
}

std::string size_name(double bytes) {
  char b[32];
  if (bytes >= 1 << 20) snprintf(b, sizeof b, "%g MiB", bytes / (1 << 20));
  else if (bytes >= 1024) snprintf(b, sizeof b, "%g KiB", bytes / 1024);
  else snprintf(b, sizeof b, "%g B", bytes);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  coll::CostModel m;
  m.net_alpha_us = m.alpha_us = arg_value(argc, argv, "--alpha", 1.5);
  m.net_beta_us_per_byte = m.beta_us_per_byte = arg_value(argc, argv, "--beta", 1.0 / 12500.0);  // 100 Gb/s
  m.gamma_us_per_byte = arg_value(argc, argv, "--gamma", 1.0 / 10000.0);  // 10 GB/s host reduction
  m.node_alpha_us = 0.3;
  m.node_beta_us_per_byte = 1.0 / 20000.0;
  m.source = "weft_offload_model";
  coll::offload::Options o;
  o.mode = coll::offload::Mode::off;  // no plugin: the model only
  o.cost.hop_us = arg_value(argc, argv, "--hop", o.cost.hop_us);
  o.cost.radix = int(arg_value(argc, argv, "--radix", o.cost.radix));
  o.cost.fragment_us = arg_value(argc, argv, "--fragment-us", o.cost.fragment_us);
  o.cost.fragment_bytes = arg_value(argc, argv, "--fragment-bytes", o.cost.fragment_bytes);
  const double fragment_bytes = o.cost.fragment_bytes;
  weft_offload_node_info node{sizeof node, "model", 0, 1, 0, 1, "model"};
  (void)coll::offload::load(o, node);

  printf("# allreduce, one rank per node; network alpha %.2f us, beta %.3g us/B (%.1f GB/s), host reduction "
         "gamma %.3g us/B\n# offload: %.2f us per switch level each way, radix %d, %.2f us per fragment of %g bytes\n",
         m.alpha_us, m.beta_us_per_byte, 1e-3 / m.beta_us_per_byte, m.gamma_us_per_byte, o.cost.hop_us, o.cost.radix,
         o.cost.fragment_us, fragment_bytes);
  printf("%-6s | %-8s | %-24s | %12s | %12s | %6s\n", "nodes", "size", "best host algorithm", "host us", "offload us",
         "ratio");
  const std::vector<double> sizes = {8, 64, 1024, 8192, 65536, 1 << 20, 16 << 20, 256 << 20};
  for (int nodes : {64, 128, 256, 512, 1024, 2048, 4096}) {
    Comm c;
    c.size = nodes;
    c.rank = 0;
    for (int r = 0; r < nodes; ++r) {
      c.world_ranks.push_back(r);
      c.nodes.push_back(uint32_t(r));
    }
    double crossover = -1;
    bool ahead_from = false;
    for (double n : sizes) {
      coll::CollArgs a(coll::Collective::allreduce);
      a.bytes = size_t(n);
      a.count = size_t(n) / 4;
      a.red = coll::Reduction{ReduceOp::sum, BasicType::f32, 4, true};
      const coll::Algorithm* host = coll::lowest_estimate(a, coll::bare_context(c), m);
      const double host_us = host->estimate_us(a, coll::bare_context(c), m);
      const double offload_us = coll::offload::fabric_us(c, n, m);  // one rank per node: no node phases
      printf("%-6d | %-8s | %-24s | %12.2f | %12.2f | %6.2f\n", nodes, size_name(n).c_str(), host->name, host_us,
             offload_us, offload_us / host_us);
      if (offload_us < host_us && !ahead_from) {
        crossover = n;
        ahead_from = true;
      } else if (offload_us >= host_us) {
        ahead_from = false;
        crossover = -1;
      }
    }
    printf("%-6d | offload ahead from %s\n", nodes, crossover < 0 ? "no size measured" : size_name(crossover).c_str());
  }
  coll::offload::unload();
  return 0;
}
