// What starting and ending an MPI process does below the bindings: logging and the transport's
// options from the settings, the wait policy from the bindings of the host's ranks, the
// communicator views of the predefined communicators, and requests freed while in flight.
#pragma once
#include <cstdint>
#include <vector>

#include "pmix/bootstrap.h"
#include "pt2pt/comm.h"
#include "pt2pt/transport.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/progress.h"

namespace weft {

// WEFT_DEBUG, WEFT_DEBUG_SUBSYS, WEFT_DEBUG_FILE; Status::invalid_arg (detail set) for an
// unknown subsystem.
Status log_settings(const Config& cfg, LogSettings* out);

// Until every rank's binding is known (after the transport's exchange), waits yield at once
// when this host's ranks outnumber the CPUs this rank may use. Publishes this rank's CPUs
// (*cpus) for configure_wait_policy.
Status start_wait_policy(const Config& cfg, Bootstrap& boot, Progress& progress, CpuSet* cpus);
// WEFT_WAIT_POLICY: auto decides from the bindings of every rank on this host (published in the
// modex), so ranks bound to a core each spin and ranks sharing CPUs yield.
void configure_wait_policy(const Config& cfg, Bootstrap& boot, const CpuSet& mine, Progress& progress);

TransportOptions transport_options(const Config& cfg, const Bootstrap& boot);

// The view of MPI_COMM_WORLD (self false) or MPI_COMM_SELF on context pair `context`.
Comm predefined_comm(Bootstrap& boot, uint32_t context, bool self);
// The node id of each job rank (empty if the bootstrap cannot tell).
std::vector<uint32_t> node_ids(Bootstrap& boot, const std::vector<int>& world_ranks);

// Releases the requests of *orphans (freed by the user while in flight) that have completed,
// running their finish step first (a freed receive still delivers its data); how many.
int release_orphans(RequestPool& pool, std::vector<Request*>* orphans);

}  // namespace weft
