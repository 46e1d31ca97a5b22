// GPU names and links from the drivers: the CUDA driver (peer access and its performance rank)
// and NVML (the NVLinks of each GPU and what is at their far end). Both are opened with dlopen,
// so weft neither links nor needs them: on a machine without a driver the topology only says
// why it has no links. The few prototypes used are declared here, after the CUDA driver API
// (cuda.h) and NVML (nvml.h, drivers 450 and later) references; no driver header is needed.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "topology.h"

namespace weft::topo {

namespace {

// CUDA driver API: CUresult (0: CUDA_SUCCESS), CUdevice (an int), CUdevice_P2PAttribute.
using CuResult = int;
constexpr CuResult kCuSuccess = 0;
constexpr int kP2pPerformanceRank = 0x01;
constexpr int kP2pAccessSupported = 0x02;

struct CudaDriver {
  CuResult (*init)(unsigned flags) = nullptr;
  CuResult (*device_count)(int* count) = nullptr;
  CuResult (*device_get)(int* device, int ordinal) = nullptr;
  CuResult (*pci_bus_id)(char* bus_id, int len, int device) = nullptr;
  CuResult (*p2p_attribute)(int* value, int attribute, int src, int dst) = nullptr;
  CuResult (*can_access_peer)(int* can, int device, int peer) = nullptr;
  CuResult (*error_string)(CuResult error, const char** text) = nullptr;  // optional
};

// NVML: nvmlReturn_t (0: NVML_SUCCESS), nvmlDevice_t, nvmlEnableState_t,
// nvmlIntNvLinkDeviceType_t, and nvmlPciInfo_t as nvmlDeviceGetNvLinkRemotePciInfo_v2 fills it.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlFeatureEnabled = 1;
constexpr int kNvlinkRemoteSwitch = 2;
constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS; a GPU with fewer answers "not supported"
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*handle_by_bus_id)(const char* bus_id, NvmlDevice* device) = nullptr;
  NvmlReturn (*link_state)(NvmlDevice device, unsigned link, int* active) = nullptr;
  NvmlReturn (*remote_pci)(NvmlDevice device, unsigned link, NvmlPciInfo* pci) = nullptr;
  NvmlReturn (*remote_type)(NvmlDevice device, unsigned link, int* type) = nullptr;  // optional
  const char* (*error_string)(NvmlReturn result) = nullptr;                          // optional
};

template <typename Fn>
bool bind(void* lib, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return *fn != nullptr;
}

std::string open_failure(const std::string& path) {
  const char* why = dlerror();
  if (!why || strstr(why, "No such file")) return path + " not found";
  return "cannot load " + path + " (" + why + ")";
}

// CUDA's "0000:1A:00.0", NVML's "00000000:1a:00.0" and hwloc's "0000:1a:00.0" name one device.
std::string canonical_bus_id(const char* text) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (sscanf(text, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return text;
  char out[32];
  snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return out;
}

// The NUMA node the kernel gives a PCI device (-1: unknown), for a GPU hwloc did not list.
int sysfs_numa(const std::string& bus_id) {
  FILE* f = fopen(("/sys/bus/pci/devices/" + bus_id + "/numa_node").c_str(), "r");
  if (!f) return -1;
  int node = -1;
  if (fscanf(f, "%d", &node) != 1) node = -1;
  fclose(f);
  return node;
}

int gpu_index_of(const NodeTopology& t, const std::string& bus_id) {
  int g = 0;
  for (const PciDevice& d : t.devices) {
    if (d.kind != PciDevice::gpu) continue;
    if (!bus_id.empty() && canonical_bus_id(d.bus_id.c_str()) == bus_id) return g;
    ++g;
  }
  return -1;
}

// Names the GPUs CUDA sees and records which pairs may access each other. The library stays
// loaded: the driver must not be unloaded once initialised, and cudart shares it.
bool cuda_facts(const std::string& path, NodeTopology* t, std::vector<GpuPeerFact>* facts, std::string* note) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *note = open_failure(path);
    return false;
  }
  CudaDriver cu;
  (void)bind(lib, "cuGetErrorString", &cu.error_string);
  for (auto [name, ok] : {std::pair{"cuInit", bind(lib, "cuInit", &cu.init)},
                          {"cuDeviceGetCount", bind(lib, "cuDeviceGetCount", &cu.device_count)},
                          {"cuDeviceGet", bind(lib, "cuDeviceGet", &cu.device_get)},
                          {"cuDeviceGetPCIBusId", bind(lib, "cuDeviceGetPCIBusId", &cu.pci_bus_id)},
                          {"cuDeviceGetP2PAttribute", bind(lib, "cuDeviceGetP2PAttribute", &cu.p2p_attribute)},
                          {"cuDeviceCanAccessPeer", bind(lib, "cuDeviceCanAccessPeer", &cu.can_access_peer)}}) {
    if (!ok) {
      *note = path + " has no " + name + " (a driver older than CUDA 8)";
      return false;
    }
  }
  auto failed = [&](const char* call, CuResult r) {
    const char* text = nullptr;
    if (!cu.error_string || cu.error_string(r, &text) != kCuSuccess || !text) text = "unknown error";
    *note = std::string(call) + " failed: " + text + " (CUresult " + std::to_string(r) + ")";
    return false;
  };
  if (CuResult r = cu.init(0); r != kCuSuccess) return failed("cuInit", r);
  int count = 0;
  if (CuResult r = cu.device_count(&count); r != kCuSuccess) return failed("cuDeviceGetCount", r);
  if (count == 0) {
    *note = "the cuda driver sees no device";
    return false;
  }
  std::vector<int> devices(size_t(count), 0);
  std::vector<std::string> buses(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    char bus[32] = "";
    if (CuResult r = cu.device_get(&devices[size_t(i)], i); r != kCuSuccess) return failed("cuDeviceGet", r);
    if (CuResult r = cu.pci_bus_id(bus, sizeof bus, devices[size_t(i)]); r != kCuSuccess)
      return failed("cuDeviceGetPCIBusId", r);
    buses[size_t(i)] = canonical_bus_id(bus);
    const std::string name = "cuda" + std::to_string(i);
    auto it = std::find_if(t->devices.begin(), t->devices.end(), [&](const PciDevice& d) {
      return d.kind == PciDevice::gpu && canonical_bus_id(d.bus_id.c_str()) == buses[size_t(i)];
    });
    if (it != t->devices.end()) it->name = name;
    else t->devices.push_back(PciDevice{PciDevice::gpu, name, buses[size_t(i)], sysfs_numa(buses[size_t(i)]), -1});
  }
  std::vector<int> index(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) index[size_t(i)] = gpu_index_of(*t, buses[size_t(i)]);
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < count; ++j) {
      if (i == j) continue;
      const int src = devices[size_t(i)], dst = devices[size_t(j)];
      int access = 0, rank = -1;
      if (cu.p2p_attribute(&access, kP2pAccessSupported, src, dst) != kCuSuccess &&
          cu.can_access_peer(&access, src, dst) != kCuSuccess)
        access = 0;
      if (access && cu.p2p_attribute(&rank, kP2pPerformanceRank, src, dst) != kCuSuccess) rank = -1;
      facts->push_back(GpuPeerFact{index[size_t(i)], index[size_t(j)], 0, access != 0, rank});
    }
  }
  return true;
}

// Counts, for each GPU NVML knows, its active NVLinks per far-end GPU and those to NVSwitches.
bool nvml_facts(const std::string& path, const NodeTopology& t, std::vector<GpuPeerFact>* facts,
                std::vector<int>* switch_lanes, std::string* note) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *note = open_failure(path);
    return false;
  }
  Nvml nv;
  (void)bind(lib, "nvmlDeviceGetNvLinkRemoteDeviceType", &nv.remote_type);
  (void)bind(lib, "nvmlErrorString", &nv.error_string);
  for (auto [name, ok] :
       {std::pair{"nvmlInit_v2", bind(lib, "nvmlInit_v2", &nv.init)},
        {"nvmlShutdown", bind(lib, "nvmlShutdown", &nv.shutdown)},
        {"nvmlDeviceGetHandleByPciBusId_v2", bind(lib, "nvmlDeviceGetHandleByPciBusId_v2", &nv.handle_by_bus_id)},
        {"nvmlDeviceGetNvLinkState", bind(lib, "nvmlDeviceGetNvLinkState", &nv.link_state)},
        {"nvmlDeviceGetNvLinkRemotePciInfo_v2", bind(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &nv.remote_pci)}}) {
    if (!ok) {
      *note = path + " has no " + name;
      dlclose(lib);
      return false;
    }
  }
  if (NvmlReturn r = nv.init(); r != kNvmlSuccess) {
    *note = std::string("nvmlInit_v2 failed: ") + (nv.error_string ? nv.error_string(r) : "unknown error");
    dlclose(lib);
    return false;
  }
  const int gpus = t.gpu_count();
  switch_lanes->assign(size_t(gpus), 0);
  int known = 0;
  for (int g = 0; g < gpus; ++g) {
    const std::string bus = canonical_bus_id(t.gpu(g)->bus_id.c_str());
    NvmlDevice dev = nullptr;
    // Not an NVIDIA GPU (a server's display controller, say), or one NVML may not see.
    if (bus.empty() || nv.handle_by_bus_id(bus.c_str(), &dev) != kNvmlSuccess) continue;
    ++known;
    std::map<int, int> lanes_to;
    for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
      int active = 0, type = -1;
      if (nv.link_state(dev, link, &active) != kNvmlSuccess || active != kNvmlFeatureEnabled) continue;
      if (nv.remote_type && nv.remote_type(dev, link, &type) == kNvmlSuccess && type == kNvlinkRemoteSwitch) {
        ++(*switch_lanes)[size_t(g)];
        continue;
      }
      NvmlPciInfo remote{};
      if (nv.remote_pci(dev, link, &remote) != kNvmlSuccess) continue;
      const int peer = gpu_index_of(t, canonical_bus_id(remote.bus_id));
      if (peer >= 0 && peer != g) ++lanes_to[peer];
    }
    for (auto [peer, lanes] : lanes_to) facts->push_back(GpuPeerFact{g, peer, lanes, false, -1});
  }
  (void)nv.shutdown();
  dlclose(lib);
  if (!known) {
    *note = "nvml knows none of this node's GPUs";
    return false;
  }
  return true;
}

}  // namespace

std::vector<GpuLink> links_from_peer_facts(int gpus, const std::vector<GpuPeerFact>& facts,
                                           const std::vector<int>& nvswitch_lanes) {
  struct Pair {
    int lanes = 0;
    bool forward = false, backward = false;  // a -> b and b -> a access, a < b
    int perf_rank = -1;
  };
  std::map<std::pair<int, int>, Pair> pairs;
  for (const GpuPeerFact& f : facts) {
    if (f.a == f.b || f.a < 0 || f.b < 0 || f.a >= gpus || f.b >= gpus) continue;
    Pair& p = pairs[{std::min(f.a, f.b), std::max(f.a, f.b)}];
    // Both ends count the same NVLinks: the larger count, not the sum.
    p.lanes = std::max(p.lanes, f.nvlink_lanes);
    (f.a < f.b ? p.forward : p.backward) |= f.p2p;
    p.perf_rank = std::max(p.perf_rank, f.perf_rank);  // the slower direction
  }
  for (int a = 0; a < gpus && size_t(a) < nvswitch_lanes.size(); ++a)
    for (int b = a + 1; b < gpus && size_t(b) < nvswitch_lanes.size(); ++b)
      if (const int lanes = std::min(nvswitch_lanes[size_t(a)], nvswitch_lanes[size_t(b)]); lanes > 0)
        pairs[{a, b}].lanes += lanes;
  std::vector<GpuLink> links;
  for (const auto& [ab, p] : pairs) {
    if (p.lanes > 0) links.push_back(GpuLink{ab.first, ab.second, "nvlink", p.lanes, p.perf_rank});
    else if (p.forward && p.backward) links.push_back(GpuLink{ab.first, ab.second, "pcie", 0, p.perf_rank});
  }
  return links;
}

void add_gpu_links(NodeTopology* t, const GpuDriverLibraries& libs) {
  std::vector<GpuPeerFact> facts;
  std::vector<int> switch_lanes;
  std::string cuda_note, nvml_note;
  const bool cuda = cuda_facts(libs.cuda, t, &facts, &cuda_note);
  const bool nvml = nvml_facts(libs.nvml, *t, &facts, &switch_lanes, &nvml_note);
  if (!cuda && !nvml) {
    t->gpu_link_source = "none: " + cuda_note + "; " + nvml_note;
    return;
  }
  t->links = links_from_peer_facts(t->gpu_count(), facts, switch_lanes);
  if (cuda && nvml) t->gpu_link_source = "cuda driver (peer access) and nvml (nvlink lanes)";
  else if (cuda) t->gpu_link_source = "cuda driver (peer access); nvlink lanes unknown: " + nvml_note;
  else t->gpu_link_source = "nvml (nvlink lanes); peer access unknown: " + cuda_note;
}

}  // namespace weft::topo
