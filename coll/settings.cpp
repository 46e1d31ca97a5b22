// coll::configure: coll/'s settings from the config registry, once at init.
#include "coll/settings.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "pmix/bootstrap.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/op_gpu.h"

namespace weft::coll {

namespace {

// weft_offload_node_info::setting: the plugin's settings (WEFT_AGGD_* for the aggd plugin) are
// registered here and read from the process's snapshot, like every other WEFT_* variable.
const char* offload_setting(const char* name) {
  const Config& cfg = process_config();
  if (!name || !cfg.is_set(name)) return nullptr;
  return cfg.value(name).data();  // a std::string of the snapshot: NUL-terminated, never freed
}

// The in-network offload plugin (WEFT_OFFLOAD, WEFT_OFFLOAD_PLUGIN), with its cost parameters.
offload::Options offload_options(const Config& cfg) {
  offload::Options o;
  const std::string_view mode = cfg.value("WEFT_OFFLOAD");
  o.mode = mode == "off" ? offload::Mode::off : mode == "require" ? offload::Mode::require : offload::Mode::automatic;
  o.plugin = std::string(cfg.value("WEFT_OFFLOAD_PLUGIN"));
  auto number = [&](const char* name, double fallback) {
    const std::string text(cfg.value(name));
    char* end = nullptr;
    const double v = strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != 0 || !(v >= 0)) {
      WEFT_WARN(Subsys::offload, "%s=%s is not a non-negative number; %g is used", name, text.c_str(), fallback);
      return fallback;
    }
    return v;
  };
  o.cost.hop_us = number("WEFT_OFFLOAD_HOP_US", o.cost.hop_us);
  o.hop_given = cfg.is_set("WEFT_OFFLOAD_HOP_US");
  o.cost.fragment_us = number("WEFT_OFFLOAD_FRAGMENT_US", o.cost.fragment_us);
  o.cost.radix = int(std::max<int64_t>(2, cfg.integer("WEFT_OFFLOAD_RADIX")));
  return o;
}

Status load_offload(const offload::Options& o, Bootstrap& boot, const Comm& world) {
  std::vector<uint32_t> nodes = world.nodes;
  std::sort(nodes.begin(), nodes.end());
  const weft_offload_node_info node{sizeof(weft_offload_node_info), boot.job_id().c_str(), boot.rank(), boot.size(),
                                    boot.node_id(),
                                    uint32_t(std::unique(nodes.begin(), nodes.end()) - nodes.begin()),
                                    boot.hostname().c_str(), offload_setting};
  return offload::load(o, node);
}


void log_model(const CostModel& m) {
  WEFT_INFO(Subsys::coll,
            "cost model: alpha %.2f us, beta %.3f us/KiB, gamma %.3f us/KiB, gap %.3f us; within a "
            "node: alpha %.2f us, beta %.3f us/KiB; between nodes: alpha %.2f us, beta %.3f us/KiB "
            "(0: unknown); shared memory: alpha %.3f us, beta %.3f us/KiB (%s)",
            m.alpha_us, m.beta_us_per_byte * 1024, m.gamma_us_per_byte * 1024, m.gap_us,
            m.node_alpha_us, m.node_beta_us_per_byte * 1024, m.net_alpha_us,
            m.net_beta_us_per_byte * 1024, m.shm_alpha_us, m.shm_beta_us_per_byte * 1024, m.source);
}

}  // namespace

gpu::Settings gpu_settings(const Config& cfg) {
  gpu::Settings s;
  s.enabled = cfg.value("WEFT_GPU_COLL") != "off";
  s.scratch_bytes = cfg.size("WEFT_GPU_COLL_SCRATCH");
  s.two_shot_min = cfg.size("WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN");
  s.direct_min = cfg.size("WEFT_GPU_ALLREDUCE_DIRECT_MIN");
  const std::string_view fused = cfg.value("WEFT_GPU_FUSED");
  s.fused_min = fused == "off" ? SIZE_MAX : fused == "on" ? kFusedMaxBytes + 1
                                                      : std::max(cfg.size("WEFT_GPU_FUSED_MIN"), kFusedMaxBytes + 1);
  s.fused_split_min = cfg.size("WEFT_GPU_FUSED_SPLIT_MIN");
  s.auto_register_min = cfg.size("WEFT_GPU_AUTO_REGISTER_MIN");
  s.gather_kernel_max = cfg.size("WEFT_GPU_GATHER_KERNEL_MAX");
  s.reduce_scatter_kernel_max = cfg.size("WEFT_GPU_REDUCE_SCATTER_KERNEL_MAX");
  s.reduce_scatter_direct_min = cfg.size("WEFT_GPU_REDUCE_SCATTER_DIRECT_MIN");
  s.reduce_scatter_fused_min = cfg.size("WEFT_GPU_REDUCE_SCATTER_FUSED_MIN");
  s.wait_on_stream = cfg.value("WEFT_GPU_WAIT_QUERY") == "stream";
  s.wait_spin_ns = uint64_t(std::max<int64_t>(0, cfg.integer("WEFT_GPU_WAIT_SPIN_US"))) * 1000;
  const std::string_view mode = cfg.value("WEFT_GPU_COLL_MODE");
  s.mode = mode == "kernels" ? gpu::Mode::kernels : mode == "copy_engine" ? gpu::Mode::copy_engine : gpu::Mode::automatic;
  return s;
}

Status configure(const Config& cfg, Transport& t, Bootstrap& boot, const Comm& world, Settings* out) {
  std::string error;
  if (Tuning::parse(cfg.value("WEFT_COLL_TUNE"), &out->tuning, &error) != Status::ok) {
    set_error_detail(error);
    return Status::invalid_arg;
  }
  const std::string_view model = cfg.value("WEFT_COLL_MODEL");
  if (model != "calibrate" && load_cost_model(std::string(model).c_str(), &out->model, &error) != Status::ok) {
    set_error_detail(error);
    return Status::invalid_arg;
  }
  out->dump = cfg.boolean("WEFT_COLL_DUMP");
  out->check_calls = cfg.boolean("WEFT_COLL_CHECK");
  out->require_fast_path = cfg.boolean("WEFT_REQUIRE_FAST_PATH");
  out->shm.slot_bytes = cfg.size("WEFT_COLL_SHM_SLOT");
  out->shm.segment_bytes = std::max<size_t>(cfg.size("WEFT_COLL_SHM_SEGMENT"), 4096);
  out->shm.slots = uint32_t(std::max<int64_t>(cfg.integer("WEFT_COLL_SHM_SLOTS"), 2));
  out->gpu = gpu_settings(cfg);
  if (model == "calibrate") {
    if (Status s = calibrate(t, world, &out->model); s != Status::ok) return s;
  }
  out->offload = offload_options(cfg);
  if (Status s = load_offload(out->offload, boot, world); s != Status::ok) return s;
  log_model(out->model);
  return Status::ok;
}

}  // namespace weft::coll
