#include "topology.h"

#include <hwloc.h>
#include <hwloc/distances.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "json.h"

namespace weft::topo {

namespace {

constexpr const char* kFormat = "weft-topology";
constexpr int kVersion = 1;

std::string list_of(hwloc_const_bitmap_t set) {
  char* s = nullptr;
  if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s) return {};
  std::string out = s;
  free(s);
  return out;
}

// Owns an hwloc topology for the duration of a load.
struct Hwloc {
  hwloc_topology_t t = nullptr;
  ~Hwloc() {
    if (t) hwloc_topology_destroy(t);
  }
};

Status fail(std::string* error, const std::string& msg) {
  *error = msg;
  return Status::invalid_arg;
}

// GPUs (display and 3D controllers) and NICs (Ethernet, InfiniBand); other devices are left out.
bool classify(hwloc_obj_t dev, PciDevice::Kind* kind) {
  const unsigned cls = dev->attr->pcidev.class_id;
  if (cls == 0x0300 || cls == 0x0302) {
    *kind = PciDevice::gpu;
    return true;
  }
  if (cls == 0x0200 || cls == 0x0207) {
    *kind = PciDevice::nic;
    return true;
  }
  return false;
}

void extract(hwloc_topology_t t, NodeTopology* out) {
  out->packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
  out->cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  out->pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  const int nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nodes; ++i) {
    hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, unsigned(i));
    out->numa.push_back(NumaNode{int(n->os_index), n->attr->numanode.local_memory, list_of(n->cpuset)});
  }
  for (hwloc_obj_type_t type : {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE}) {
    hwloc_obj_t c = hwloc_get_obj_by_type(t, type, 0);
    if (!c) break;
    out->caches.push_back(c->attr->cache.size);
  }
  unsigned nr = 1;
  hwloc_distances_s* d = nullptr;
  if (nodes > 1 &&
      hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &d, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
      nr > 0 && d) {
    out->distances.assign(d->nbobjs, std::vector<unsigned>(d->nbobjs, 0));
    for (unsigned i = 0; i < d->nbobjs; ++i)
      for (unsigned j = 0; j < d->nbobjs; ++j) out->distances[i][j] = unsigned(d->values[i * d->nbobjs + j]);
    hwloc_distances_release(t, d);
  }
  std::map<uint64_t, int> switches;  // bridge gp_index -> number on this node
  for (hwloc_obj_t dev = nullptr; (dev = hwloc_get_next_pcidev(t, dev));) {
    PciDevice p;
    if (!classify(dev, &p.kind)) continue;
    char bus[32];
    snprintf(bus, sizeof bus, "%04x:%02x:%02x.%01x", unsigned(dev->attr->pcidev.domain), dev->attr->pcidev.bus,
             dev->attr->pcidev.dev, dev->attr->pcidev.func);
    p.bus_id = bus;
    char id[16];
    snprintf(id, sizeof id, "%04x:%04x", dev->attr->pcidev.vendor_id, dev->attr->pcidev.device_id);
    p.name = id;
    for (hwloc_obj_t os = dev->io_first_child; os; os = os->next_sibling)
      if (os->type == HWLOC_OBJ_OS_DEVICE && os->name) {
        p.name = os->name;
        break;
      }
    hwloc_obj_t host = hwloc_get_non_io_ancestor_obj(t, dev);
    if (host && host->nodeset && !hwloc_bitmap_iszero(host->nodeset) &&
        hwloc_bitmap_weight(host->nodeset) == 1)
      p.numa = hwloc_bitmap_first(host->nodeset);
    // The nearest PCI-to-PCI bridge above the device: its switch.
    for (hwloc_obj_t up = dev->parent; up; up = up->parent) {
      if (up->type == HWLOC_OBJ_BRIDGE && up->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
        auto [it, fresh] = switches.emplace(up->gp_index, int(switches.size()));
        p.pci_switch = it->second;
        break;
      }
      if (up->type != HWLOC_OBJ_BRIDGE && up->type != HWLOC_OBJ_PCI_DEVICE) break;
    }
    out->devices.push_back(std::move(p));
  }
}

Status load_hwloc(const char* xml, bool with_devices, NodeTopology* out, std::string* error) {
  Hwloc h;
  if (hwloc_topology_init(&h.t) != 0) return fail(error, "hwloc_topology_init failed");
  if (with_devices) hwloc_topology_set_io_types_filter(h.t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (xml && hwloc_topology_set_xml(h.t, xml) != 0)
    return fail(error, std::string("hwloc cannot read the XML file ") + xml);
  if (hwloc_topology_load(h.t) != 0) return fail(error, "hwloc_topology_load failed");
  *out = NodeTopology{};
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  out->hostname = host;
  if (xml) {
    hwloc_obj_t root = hwloc_get_root_obj(h.t);
    if (const char* name = hwloc_obj_get_info_by_name(root, "HostName")) out->hostname = name;
  }
  char version[32];
  const unsigned v = hwloc_get_api_version();
  snprintf(version, sizeof version, "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
  out->source = xml ? std::string("hwloc XML file ") + xml : std::string("hwloc API ") + version + ", this machine";
  extract(h.t, out);
  out->gpu_link_source = xml ? "none: an hwloc XML file holds no GPU links"
                             : with_devices ? "none: the GPU drivers were not asked" : "none: PCI devices not read";
  return Status::ok;
}

// JSON helpers: typed member access with errors that name the member.

// v as an integer in [lo, hi]. nlohmann keeps integers exact (int64 or uint64) and turns larger
// ones and anything with a fraction or exponent into doubles; an integral double is accepted as
// before, range first: casting a double outside long long's range (1e300) is undefined.
bool integer_in(const Json& v, long long lo, long long hi, long long* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (hi < 0 || u > uint64_t(hi) || (long long)u < lo) return false;
    *out = (long long)u;
    return true;
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < lo || i > hi) return false;
    *out = i;
    return true;
  }
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!(d >= double(lo) && d <= double(hi)) || !(d < kTwoTo63) || d != std::trunc(d)) return false;
  *out = static_cast<long long>(d);
  return true;
}

// v as a number in [lo, hi] (false for any other type; NaN fails both comparisons).
bool number_in(const Json& v, double lo, double hi, double* out) {
  if (!v.is_number()) return false;
  const double d = v.get<double>();
  if (!(d >= lo && d <= hi)) return false;
  *out = d;
  return true;
}

bool get_int(const Json& o, const char* key, long long lo, long long hi, long long* out, std::string* error,
             const std::string& where, bool required = true) {
  const Json* v = json_member(o, key);
  if (!v) {
    if (required) *error = where + ": missing '" + key + "'";
    return !required;
  }
  if (!integer_in(*v, lo, hi, out)) {
    *error = where + ": '" + key + "' must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    return false;
  }
  return true;
}

bool get_string(const Json& o, const char* key, std::string* out, std::string* error, const std::string& where,
                bool required = true) {
  const Json* v = json_member(o, key);
  if (!v) {
    if (required) *error = where + ": missing '" + key + "'";
    return !required;
  }
  if (!v->is_string()) {
    *error = where + ": '" + key + "' must be a string";
    return false;
  }
  *out = v->get_ref<const std::string&>();
  return true;
}

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) snprintf(buf, sizeof buf, "%.1f GiB", double(b) / double(1ull << 30));
  else if (b >= (1ull << 20)) snprintf(buf, sizeof buf, "%.0f MiB", double(b) / double(1ull << 20));
  else snprintf(buf, sizeof buf, "%.0f KiB", double(b) / 1024.0);
  return buf;
}

// Expands a cpu list ("0-3,8") into its members; false if malformed.
bool parse_list(const std::string& s, std::vector<int>* out) {
  out->clear();
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ',')) {
    int a = 0, b = 0;
    char dash = 0;
    std::stringstream p(part);
    if (!(p >> a) || a < 0) return false;
    b = a;
    if (p >> dash) {
      if (dash != '-' || !(p >> b) || b < a || b - a > (1 << 20)) return false;
    }
    for (int i = a; i <= b; ++i) out->push_back(i);
  }
  return true;
}

}  // namespace

int NodeTopology::gpu_count() const {
  return int(std::count_if(devices.begin(), devices.end(), [](const PciDevice& d) { return d.kind == PciDevice::gpu; }));
}

const PciDevice* NodeTopology::gpu(int index) const {
  for (const PciDevice& d : devices)
    if (d.kind == PciDevice::gpu && index-- == 0) return &d;
  return nullptr;
}

std::vector<std::vector<int>> NodeTopology::gpu_islands() const {
  const int n = gpu_count();
  std::vector<int> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
    return x;
  };
  bool any_nvlink = false;
  for (const GpuLink& l : links) {
    if (l.kind != "nvlink" || l.a >= n || l.b >= n) continue;
    any_nvlink = true;
    parent[size_t(find(l.a))] = find(l.b);
  }
  std::map<std::pair<int, int>, std::vector<int>> groups;
  for (int g = 0; g < n; ++g) {
    const PciDevice* d = gpu(g);
    // Without NVLink, GPUs behind one switch (else on one NUMA node) form an island.
    const std::pair<int, int> key = any_nvlink ? std::pair{find(g), 0} : std::pair{d->pci_switch, d->numa};
    groups[key].push_back(g);
  }
  std::vector<std::vector<int>> out;
  for (auto& [k, v] : groups) out.push_back(std::move(v));
  std::sort(out.begin(), out.end());
  return out;
}

Status load_machine(bool with_devices, NodeTopology* out, std::string* error, bool gpu_drivers) {
  WEFT_TRY(load_hwloc(nullptr, with_devices, out, error));
  if (with_devices && gpu_drivers) add_gpu_links(out);
  return Status::ok;
}

Status load_file(const std::string& path, NodeTopology* out, std::string* error) {
  std::ifstream in(path);
  if (!in) return fail(error, "cannot open topology file '" + path + "'");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '<') return load_hwloc(path.c_str(), true, out, error);
  Status s = from_json_text(text, out, error);
  if (s != Status::ok) {
    *error = path + ": " + *error;
    return s;
  }
  out->source = "topology file " + path;
  return Status::ok;
}

Status core_cpus(std::vector<std::vector<uint64_t>>* out, std::string* error) {
  Hwloc h;
  if (hwloc_topology_init(&h.t) != 0 || hwloc_topology_load(h.t) != 0) return fail(error, "hwloc cannot read this machine");
  std::vector<std::vector<uint64_t>> cores;
  const int n = hwloc_get_nbobjs_by_type(h.t, HWLOC_OBJ_CORE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t o = hwloc_get_obj_by_type(h.t, HWLOC_OBJ_CORE, unsigned(i));
    if (!o->cpuset) continue;
    std::vector<uint64_t> cpus;
    for (int c = hwloc_bitmap_first(o->cpuset); c >= 0; c = hwloc_bitmap_next(o->cpuset, c)) {
      if (cpus.size() <= size_t(c / 64)) cpus.resize(size_t(c / 64) + 1, 0);
      cpus[size_t(c / 64)] |= uint64_t(1) << (c % 64);
    }
    cores.push_back(std::move(cpus));
  }
  *out = std::move(cores);
  return Status::ok;
}

Status current_binding(Binding* out, std::string* error) {
  Hwloc h;
  if (hwloc_topology_init(&h.t) != 0 || hwloc_topology_load(h.t) != 0) return fail(error, "hwloc cannot read this machine");
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
  Status s = Status::ok;
  if (hwloc_get_cpubind(h.t, set, HWLOC_CPUBIND_PROCESS) != 0) {
    s = fail(error, "hwloc_get_cpubind failed");
  } else {
    out->cpus = list_of(set);
    out->bound = !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(h.t), set);
    hwloc_cpuset_to_nodeset(h.t, set, nodes);
    out->numa.clear();
    for (int i = hwloc_bitmap_first(nodes); i >= 0; i = hwloc_bitmap_next(nodes, i)) out->numa.push_back(i);
  }
  hwloc_bitmap_free(set);
  hwloc_bitmap_free(nodes);
  return s;
}

Status binding_instance(const std::string& type, int* index, std::string* error) {
  hwloc_obj_type_t obj_type;
  union hwloc_obj_attr_u attr;
  // hwloc also accepts abbreviations; only its own full names count here.
  if (hwloc_type_sscanf(type.c_str(), &obj_type, &attr, sizeof attr) != 0 ||
      strcasecmp(type.c_str(), hwloc_obj_type_string(obj_type)) != 0 || hwloc_obj_type_is_io(obj_type) ||
      (hwloc_obj_type_is_memory(obj_type) && obj_type != HWLOC_OBJ_NUMANODE) || obj_type == HWLOC_OBJ_MISC)
    return fail(error, "'" + type + "' is not a hardware resource type hwloc knows (e.g. NUMANode, Package, L3Cache, Core)");
  Hwloc h;
  if (hwloc_topology_init(&h.t) != 0 || hwloc_topology_load(h.t) != 0) return fail(error, "hwloc cannot read this machine");
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  Status s = Status::ok;
  *index = -1;
  if (hwloc_get_cpubind(h.t, set, HWLOC_CPUBIND_PROCESS) != 0) {
    s = fail(error, "hwloc_get_cpubind failed");
  } else {
    const int n = hwloc_get_nbobjs_by_type(h.t, obj_type);
    int holding = 0;
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t o = hwloc_get_obj_by_type(h.t, obj_type, unsigned(i));
      if (!o->cpuset || !hwloc_bitmap_intersects(o->cpuset, set)) continue;
      ++holding;
      if (hwloc_bitmap_isincluded(set, o->cpuset)) *index = int(o->logical_index);
    }
    if (holding != 1) *index = -1;
  }
  hwloc_bitmap_free(set);
  return s;
}

std::string to_json(const NodeTopology& t) {
  std::string o = "{\n  \"format\": \"weft-topology\", \"version\": 1,\n  \"hostname\": ";
  json_quote(t.hostname, &o);
  o += ",\n  \"packages\": " + std::to_string(t.packages) + ", \"cores\": " + std::to_string(t.cores) +
       ", \"pus\": " + std::to_string(t.pus) + ",\n  \"numa\": [";
  for (size_t i = 0; i < t.numa.size(); ++i) {
    o += i ? ",\n    " : "\n    ";
    o += "{\"id\": " + std::to_string(t.numa[i].id) + ", \"memory_bytes\": " + std::to_string(t.numa[i].memory_bytes) +
         ", \"cpus\": ";
    json_quote(t.numa[i].cpus, &o);
    o += "}";
  }
  o += "],\n  \"caches\": [";
  for (size_t i = 0; i < t.caches.size(); ++i) o += (i ? ", " : "") + std::to_string(t.caches[i]);
  o += "],\n  \"distances\": [";
  for (size_t i = 0; i < t.distances.size(); ++i) {
    o += i ? ", [" : "[";
    for (size_t j = 0; j < t.distances[i].size(); ++j) o += (j ? ", " : "") + std::to_string(t.distances[i][j]);
    o += "]";
  }
  o += "],\n  \"devices\": [";
  for (size_t i = 0; i < t.devices.size(); ++i) {
    const PciDevice& d = t.devices[i];
    o += i ? ",\n    " : "\n    ";
    o += std::string("{\"kind\": \"") + (d.kind == PciDevice::gpu ? "gpu" : "nic") + "\", \"name\": ";
    json_quote(d.name, &o);
    o += ", \"bus_id\": ";
    json_quote(d.bus_id, &o);
    o += ", \"numa\": " + std::to_string(d.numa) + ", \"switch\": " + std::to_string(d.pci_switch) + "}";
  }
  o += "],\n  \"links\": [";
  for (size_t i = 0; i < t.links.size(); ++i) {
    const GpuLink& l = t.links[i];
    o += (i ? ",\n    " : "\n    ") + std::string("{\"a\": ") + std::to_string(l.a) + ", \"b\": " +
         std::to_string(l.b) + ", \"kind\": ";
    json_quote(l.kind, &o);
    o += ", \"lanes\": " + std::to_string(l.lanes);
    if (l.perf_rank >= 0) o += ", \"perf_rank\": " + std::to_string(l.perf_rank);
    o += "}";
  }
  o += "],\n  \"gpu_link_source\": ";
  json_quote(t.gpu_link_source, &o);
  o += "\n}\n";
  return o;
}

Status from_json_text(const std::string& text, NodeTopology* out, std::string* error) {
  Json doc;
  if (!parse_json(text, &doc, error)) return Status::invalid_arg;
  if (!doc.is_object()) return fail(error, "a topology is a JSON object");
  std::string format;
  long long version = 0;
  if (!get_string(doc, "format", &format, error, "topology") ||
      !get_int(doc, "version", 1, 1000, &version, error, "topology"))
    return Status::invalid_arg;
  if (format != kFormat) return fail(error, "'format' must be \"weft-topology\"");
  if (version != kVersion)
    return fail(error, "topology version " + std::to_string(version) + " is not supported (this weft reads version 1)");
  NodeTopology t;
  long long n = 0;
  if (!get_string(doc, "hostname", &t.hostname, error, "topology", false)) return Status::invalid_arg;
  constexpr long long kMany = 1 << 20;
  if (!get_int(doc, "packages", 0, kMany, &n, error, "topology")) return Status::invalid_arg;
  t.packages = int(n);
  if (!get_int(doc, "cores", 0, kMany, &n, error, "topology")) return Status::invalid_arg;
  t.cores = int(n);
  if (!get_int(doc, "pus", 0, kMany, &n, error, "topology")) return Status::invalid_arg;
  t.pus = int(n);
  auto array_of = [&](const char* key, const Json** a) {
    *a = json_member(doc, key);
    if (*a && !(*a)->is_array()) {
      *error = std::string("topology: '") + key + "' must be an array";
      return false;
    }
    return true;
  };
  const Json *numa, *caches, *distances, *devices, *links;
  if (!array_of("numa", &numa) || !array_of("caches", &caches) || !array_of("distances", &distances) ||
      !array_of("devices", &devices) || !array_of("links", &links))
    return Status::invalid_arg;
  if (numa) {
    for (size_t i = 0; i < numa->size(); ++i) {
      const Json& e = (*numa)[i];
      const std::string where = "numa[" + std::to_string(i) + "]";
      NumaNode node;
      long long mem = 0;
      std::vector<int> members;
      if (!get_int(e, "id", 0, kMany, &n, error, where) ||
          !get_int(e, "memory_bytes", 0, (1ll << 62), &mem, error, where, false) ||
          !get_string(e, "cpus", &node.cpus, error, where))
        return Status::invalid_arg;
      if (!parse_list(node.cpus, &members)) return fail(error, where + ": 'cpus' must be a list such as \"0-7,16\"");
      node.id = int(n);
      node.memory_bytes = uint64_t(mem);
      t.numa.push_back(std::move(node));
    }
  }
  if (caches) {
    for (const Json& c : *caches) {
      double bytes = 0;
      if (!number_in(c, 0, double(1ll << 50), &bytes)) return fail(error, "'caches' holds byte counts");
      t.caches.push_back(uint64_t(bytes));
    }
  }
  if (distances) {
    for (const Json& row : *distances) {
      if (!row.is_array() || row.size() != distances->size()) return fail(error, "'distances' must be a square matrix");
      t.distances.emplace_back();
      for (const Json& v : row) {
        double distance = 0;
        if (!number_in(v, 0, 1e6, &distance)) return fail(error, "'distances' holds small numbers");
        t.distances.back().push_back(unsigned(distance));
      }
    }
    if (!t.distances.empty() && t.distances.size() != t.numa.size())
      return fail(error, "'distances' must have one row per NUMA node");
  }
  auto numa_known = [&](long long id) {
    return id == -1 || std::any_of(t.numa.begin(), t.numa.end(), [&](const NumaNode& x) { return x.id == id; });
  };
  if (devices) {
    for (size_t i = 0; i < devices->size(); ++i) {
      const Json& e = (*devices)[i];
      const std::string where = "devices[" + std::to_string(i) + "]";
      PciDevice d;
      std::string kind;
      long long node = -1, sw = -1;
      if (!get_string(e, "kind", &kind, error, where) || !get_string(e, "name", &d.name, error, where) ||
          !get_string(e, "bus_id", &d.bus_id, error, where, false) ||
          !get_int(e, "numa", -1, kMany, &node, error, where, false) ||
          !get_int(e, "switch", -1, kMany, &sw, error, where, false))
        return Status::invalid_arg;
      if (kind != "gpu" && kind != "nic") return fail(error, where + ": 'kind' must be \"gpu\" or \"nic\"");
      if (!numa_known(node)) return fail(error, where + ": no NUMA node " + std::to_string(node));
      d.kind = kind == "gpu" ? PciDevice::gpu : PciDevice::nic;
      d.numa = int(node);
      d.pci_switch = int(sw);
      t.devices.push_back(std::move(d));
    }
  }
  const int gpus = t.gpu_count();
  if (links) {
    for (size_t i = 0; i < links->size(); ++i) {
      const Json& e = (*links)[i];
      const std::string where = "links[" + std::to_string(i) + "]";
      GpuLink l;
      long long a = 0, b = 0, lanes = 0, perf_rank = -1;
      if (!get_int(e, "a", 0, gpus - 1, &a, error, where) || !get_int(e, "b", 0, gpus - 1, &b, error, where) ||
          !get_string(e, "kind", &l.kind, error, where) ||
          !get_int(e, "lanes", 0, 1024, &lanes, error, where, false) ||
          !get_int(e, "perf_rank", -1, 1024, &perf_rank, error, where, false))
        return Status::invalid_arg;
      if (a == b) return fail(error, where + ": a GPU cannot link to itself");
      if (l.kind != "nvlink" && l.kind != "pcie") return fail(error, where + ": 'kind' must be \"nvlink\" or \"pcie\"");
      l.a = int(a);
      l.b = int(b);
      l.lanes = int(lanes);
      l.perf_rank = int(perf_rank);
      t.links.push_back(std::move(l));
    }
  }
  t.gpu_link_source = "topology file";
  if (!get_string(doc, "gpu_link_source", &t.gpu_link_source, error, "topology", false)) return Status::invalid_arg;
  *out = std::move(t);
  return Status::ok;
}

std::string to_text(const NodeTopology& t) {
  std::string o = "node " + (t.hostname.empty() ? std::string("(unnamed)") : t.hostname) + " (" + t.source + "): " +
                  std::to_string(t.packages) + " package(s), " + std::to_string(t.cores) + " cores, " +
                  std::to_string(t.pus) + " PUs";
  for (size_t i = 0; i < t.caches.size(); ++i) o += (i ? ", L" : "; caches L") + std::to_string(i + 1) + " " + human_bytes(t.caches[i]);
  o += "\n";
  auto device_line = [&](const PciDevice& d, int gpu_index) {
    std::string l = "    ";
    l += d.kind == PciDevice::gpu ? "gpu " + std::to_string(gpu_index) + ": " : std::string("nic: ");
    l += d.name;
    if (!d.bus_id.empty()) l += " (" + d.bus_id + ")";
    if (d.pci_switch >= 0) l += ", behind PCIe switch " + std::to_string(d.pci_switch);
    return l + "\n";
  };
  auto devices_at = [&](int numa) {
    std::string l;
    int g = 0;
    for (const PciDevice& d : t.devices) {
      if (d.numa == numa) l += device_line(d, g);
      g += d.kind == PciDevice::gpu;
    }
    return l;
  };
  for (const NumaNode& n : t.numa) {
    o += "  NUMA " + std::to_string(n.id) + ": cpus " + n.cpus;
    if (n.memory_bytes) o += ", " + human_bytes(n.memory_bytes);
    o += "\n" + devices_at(n.id);
  }
  const std::string loose = devices_at(-1);
  if (!loose.empty()) o += "  devices without a known NUMA node:\n" + loose;
  if (!t.distances.empty()) {
    o += "  NUMA distances:";
    for (const auto& row : t.distances) {
      o += " [";
      for (size_t j = 0; j < row.size(); ++j) o += (j ? " " : "") + std::to_string(row[j]);
      o += "]";
    }
    o += "\n";
  }
  for (const GpuLink& l : t.links)
    o += "  link gpu " + std::to_string(l.a) + " - gpu " + std::to_string(l.b) + ": " + l.kind +
         (l.lanes ? " x" + std::to_string(l.lanes) : "") +
         (l.perf_rank >= 0 ? ", cuda performance rank " + std::to_string(l.perf_rank) : "") + "\n";
  if (!t.gpu_link_source.empty()) o += "  GPU links from: " + t.gpu_link_source + "\n";
  if (t.gpu_count()) {
    o += "  GPU islands:";
    for (const auto& island : t.gpu_islands()) {
      o += " {";
      for (size_t i = 0; i < island.size(); ++i) o += (i ? "," : "") + std::to_string(island[i]);
      o += "}";
    }
    o += "\n";
  } else {
    o += "  no GPUs\n";
  }
  return o;
}

std::string binding_advice(const NodeTopology& t, const Binding& b, int gpu_index, bool uses_network) {
  if (!b.bound || b.numa.empty()) return {};
  auto in_binding = [&](int numa) { return std::find(b.numa.begin(), b.numa.end(), numa) != b.numa.end(); };
  std::string nodes;
  for (size_t i = 0; i < b.numa.size(); ++i) nodes += (i ? "," : "") + std::to_string(b.numa[i]);
  std::vector<std::string> far;
  const PciDevice* g = gpu_index >= 0 ? t.gpu(gpu_index) : nullptr;
  if (g && g->numa >= 0 && !in_binding(g->numa))
    far.push_back("gpu " + std::to_string(gpu_index) + " (" + g->name + ") hangs off NUMA " + std::to_string(g->numa) +
                  ": every copy to and from it crosses the NUMA interconnect");
  // The NIC nearest the binding's cores, by NUMA distance (10 local, 20 remote without a matrix).
  // NICs of unknown place make the question unanswerable, so they silence it.
  auto distance = [&](int from, int to) -> unsigned {
    size_t i = t.numa.size(), j = t.numa.size();
    for (size_t k = 0; k < t.numa.size(); ++k) {
      if (t.numa[k].id == from) i = k;
      if (t.numa[k].id == to) j = k;
    }
    if (i < t.distances.size() && j < t.distances[i].size()) return t.distances[i][j];
    return from == to ? 10 : 20;
  };
  const PciDevice* nearest = nullptr;
  unsigned best = ~0u;
  bool nics_placed = true;
  for (const PciDevice& d : t.devices) {
    if (d.kind != PciDevice::nic) continue;
    nics_placed = nics_placed && d.numa >= 0;
    for (int n : b.numa)
      if (d.numa >= 0 && distance(n, d.numa) < best) {
        best = distance(n, d.numa);
        nearest = &d;
      }
  }
  if (uses_network && nics_placed && nearest && !in_binding(nearest->numa))
    far.push_back("the nearest NIC (" + nearest->name + ") hangs off NUMA " + std::to_string(nearest->numa) +
                  ": every message to another node crosses the NUMA interconnect");
  if (far.empty()) return {};
  std::string advice = "bound to cpus " + b.cpus + " (NUMA " + nodes + "), but " + far[0];
  for (size_t i = 1; i < far.size(); ++i) advice += "; and " + far[i];
  return advice + " (bind to the cores of the device's NUMA node, e.g. mpirun --map-by numa)";
}

}  // namespace weft::topo
