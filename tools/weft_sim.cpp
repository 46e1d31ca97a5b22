// weft_sim: the collective algorithms' predicted times at a shape, without running them. For
// each candidate it builds every rank's schedule exactly as a job would (coll/), replays them
// in the selector's alpha-beta-gamma model (coll/replay.h), and prints the selector's own
// estimate beside the replay and the algorithm the selector would choose.
//
//   weft_sim [--coll C] [--nodes N] [--ppn R | --gpus-per-node G] [--bytes LIST] [--type T]
//            [--model FILE] [--alpha US] [--beta US_PER_BYTE] [--node-alpha US]
//            [--node-beta US_PER_BYTE] [--net-alpha US] [--net-beta US_PER_BYTE]
//            [--gamma US_PER_BYTE] [--gap US] [--shm-alpha US]
//            [--shm-beta US_PER_BYTE] [--offload on|off] [--p2p FILE] [--duplex full|half]
//            [--nics-per-node K] [--topology FILE] [--host-cores C] [--max-steps N]
//            [--max-ranks N] [--csv]
//
// C: allreduce (default), bcast, reduce, allgather, reduce_scatter, alltoall, barrier.
// LIST: sizes in bytes with optional k/m/g suffixes, comma-separated. T: f32 (default), f64,
// i32, i64. FILE: a tuning file (WEFT_COLL_MODEL's format); the options after it override its
// numbers (--alpha and --beta set both levels). Without either, a 100 Gb/s network (2 us, 12.5 GB/s) and a node's shared memory.
// --p2p: measured one-way message times ("node|net,BYTES,US" lines) that the replay uses in
// place of alpha and beta on the levels they give (the estimates keep the model). --duplex half:
// a rank's sends and receives take turns on its link (where the CPU copies every byte).
// --nics-per-node: the network links a node's ranks share (1 by default; rank i of a node uses
// link i mod K). --topology: a node from a weft JSON or hwloc XML topology file (topo/): one
// rank per GPU (else per core), its NICs as the links, each GPU's rank on its nearest NIC.
// --host-cores: every rank on one host of C cores, each message's work at either end taking one
// (virtual nodes, namespace hosts); replayed with every rank only.
// --max-steps and --max-ranks bound the replay of all ranks together (coll/replay.h); beyond
// them the nodes of a few sampled ranks are replayed, their ranks in step.
#include <sys/mman.h>

#include <algorithm>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "coll/algorithm.h"
#include "coll/comm_state.h"
#include "coll/gpu/gpu_coll.h"
#include "coll/hier/hierarchy.h"
#include "coll/offload/offload.h"
#include "coll/replay.h"
#include "topo/topology.h"

using namespace weft;
using namespace weft::coll;

namespace {

struct Options {
  Collective coll = Collective::allreduce;
  int nodes = 4;
  int ppn = 0;
  int gpus = 0;
  std::vector<size_t> sizes = {8, 1024, 65536, 1 << 20, 16 << 20};
  BasicType type = BasicType::f32;
  size_t elem = 4;
  CostModel model;
  bool offload = false;
  ReplayLimits limits;
  Links links;
  std::string curves_file;
  topo::NodeTopology topology;  // --topology: what each node looks like
  std::string topology_file;
  bool csv = false;
};

[[noreturn]] void usage(const char* why) {
  fprintf(stderr, "weft_sim: %s\n(see the comment at the top of tools/weft_sim.cpp, or docs/PERFORMANCE.md)\n", why);
  exit(2);
}

size_t parse_size(const char* s) {
  char* end = nullptr;
  const double v = strtod(s, &end);
  if (end == s || v < 0) usage((std::string("not a size: ") + s).c_str());
  double mult = 1;
  if (*end == 'k' || *end == 'K') mult = 1024;
  else if (*end == 'm' || *end == 'M') mult = 1 << 20;
  else if (*end == 'g' || *end == 'G') mult = double(1 << 30);
  else if (*end) usage((std::string("not a size: ") + s).c_str());
  return size_t(v * mult);
}

double parse_number(const char* name, const char* s) {
  char* end = nullptr;
  const double v = strtod(s, &end);
  if (end == s || *end || !std::isfinite(v) || v < 0) usage((std::string(name) + " takes a number, not " + s).c_str());
  return v;
}

// "node|net,BYTES,US" lines: one-way message times measured on each level ('#' comments).
void read_curves(const char* path, Links* out) {
  FILE* f = fopen(path, "r");
  if (!f) usage((std::string("cannot open ") + path).c_str());
  char line[256];
  int number = 0;
  while (fgets(line, sizeof line, f)) {
    ++number;
    if (line[0] == '#' || line[0] == '\n') continue;
    char level[16];
    double bytes = 0, us = 0;
    if (sscanf(line, "%15[a-z],%lf,%lf", level, &bytes, &us) != 3 || bytes < 0 || us <= 0 ||
        (strcmp(level, "node") && strcmp(level, "net")))
      usage((std::string(path) + ":" + std::to_string(number) + ": not 'node|net,BYTES,US'").c_str());
    (!strcmp(level, "net") ? out->net : out->node).emplace_back(bytes, us);
  }
  fclose(f);
  std::sort(out->node.begin(), out->node.end());
  std::sort(out->net.begin(), out->net.end());
  if (out->node.empty() && out->net.empty()) usage((std::string(path) + ": no measurements").c_str());
}

// A node as a topology file describes it: one rank per GPU (else per core) unless --ppn or
// --gpus-per-node says otherwise, and its NICs as the network links, each GPU's rank on the NIC
// behind its PCIe switch, else on its NUMA node, else in turn.
void apply_topology(Options* o) {
  const topo::NodeTopology& t = o->topology;
  std::vector<const topo::PciDevice*> gpus, nics;
  for (const topo::PciDevice& d : t.devices) (d.kind == topo::PciDevice::gpu ? gpus : nics).push_back(&d);
  if (o->gpus == 0) o->gpus = int(gpus.size());
  if (o->ppn == 0) o->ppn = o->gpus > 0 ? o->gpus : std::max(1, t.cores);
  if (nics.empty()) return;
  o->links.nics_per_node = int(nics.size());
  o->links.nic_of_local.clear();
  auto nearest = [&](const topo::PciDevice& gpu, size_t fallback) {
    for (size_t n = 0; n < nics.size(); ++n)
      if (gpu.pci_switch >= 0 && gpu.pci_switch == nics[n]->pci_switch) return int(n);
    for (size_t n = 0; n < nics.size(); ++n)
      if (gpu.numa >= 0 && gpu.numa == nics[n]->numa) return int(n);
    return int(fallback % nics.size());
  };
  for (size_t g = 0; g < gpus.size(); ++g) o->links.nic_of_local.push_back(nearest(*gpus[g], g));
}

Options parse(int argc, char** argv) {
  Options o;
  CostModel& m = o.model;
  m.net_alpha_us = 2.0;
  m.net_beta_us_per_byte = 1.0 / 12500.0;  // 100 Gb/s
  m.node_alpha_us = 0.4;
  m.node_beta_us_per_byte = 1.0 / 20000.0;
  m.gamma_us_per_byte = 1.0 / 10000.0;
  m.shm_alpha_us = 0.15;
  m.shm_beta_us_per_byte = 1.0 / 20000.0;
  m.gap_us = 0.1;
  m.source = "weft_sim's defaults (a 100 Gb/s network)";
  static std::string model_source;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--csv") {
      o.csv = true;
      continue;
    }
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--coll") {
      bool found = false;
      for (int c = 0; c < int(Collective::count_); ++c)
        if (!strcmp(v, collective_name(Collective(c)))) {
          o.coll = Collective(c);
          found = true;
        }
      if (!found) usage((std::string("unknown collective ") + v).c_str());
    } else if (a == "--nodes") {
      o.nodes = int(parse_number("--nodes", v));
    } else if (a == "--ppn") {
      o.ppn = int(parse_number("--ppn", v));
    } else if (a == "--gpus-per-node") {
      o.gpus = int(parse_number("--gpus-per-node", v));
    } else if (a == "--bytes") {
      o.sizes.clear();
      std::string list = v;
      size_t at = 0;
      while (at <= list.size()) {
        const size_t comma = std::min(list.find(',', at), list.size());
        o.sizes.push_back(parse_size(list.substr(at, comma - at).c_str()));
        at = comma + 1;
      }
    } else if (a == "--type") {
      const std::string t = v;
      if (t == "f32") o.type = BasicType::f32, o.elem = 4;
      else if (t == "f64") o.type = BasicType::f64, o.elem = 8;
      else if (t == "i32") o.type = BasicType::i32, o.elem = 4;
      else if (t == "i64") o.type = BasicType::i64, o.elem = 8;
      else usage(("unknown type " + t + " (f32, f64, i32, i64)").c_str());
    } else if (a == "--model") {
      std::string error;
      if (load_cost_model(v, &m, &error) != Status::ok) usage(error.c_str());
      model_source = std::string("tuning file ") + v;
      m.source = model_source.c_str();
    } else if (a == "--alpha") {
      m.net_alpha_us = m.node_alpha_us = parse_number("--alpha", v);
    } else if (a == "--beta") {
      m.net_beta_us_per_byte = m.node_beta_us_per_byte = parse_number("--beta", v);
    } else if (a == "--node-alpha") {
      m.node_alpha_us = parse_number("--node-alpha", v);
    } else if (a == "--node-beta") {
      m.node_beta_us_per_byte = parse_number("--node-beta", v);
    } else if (a == "--net-alpha") {
      m.net_alpha_us = parse_number("--net-alpha", v);
    } else if (a == "--net-beta") {
      m.net_beta_us_per_byte = parse_number("--net-beta", v);
    } else if (a == "--gamma") {
      m.gamma_us_per_byte = parse_number("--gamma", v);
    } else if (a == "--gap") {
      m.gap_us = parse_number("--gap", v);
    } else if (a == "--shm-alpha") {
      m.shm_alpha_us = parse_number("--shm-alpha", v);
    } else if (a == "--shm-beta") {
      m.shm_beta_us_per_byte = parse_number("--shm-beta", v);
    } else if (a == "--offload") {
      o.offload = !strcmp(v, "on");
      if (!o.offload && strcmp(v, "off")) usage("--offload takes on or off");
    } else if (a == "--p2p") {
      read_curves(v, &o.links);
      o.curves_file = v;
    } else if (a == "--host-cores") {
      o.links.host_cores = int(parse_number("--host-cores", v));
    } else if (a == "--topology") {
      std::string error;
      if (topo::load_file(v, &o.topology, &error) != Status::ok) usage(error.c_str());
      o.topology_file = v;
    } else if (a == "--nics-per-node") {
      o.links.nics_per_node = int(parse_number("--nics-per-node", v));
    } else if (a == "--duplex") {
      o.links.half_duplex = !strcmp(v, "half");
      if (!o.links.half_duplex && strcmp(v, "full")) usage("--duplex takes full or half");
    } else if (a == "--max-steps") {
      o.limits.max_steps = size_t(parse_number("--max-steps", v));
    } else if (a == "--max-ranks") {
      o.limits.max_ranks = int(parse_number("--max-ranks", v));
    } else {
      usage(("unknown option " + a).c_str());
    }
  }
  if (!o.topology_file.empty()) apply_topology(&o);
  if (o.ppn == 0) o.ppn = o.gpus > 0 ? o.gpus : 1;
  if (o.nodes < 1 || o.ppn < 1 || double(o.nodes) * o.ppn > 1 << 20)
    usage("--nodes and --ppn must be at least 1, and at most 2^20 ranks in all");
  if (m.alpha_us == 0) m.alpha_us = m.net_alpha_us;
  if (m.beta_us_per_byte == 0) m.beta_us_per_byte = m.net_beta_us_per_byte;
  return o;
}

// Addresses the schedules may name but never touch: a replay moves no data.
char* reserve(size_t bytes) {
  void* p = mmap(nullptr, bytes + 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) usage("cannot reserve address space for the buffers");
  return static_cast<char*>(p);
}

std::string size_name(size_t bytes) {
  char b[32];
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) snprintf(b, sizeof b, "%zu MiB", bytes >> 20);
  else if (bytes >= 1024 && bytes % 1024 == 0) snprintf(b, sizeof b, "%zu KiB", bytes >> 10);
  else snprintf(b, sizeof b, "%zu B", bytes);
  return b;
}

// Rank r's view of the job: nodes by block, ppn ranks each.
Comm comm_of(int rank, const std::vector<uint32_t>& nodes) {
  Comm c;
  c.rank = rank;
  c.size = int(nodes.size());
  c.name = "weft_sim";
  c.world_ranks.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) c.world_ranks[i] = int(i);
  c.nodes = nodes;
  return c;
}

// The call as rank `rank` makes it; buffers from `space` (never touched).
CollArgs args_for(const Options& o, size_t bytes, int p, char* send, char* recv) {
  CollArgs a(o.coll);
  a.bytes = bytes;
  a.red = Reduction{ReduceOp::sum, o.type, o.elem, true};
  a.count = bytes / o.elem;
  a.send = send;
  a.recv = recv;
  const size_t block = bytes / size_t(p);
  switch (o.coll) {
    case Collective::allreduce: a.send = recv; break;  // in place, as coll::plan leaves it
    case Collective::allgather:
    case Collective::gather:
    case Collective::scatter:
    case Collective::alltoall:
      a.bytes = block * size_t(p);
      a.own_bytes = block;
      for (int r = 0; r < p; ++r) {
        a.recv_blocks.push_back({size_t(r) * block, block});
        a.send_blocks.push_back({size_t(r) * block, block});
      }
      break;
    case Collective::reduce_scatter:
      a.counts.assign(size_t(p), a.count / size_t(p));
      a.count = a.counts[0] * size_t(p);
      a.bytes = a.count * o.elem;
      break;
    default: break;
  }
  return a;
}

// Ranks replayed alone when all of them would be too many steps: the first and last ranks of
// the first and last nodes, and a middle one.
std::vector<int> sample_ranks(int p, int ppn) {
  std::vector<int> s = {0, std::min(1, p - 1), ppn - 1, p / 2, p - ppn, p - 1};
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

double cpu_seconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int p = o.nodes * o.ppn;
  std::vector<uint32_t> nodes(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) nodes[size_t(r)] = uint32_t(r / o.ppn);
  const CostModel& m = o.model;
  if (o.offload) {
    offload::Options oo;
    oo.mode = offload::Mode::off;  // no plugin: its cost model only
    weft_offload_node_info node{sizeof node, "weft_sim", 0, 1, 0, 1, "weft_sim", nullptr};
    (void)offload::load(oo, node);
  }
  const size_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
  char* send = reserve(largest);
  char* recv = reserve(largest);
  const double cpu0 = cpu_seconds();
  const std::vector<int> sample = sample_ranks(p, o.ppn);

  if (o.csv) {
    printf("collective,nodes,ppn,ranks,bytes,algorithm,estimate_us,replay_us,replay,chosen\n");
  } else {
    printf("# weft_sim: %s on %d nodes x %d ranks (%d ranks)%s; model: %s\n", collective_name(o.coll), o.nodes,
           o.ppn, p, o.gpus ? " (one rank per GPU)" : "", m.source);
    printf("# node: alpha %.3g us, beta %.3g us/B; network: alpha %.3g us, beta %.3g us/B; gamma %.3g us/B; "
           "gap %.3g us; shm: alpha %.3g us, beta %.3g us/B\n",
           node_level(m).alpha_us, node_level(m).beta_us_per_byte, net_level(m).alpha_us,
           net_level(m).beta_us_per_byte, m.gamma_us_per_byte, m.gap_us, m.shm_alpha_us, m.shm_beta_us_per_byte);
    if (o.links.half_duplex) printf("# replay: half-duplex links\n");
    if (o.links.host_cores > 0) printf("# replay: every rank on one host of %d cores\n", o.links.host_cores);
    if (!o.topology_file.empty())
      printf("# node: %s (%d GPUs, %d NICs)\n", o.topology_file.c_str(), o.topology.gpu_count(),
             int(o.topology.devices.size()) - o.topology.gpu_count());
    printf("# replay: %d network link(s) per node, shared by its ranks\n", std::max(1, o.links.nics_per_node));
    if (!o.curves_file.empty())
      printf("# replay: message times from %s (%zu node, %zu network sizes) in place of alpha and beta\n",
             o.curves_file.c_str(), o.links.node.size(), o.links.net.size());
    printf("%-9s | %-22s | %12s | %12s | %s\n", "size", "algorithm", "estimate us", "replay us", "replay");
  }
  for (size_t bytes : o.sizes) {
    const Comm view = comm_of(0, nodes);
    const CollArgs a0 = args_for(o, bytes, p, send, recv);
    const CollContext ctx0{nullptr, view, m};  // the builders see the model, as in a job
    const Algorithm* chosen = lowest_estimate(a0, ctx0, m);
    for (const Algorithm* alg : algorithms()) {
      if (alg->coll != o.coll || gpu::is_gpu_algorithm(*alg)) continue;
      const bool is_offload = !strcmp(alg->name, "offload");
      if (is_offload && !o.offload) continue;
      std::string how;
      double estimate = 0, replayed = -1;
      if (is_offload) {
        // Without a plugin the algorithm declines every call; its model is what offload offers.
        if (o.coll != Collective::allreduce || !spans_nodes(view)) continue;
        const auto [node, l, depth, n] = offload::node_terms(a0, ctx0, m);
        estimate = depth * (2 * node.step_us(n) + n * m.gamma_us_per_byte) + depth * node.alpha_us +
                   offload::fabric_us(view, n, m);
        how = "not replayed: the switch's part is a model, not messages";
      } else if (!alg->supports(a0, ctx0)) {
        continue;
      } else {
        estimate = alg->estimate_us(a0, ctx0, m);
        const RankSchedule build = [&](int r) {
          Comm c = comm_of(r, nodes);
          const CollArgs a = args_for(o, bytes, p, send, recv);
          const CollContext ctx{nullptr, c, m};
          std::shared_ptr<Schedule> s = alg->build(a, ctx);
          release(c);
          return s;
        };
        const ReplayResult rr = replay(build, nodes, model_for(view, m), o.limits, sample,
                                       &o.links);
        if (!rr.error.empty()) {
          how = "replay failed: " + rr.error;
        } else {
          replayed = rr.us;
          how = rr.sampled ? "sampled (the nodes of " + std::to_string(sample.size()) + " ranks)" : "all ranks";
          how += ", " + std::to_string(rr.steps) + " steps, slowest rank " + std::to_string(rr.slowest_rank);
          if (rr.shared_memory_steps)
            how += "; " + std::to_string(rr.shared_memory_steps) + " shared-memory steps";
        }
      }
      const bool is_choice = alg == chosen;
      if (o.csv) std::replace(how.begin(), how.end(), ',', ';');
      if (o.csv)
        printf("%s,%d,%d,%d,%zu,%s,%.3f,%.3f,%s,%d\n", collective_name(o.coll), o.nodes, o.ppn, p, bytes, alg->name,
               estimate, replayed, how.c_str(), is_choice);
      else
        printf("%-9s | %-22s | %12.2f | %12s | %s\n", size_name(bytes).c_str(),
               (std::string(alg->name) + (is_choice ? " *" : "")).c_str(), estimate,
               replayed < 0 ? "-" : std::to_string(replayed).substr(0, std::to_string(replayed).find('.') + 3).c_str(),
               how.c_str());
    }
    if (o.gpus > 0 && gpu::has_algorithms(o.coll) && !o.csv) {
      std::string why;
      const gpu::RuleCall rc{o.coll, a0.bytes, true, spans_nodes(view), true, false};
      static const gpu::Settings defaults;
      const Algorithm* g = gpu::rule_pick(rc, defaults, &why);
      printf("%-9s | device memory: %s (a rule, not replayed: %s)\n", size_name(bytes).c_str(), g ? g->name : "none",
             why.c_str());
    }
    if (!o.csv) printf("%-9s | selector: %s\n", size_name(bytes).c_str(), chosen ? chosen->name : "none");
  }
  if (!o.csv) printf("# %.2f s of CPU\n", cpu_seconds() - cpu0);
  if (o.offload) offload::unload();
  return 0;
}
