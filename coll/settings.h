// coll/'s settings, read from the config registry (runtime/config.h) once at init by
// coll::configure and reached by the algorithms and the call machinery through
// CollContext::settings (or, for a GPU workspace, the copy it was made with).
#pragma once
#include <string>

#include "coll/coll.h"
#include "coll/gpu/gpu_coll.h"
#include "coll/offload/offload.h"
#include "coll/shm/segment.h"
#include "coll/tune.h"

namespace weft {
class Bootstrap;
class Config;
}  // namespace weft

namespace weft::coll {

struct Settings {
  CostModel model;                 // WEFT_COLL_MODEL: measured at init or from a tuning file
  Tuning tuning;                   // WEFT_COLL_TUNE
  bool dump = false;               // WEFT_COLL_DUMP
  bool check_calls = false;        // WEFT_COLL_CHECK (call_check.h)
  bool require_fast_path = false;  // WEFT_REQUIRE_FAST_PATH
  shm::Geometry shm;               // WEFT_COLL_SHM_SLOT, WEFT_COLL_SHM_SEGMENT, WEFT_COLL_SHM_SLOTS
  gpu::Settings gpu;               // WEFT_GPU_COLL, WEFT_GPU_COLL_*, WEFT_GPU_ALLREDUCE_*
  offload::Options offload;        // WEFT_OFFLOAD, WEFT_OFFLOAD_PLUGIN, WEFT_OFFLOAD_* costs
};

// Reads coll/'s settings from cfg into *out, once at init, after the world communicator
// exists: parses WEFT_COLL_TUNE, loads or measures the cost model (collective over `world`
// under WEFT_COLL_MODEL=calibrate), loads the offload plugin and logs the model at INFO. A
// malformed setting fails with its message in the error detail.
Status configure(const Config& cfg, Transport& t, Bootstrap& boot, const Comm& world, Settings* out);

// The GPU collectives' part of cfg (what configure stores in Settings::gpu).
gpu::Settings gpu_settings(const Config& cfg);

}  // namespace weft::coll
