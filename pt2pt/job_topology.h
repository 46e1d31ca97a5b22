// The node topology at init (WEFT_TOPO_FILE, WEFT_TOPO_DUMP, the binding report at INFO).
#pragma once
#include <memory>

#include "pmix/bootstrap.h"
#include "runtime/config.h"
#include "runtime/status.h"
#include "topo/topology.h"

namespace weft {

// Reads the node's topology when asked for: from WEFT_TOPO_FILE, for WEFT_TOPO_DUMP (written
// once the job's ranks have exchanged their places: collective over the job), or for INFO
// logging of the topo subsystem; reports the binding and warns when it is far from the rank's
// GPU. *out stays empty when nothing asked for it or the machine cannot be read.
// Status::invalid_arg (detail set) for an unusable WEFT_TOPO_FILE.
Status load_job_topology(const Config& cfg, Bootstrap& boot, std::shared_ptr<const topo::NodeTopology>* out);

}  // namespace weft
