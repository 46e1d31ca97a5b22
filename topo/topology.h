// What one node looks like: packages, NUMA nodes, cores, caches, GPUs and NICs with their NUMA
// locality and the PCIe switch they sit behind, links between GPUs, and NUMA distances. Read
// from hwloc (the machine itself, or an hwloc XML file) or from a weft JSON topology file, which
// can describe a machine that is not there (e.g. four GPUs behind two PCIe switches).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"
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
  int a = 0, b = 0;  // indices among the node's GPUs
  std::string kind;  // "nvlink" or "pcie"
  int lanes = 0;     // nvlink: links between the pair
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

// Reads this machine through hwloc. with_devices: also the PCI devices (slower: tens of ms).
Status load_machine(bool with_devices, NodeTopology* out, std::string* error);
// Reads a file: weft JSON (see docs/ARCHITECTURE.md) or hwloc XML (a file starting with '<').
Status load_file(const std::string& path, NodeTopology* out, std::string* error);
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

// Advice on a rank's binding: empty if fine, else why it is a slowdown (e.g. a GPU on another
// NUMA node than every core the rank may run on).
std::string binding_advice(const NodeTopology& t, const Binding& b, int gpu_index);

}  // namespace weft::topo
