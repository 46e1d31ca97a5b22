// What starting and ending an MPI process does below the bindings: logging and the transport's
// options from the settings, the wait policy from the bindings of the host's ranks, the
// communicator views of the predefined communicators, and requests freed while in flight.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pmix/bootstrap.h"
#include "pt2pt/comm.h"
#include "pt2pt/job_topology.h"
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

// The bindings the other ranks of this host published at start (start_wait_policy); a rank that
// published none is taken to share every CPU.
std::vector<CpuSet> host_peer_bindings(Bootstrap& boot);
TransportOptions transport_options(const Config& cfg, const Bootstrap& boot);

// The view of MPI_COMM_WORLD (self false) or MPI_COMM_SELF on context pair `context`, with its
// name and MPI handle.
Comm predefined_comm(Bootstrap& boot, uint32_t context, bool self, const char* name, int handle);
// The node id of each job rank (empty if the bootstrap cannot tell).
std::vector<uint32_t> node_ids(Bootstrap& boot, const std::vector<int>& world_ranks);

// MPI_Init's first steps, in order: logging from the settings (lines name the rank once the
// bootstrap knows it), the bootstrap, the wait policy until every rank's binding is known (this
// rank's CPUs in *cpus), and CUDA: the probe, the IPC cache, the staging chunk (before the
// transport reads it).
Status start_process(const Config& cfg, Progress& progress, std::unique_ptr<Bootstrap>* boot, CpuSet* cpus);
// Applies WEFT_TIMEOUT (checked by start_process) once MPI_Init's own waits are over.
void start_wait_timeout();
// The next ones: the node topology (when the settings ask for it), the transport, then the wait
// policy from the bindings of the host's ranks.
Status start_transport(const Config& cfg, Bootstrap& boot, Progress& progress, RequestPool& requests,
                       const CpuSet& cpus, std::shared_ptr<const topo::NodeTopology>* topology,
                       std::unique_ptr<Transport>* transport);
// MPI_Finalize's first steps: buffered sends (bsend_pending) delivered, the requests the user
// freed while in flight (orphans, released by a progress poller as they complete) completed,
// the transport quiesced (peers may still wait for cells queued here), this rank's exit
// announced, the launcher's barrier (skipped after a known failure; it gives up when a rank
// dies in it), then every tracked shared-memory file unlinked. The launcher's barrier does not
// progress messages: a freed receive must match here, before it, for its sender to finish.
void finish_process(Bootstrap& boot, Transport& t, const std::vector<Request*>& bsend_pending,
                    const std::vector<Request*>& orphans);
// Once the transport is gone: the CUDA IPC mappings (their use logged) and device staging.
void release_device_resources();

// What MPI_INFO_ENV says of this process, in order: maxprocs, host, wdir, thread_level (the
// name given), mpi_memory_alloc_kinds.
std::vector<std::pair<std::string, std::string>> process_info(const Bootstrap& boot, const char* thread_level);

// Releases the requests of *orphans (freed by the user while in flight) that have completed,
// running their finish step first (a freed receive still delivers its data); how many.
int release_orphans(RequestPool& pool, std::vector<Request*>* orphans);
// A request its user frees (MPI_Request_free): released at once when no operation is in flight
// (complete, or an inactive persistent request), else marked and kept in *orphans.
void free_request(RequestPool& pool, std::vector<Request*>* orphans, Request* r);

}  // namespace weft
