// What one node looks like: packages, NUMA nodes, cores, caches, GPUs and NICs with their NUMA
// locality and the PCIe switch they sit behind, links between GPUs, and NUMA distances. Read
// from hwloc (the machine itself, or an hwloc XML file) or from a weft JSON topology file, which
// can describe a machine that is not there (e.g. four GPUs behind two PCIe switches).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"
#include "topo/json.h"

namespace weft::topo {

struct NumaNode {
  int id = 0;
  uint64_t memory_bytes = 0;
  std::string cpus;  // list form, e.g. "0-15,32-47"
};

struct PciDevice {
  enum Kind : uint8_t { gpu, nic };
  Kind kind = gpu;
  std::string name;    // e.g. "cuda0", "mlx5_0", or vendor:device
  std::string bus_id;  // domain:bus:device.function
  int numa = -1;       // nearest NUMA node (-1: unknown)
  int pci_switch = -1; // the PCIe switch (bridge) above it, numbered per node (-1: none)
};

struct GpuLink {
  int a = 0, b = 0;    // indices among the node's GPUs
  std::string kind;    // "nvlink" or "pcie"
  int lanes = 0;       // nvlink: links between the pair
  int perf_rank = -1;  // CUDA's relative rank of the pair's peer path (lower is faster; -1: unknown)
};

struct NodeTopology {
  std::string source;  // where it came from, for logs
  std::string hostname;
  int packages = 0, cores = 0, pus = 0;
  std::vector<NumaNode> numa;
  std::vector<uint64_t> caches;  // bytes of L1d, L2, L3 ... (one of each level)
  std::vector<std::vector<unsigned>> distances;  // NUMA node to NUMA node (10: local)
  std::vector<PciDevice> devices;
  std::vector<GpuLink> links;
  // Where the links came from: "cuda driver ...", "topology file", or "none: why" (no driver,
  // devices not read, ...). A reader can tell "no links" from "nobody asked".
  std::string gpu_link_source;

  int gpu_count() const;
  const PciDevice* gpu(int index) const;
  // GPU islands: GPUs joined by NVLink (transitively); GPUs with no NVLink are grouped by the
  // PCIe switch above them, then by NUMA node.
  std::vector<std::vector<int>> gpu_islands() const;
};

// The calling process's binding.
struct Binding {
  std::string cpus;       // list form
  std::vector<int> numa;  // NUMA nodes its cpus cover
  bool bound = false;     // narrower than the whole machine
};

// Reads this machine through hwloc. with_devices: also the PCI devices (slower: tens of ms),
// then, with gpu_drivers, the GPUs' names and links from the CUDA driver and NVML
// (add_gpu_links; about a second on a GPU node, mostly driver start-up; nothing without one).
Status load_machine(bool with_devices, NodeTopology* out, std::string* error, bool gpu_drivers = true);
// Reads a file: weft JSON (see docs/ARCHITECTURE.md) or hwloc XML (a file starting with '<').
Status load_file(const std::string& path, NodeTopology* out, std::string* error);
// Every core of this machine: the CPUs (hardware threads) it holds, one bit each, in 64-bit words.
Status core_cpus(std::vector<std::vector<uint64_t>>* out, std::string* error);
// The calling process's binding, as hwloc sees it.
Status current_binding(Binding* out, std::string* error);

// The instance of an hwloc object type ("NUMANode", "Package", "L3Cache", "Core", "Machine",
// ...) that holds the calling process's whole binding: its logical index, or -1 when the
// binding spans several instances. Status::invalid_arg for a type hwloc does not know.
Status binding_instance(const std::string& type, int* index, std::string* error);

std::string to_json(const NodeTopology& t);
// Validates and converts a parsed weft JSON topology.
Status from_json_text(const std::string& text, NodeTopology* out, std::string* error);
// A readable tree: machine, NUMA nodes with their cores and devices, GPU links and islands.
std::string to_text(const NodeTopology& t);

// Advice on a rank's binding: empty if fine, else why it is a slowdown, in one sentence: its GPU
// on another NUMA node than every core the rank may run on, and (uses_network: the job spans
// nodes) the NIC nearest those cores on another NUMA node as well.
std::string binding_advice(const NodeTopology& t, const Binding& b, int gpu_index, bool uses_network);

// GPU links from the drivers (gpu_links.cpp).

// What the drivers say about one ordered pair of GPUs (indices among the node's GPUs).
struct GpuPeerFact {
  int a = 0, b = 0;
  int nvlink_lanes = 0;  // active NVLinks of a whose far end is b (NVML)
  bool p2p = false;      // a may access b's memory directly (CUDA)
  int perf_rank = -1;    // CUDA's performance rank of a -> b (-1: unknown)
};
// One link per pair of GPUs: nvlink with the larger lane count of the two directions (plus,
// through NVSwitches, the fewer switch lanes of the two GPUs, nvswitch_lanes[gpu]); else pcie
// when each may access the other; else none (copies go through host memory).
std::vector<GpuLink> links_from_peer_facts(int gpus, const std::vector<GpuPeerFact>& facts,
                                           const std::vector<int>& nvswitch_lanes = {});

// The driver libraries, opened at run time so that weft needs no driver; tests name stand-ins.
struct GpuDriverLibraries {
  std::string cuda = "libcuda.so.1";
  std::string nvml = "libnvidia-ml.so.1";
};
// Names the GPUs CUDA sees cudaN (matched to hwloc's PCI devices by bus id; a device hwloc did
// not list is added) and replaces the links with what CUDA's peer attributes and NVML's NVLink
// state say. Never fails: without a driver, links stay as they were and gpu_link_source says why.
void add_gpu_links(NodeTopology* t, const GpuDriverLibraries& libs = {});

}  // namespace weft::topo
