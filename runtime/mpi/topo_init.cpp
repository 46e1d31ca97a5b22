// The node topology at init. Reading it costs milliseconds (tens with PCI devices), so it is
// read only when asked for: WEFT_TOPO_FILE (use a described node), WEFT_TOPO_DUMP (write what
// this job sees), or INFO logging of the topo subsystem (report each rank's binding).
#include <cstdio>

#include "runtime/core/log.h"
#include "state.h"

namespace weft::mpi {

bool init_topology(State& st) {
  const Config& cfg = st.config;
  const Bootstrap& boot = *st.boot;
  const std::string file(cfg.value("WEFT_TOPO_FILE")), dump(cfg.value("WEFT_TOPO_DUMP"));
  const bool report = log_enabled(LogLevel::info, Subsys::topo);
  if (file.empty() && dump.empty() && !report) return true;

  auto t = std::make_shared<topo::NodeTopology>();
  std::string error;
  Status s = file.empty() ? topo::load_machine(!dump.empty(), t.get(), &error) : topo::load_file(file, t.get(), &error);
  if (s != Status::ok) {
    const std::string msg = "WEFT_TOPO_FILE: " + error;
    if (!file.empty()) {
      set_error_detail(msg);
      return false;
    }
    WEFT_WARN(Subsys::topo, "cannot read this node's topology: %s", error.c_str());
    return true;
  }
  topo::Binding binding;
  if (topo::current_binding(&binding, &error) != Status::ok) binding.cpus = "unknown (" + error + ")";
  // Without CUDA device selection yet, a rank is taken to use GPU local_rank mod GPUs.
  const int gpus = t->gpu_count();
  const int gpu = gpus ? boot.local_rank() % gpus : -1;
  std::string numa;
  for (size_t i = 0; i < binding.numa.size(); ++i) numa += (i ? "," : "") + std::to_string(binding.numa[i]);
  WEFT_INFO(Subsys::topo, "%s; rank %d %s cpus %s (NUMA %s)%s", t->source.c_str(), boot.rank(),
            binding.bound ? "bound to" : "not bound, may run on", binding.cpus.c_str(), numa.c_str(),
            gpu >= 0 ? (", gpu " + std::to_string(gpu)).c_str() : "");
  const std::string advice = topo::binding_advice(*t, binding, gpu);
  if (!advice.empty()) WEFT_WARN(Subsys::topo, "rank %d is %s", boot.rank(), advice.c_str());

  if (!dump.empty() && (dump.find("%r") != std::string::npos || boot.local_rank() == 0)) {
    std::string json = topo::to_json(*t);
    // This rank's place in the job, after the node's own fields (readers of topology files
    // ignore it).
    std::string job = "  \"job\": {\"rank\": " + std::to_string(boot.rank()) + ", \"node_id\": " +
                      std::to_string(boot.node_id()) + ", \"local_rank\": " + std::to_string(boot.local_rank()) +
                      ", \"local_ranks\": [";
    for (size_t i = 0; i < boot.local_peers().size(); ++i) job += (i ? ", " : "") + std::to_string(boot.local_peers()[i]);
    job += "], \"binding\": ";
    topo::json_quote(binding.cpus, &job);
    job += ", \"gpu\": " + std::to_string(gpu) + "}\n}\n";
    json.resize(json.rfind('\n', json.size() - 2));  // drop the closing brace line
    json += ",\n" + job;
    const std::string path = expand_file_pattern(dump, boot.rank());
    if (FILE* f = fopen(path.c_str(), "w")) {
      fputs(json.c_str(), f);
      fclose(f);
      WEFT_INFO(Subsys::topo, "topology written to %s", path.c_str());
    } else {
      WEFT_WARN(Subsys::topo, "WEFT_TOPO_DUMP: cannot write %s", path.c_str());
    }
  }
  st.node_topology = std::move(t);
  return true;
}

}  // namespace weft::mpi
