// Blocking MPI_Allreduce on device buffers over a communicator that spans nodes: device stages
// inside each node, host staging between nodes.
//   1. MPI_Reduce to the node's first rank on a node communicator (GPU-native: coll/gpu's
//      workspace on that communicator);
//   2. the node leaders copy the result to host memory, allreduce it among themselves on a
//      leader communicator (the host algorithms), and copy it back;
//   3. MPI_Bcast from the node's first rank on the node communicator (GPU-native).
// The two communicators are split off on the first such call (collective: every rank of the
// parent is in the call) and freed with the parent. A node of one rank skips steps 1 and 3.
#include <cstring>

#include "coll/gpu/gpu_coll.h"
#include "coll_call.h"
#include "runtime/core/log.h"
#include "runtime/core/memkind.h"
#include "runtime/core/staging.h"

namespace weft::mpi {

namespace {

// What a parent communicator keeps (Comm::mpi_gpu_hier).
struct GpuHier {
  MPI_Comm node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
  int node_rank = 0, node_size = 1, nodes = 1;
};

int make_levels(const char* fn, MPI_Comm comm, const Comm& c, GpuHier* h) {
  int rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &h->node);
  if (rc == MPI_SUCCESS) rc = PMPI_Comm_rank(h->node, &h->node_rank);
  if (rc == MPI_SUCCESS) rc = PMPI_Comm_size(h->node, &h->node_size);
  if (rc == MPI_SUCCESS) rc = PMPI_Comm_split(comm, h->node_rank == 0 ? 0 : MPI_UNDEFINED, c.rank, &h->leaders);
  if (rc == MPI_SUCCESS && h->leaders != MPI_COMM_NULL) rc = PMPI_Comm_size(h->leaders, &h->nodes);
  if (rc != MPI_SUCCESS) return raise(comm, MPI_ERR_INTERN, fn, "splitting %s into node and leader communicators failed",
                                      c.name.c_str());
  if (Comm* n = lookup_comm(h->node)) n->name = c.name + " (node)";
  if (Comm* l = h->leaders != MPI_COMM_NULL ? lookup_comm(h->leaders) : nullptr) l->name = c.name + " (leaders)";
  return MPI_SUCCESS;
}

}  // namespace

int gpu_hier_allreduce(const char* fn, MPI_Comm comm, Comm& c, const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype dt, MPI_Op op, size_t bytes) {
  if (!c.mpi_gpu_hier) {
    auto h = std::make_shared<GpuHier>();
    if (int rc = make_levels(fn, comm, c, h.get()); rc != MPI_SUCCESS) return rc;
    c.mpi_gpu_hier = h;
  }
  const auto* h = static_cast<const GpuHier*>(c.mpi_gpu_hier.get());
  if (log_first_time("gpu-hier:" + c.name))
    WEFT_INFO(Subsys::gpu,
              "%s on %s with device buffers across nodes: reduce and bcast GPU-native within each node "
              "(%d ranks here), host staging between the node leaders",
              fn, c.name.c_str(), h->node_size);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  int rc = MPI_SUCCESS;
  if (h->node_size > 1) {
    const void* in = in_place ? (h->node_rank == 0 ? MPI_IN_PLACE : recvbuf) : sendbuf;
    rc = PMPI_Reduce(in, recvbuf, count, dt, op, 0, h->node);
  } else if (!in_place && bytes) {
    Status s = memkind_copy(recvbuf, sendbuf, bytes);
    if (s != Status::ok) return raise_status(comm, s, fn);
  }
  if (rc != MPI_SUCCESS) return rc;
  if (h->leaders != MPI_COMM_NULL && h->nodes > 1 && bytes) {
    StagingBuffer host = staging_buffer(bytes);
    Status s = memkind_copy(host.get(), recvbuf, bytes);
    if (s != Status::ok) return raise_status(comm, s, fn);
    if ((rc = PMPI_Allreduce(MPI_IN_PLACE, host.get(), count, dt, op, h->leaders)) != MPI_SUCCESS) return rc;
    if ((s = memkind_copy(recvbuf, host.get(), bytes)) != Status::ok) return raise_status(comm, s, fn);
  }
  if (h->node_size > 1) rc = PMPI_Bcast(recvbuf, count, dt, 0, h->node);
  return rc;
}

void release_gpu_hier(Comm& c) {
  if (!c.mpi_gpu_hier) return;
  auto* h = static_cast<GpuHier*>(c.mpi_gpu_hier.get());
  if (h->node != MPI_COMM_NULL) (void)PMPI_Comm_free(&h->node);
  if (h->leaders != MPI_COMM_NULL) (void)PMPI_Comm_free(&h->leaders);
  c.mpi_gpu_hier.reset();
}

}  // namespace weft::mpi
