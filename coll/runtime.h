// A process's communication runtime under the MPI handles: its settings, the bootstrap, the
// progress engine, the request pool, the transport and what runs on it (buffered sends,
// requests freed while in flight, collectives in flight) and coll/'s settings; and the order in
// which MPI_Init starts it and MPI_Finalize ends it.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "coll/call.h"
#include "coll/settings.h"
#include "pmix/bootstrap.h"
#include "pt2pt/p2p.h"
#include "pt2pt/process_setup.h"
#include "pt2pt/request_pair.h"
#include "pt2pt/status_board.h"
#include "pt2pt/transport.h"
#include "runtime/config.h"
#include "runtime/progress.h"
#include "runtime/request.h"
#include "topo/topology.h"

namespace weft::coll {

struct Runtime {
  Config config;
  std::unique_ptr<Bootstrap> boot;
  Progress progress;
  RequestPool requests;
  std::unique_ptr<Transport> transport;
  // The node's topology: read at init only when WEFT_TOPO_FILE or WEFT_TOPO_DUMP asks for it.
  std::shared_ptr<const topo::NodeTopology> node_topology;
  std::vector<Request*> orphans;  // freed by the user while in flight: released on completion
  Progress::PollerId orphan_poller = 0;  // the poller that releases them, armed while there are any
  // The collectives in flight (advanced by a poller); plans are kept per communicator by coll.
  Calls coll_calls;
  std::shared_ptr<BufferedSends> bsend = std::make_shared<BufferedSends>();  // the process's (MPI_Buffer_attach)
  RequestPairs request_pairs;  // MPI_Isendrecv(_replace) in flight (advanced by a poller)
  Settings coll_settings;  // coll/'s settings, read at init (configure)
  // Collectives started and finished per communicator, read by peers of this host when a
  // collective times out.
  std::unique_ptr<StatusBoard> board;

  // MPI_Request_free (free_request): released now, or kept among the orphans until it completes.
  void free_request(Request* r);
};

// MPI_Init's first steps: the settings, read from the environment once (a KV agent made before
// MPI_Init may have read them first) and checked, where a malformed value fails the init; then
// start_process (this rank's CPUs in *cpus).
Status open_runtime(Runtime* rt, CpuSet* cpus);
// The next ones: start_transport, the staging cache's limit, and the pollers of the progress
// engine (requests freed while in flight, send-receive pairs and collectives in flight).
Status start_runtime(Runtime* rt, const CpuSet& cpus);
// MPI_Finalize's steps, in order: finish_process; release_before_transport, which hands memory
// to free once the transport is gone (registrations must go before UCX does); the transport, then
// that memory; the device resources (no staged transfer is in flight any more); the GPU
// collectives' workspaces (after the barrier: no peer reads them any more); the offload plugin
// (every leader has finished its offloaded operations); last the bootstrap's finalize, whose
// status is returned.
Status finish_runtime(Runtime& rt, const std::function<void(std::vector<void*>*)>& release_before_transport);

}  // namespace weft::coll
