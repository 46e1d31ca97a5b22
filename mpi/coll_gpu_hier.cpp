// Blocking MPI_Allreduce, MPI_Bcast, MPI_Reduce, MPI_Allgather and MPI_Reduce_scatter(_block)
// on device buffers over a communicator that spans nodes: device stages inside each node, host
// staging between nodes.
//   allreduce  1. MPI_Reduce to the node's first rank on a node communicator (GPU-native:
//                 coll/gpu's workspace on that communicator);
//              2. the node leaders copy the result to host memory, allreduce it among
//                 themselves on a leader communicator (the host algorithms), and copy it back;
//              3. MPI_Bcast from the node's first rank on the node communicator (GPU-native).
//   bcast      1. MPI_Bcast from the root on the root's node communicator (GPU-native);
//              2. the leaders bcast a host copy from the root's node leader;
//              3. MPI_Bcast from the first rank on every other node (GPU-native).
//   reduce     1. MPI_Reduce to the first rank on every node but the root's, into a device
//                 buffer of the runtime's, and to the root itself on the root's node;
//              2. the leaders reduce host copies to the root's node leader;
//              3. on the root's node a leader that is not the root gets the node's partial
//                 from the root before step 2 and sends the total back after it (device to
//                 device).
//   allgather  1. MPI_Allgather of the node's blocks on the node communicator (GPU-native);
//              2. the leaders allgatherv host copies, lay them out in parent rank order and
//                 copy the whole result to the device;
//              3. MPI_Bcast of the whole result from the leader on each node (GPU-native).
//   reduce_scatter   the allreduce into a device buffer of the rank's, then its share.
// The two communicators, and where every rank sits, are made on the first such call
// (collective: every rank of the parent is in the call) and freed with the parent. A node of
// one rank skips its node stages.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "coll/gpu/gpu_coll.h"
#include "coll_call.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "runtime/staging.h"

namespace weft::mpi {

// What a parent communicator keeps (State::gpu_hier, by its context id).
struct GpuHier {
  MPI_Comm node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
  int node_rank = 0, node_size = 1, nodes = 1;
  // Per parent rank: its node's leader's rank on the leader communicator, its node rank.
  std::vector<int> node_of, rank_in_node;
  // This rank's device buffer for the stages (reduce: a leader's partial; allgather: the
  // node's blocks; reduce_scatter: the whole vector), kept between calls: a peer that reads it
  // through CUDA IPC then maps it once.
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
};

namespace {

// Below 256 KiB staging the whole call was faster on one H200 with two virtual nodes (one copy
// each way against three blocking calls); it stays the path there unless staging is forbidden.
constexpr size_t kHierMinBytes = size_t(256) << 10;

// This rank's scratch, at least `bytes` long.
Status device_scratch(GpuHier& h, size_t bytes, void** out) {
  if (h.scratch_bytes < bytes) {
    memkind_device_free(h.scratch);
    h.scratch = nullptr;
    h.scratch_bytes = 0;
    WEFT_TRY(memkind_device_alloc(bytes, &h.scratch));
    h.scratch_bytes = bytes;
  }
  *out = h.scratch;
  return Status::ok;
}

int make_levels(const char* fn, MPI_Comm comm, const Comm& c, GpuHier* h) {
  int rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &h->node);
  if (rc == MPI_SUCCESS) rc = PMPI_Comm_rank(h->node, &h->node_rank);
  if (rc == MPI_SUCCESS) rc = PMPI_Comm_size(h->node, &h->node_size);
  if (rc == MPI_SUCCESS) rc = PMPI_Comm_split(comm, h->node_rank == 0 ? 0 : MPI_UNDEFINED, c.rank, &h->leaders);
  int mine[2] = {0, h->node_rank};
  if (rc == MPI_SUCCESS && h->leaders != MPI_COMM_NULL) rc = PMPI_Comm_rank(h->leaders, &mine[0]);
  if (rc == MPI_SUCCESS) rc = PMPI_Bcast(mine, 1, MPI_INT, 0, h->node);
  std::vector<int> all(size_t(c.size) * 2);
  if (rc == MPI_SUCCESS) rc = PMPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm);
  if (rc != MPI_SUCCESS) return raise(comm, MPI_ERR_INTERN, fn, "splitting %s into node and leader communicators failed",
                                      c.label().c_str());
  for (int q = 0; q < c.size; ++q) {
    h->node_of.push_back(all[size_t(q) * 2]);
    h->rank_in_node.push_back(all[size_t(q) * 2 + 1]);
    h->nodes = std::max(h->nodes, h->node_of.back() + 1);  // known to every rank, not only leaders
  }
  if (Comm* n = lookup_comm(h->node)) n->name = c.label() + " (node)";
  if (Comm* l = h->leaders != MPI_COMM_NULL ? lookup_comm(h->leaders) : nullptr) l->name = c.label() + " (leaders)";
  return MPI_SUCCESS;
}

int levels(const char* fn, MPI_Comm comm, Comm& c, GpuHier** out) {
  auto it = g_state->gpu_hier.find(c.context_id);
  if (it == g_state->gpu_hier.end()) {
    auto h = std::make_shared<GpuHier>();
    if (int rc = make_levels(fn, comm, c, h.get()); rc != MPI_SUCCESS) return rc;
    it = g_state->gpu_hier.emplace(c.context_id, std::move(h)).first;
  }
  *out = it->second.get();
  if (log_first_time(std::string("gpu-hier:") + fn + c.label()))
    WEFT_INFO(Subsys::gpu,
              "%s on %s with device buffers across nodes: GPU-native stages within each node (%d ranks "
              "here), host staging between the node leaders",
              fn, c.label().c_str(), (*out)->node_size);
  return MPI_SUCCESS;
}

}  // namespace

bool gpu_hier_applies(const Comm& c, size_t bytes, std::initializer_list<const void*> bufs,
                      const coll::Reduction* red) {
  if (c.single_node || c.size < 2 || !cuda_state().usable) return false;
  if (bytes < kHierMinBytes && !g_state->require_fast_path) return false;
  configure_gpu_collectives();
  if (!coll::gpu::settings().enabled) return false;
  if (red && (red->user || !coll::gpu::supports(red->op, red->type))) return false;
  for (const void* b : bufs)
    if (!b || memkind_query(b).kind != MemKind::cuda_device) return false;
  return true;
}

int gpu_hier_allreduce(const char* fn, MPI_Comm comm, Comm& c, const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype dt, MPI_Op op, size_t bytes) {
  GpuHier* h = nullptr;
  if (int rc = levels(fn, comm, c, &h); rc != MPI_SUCCESS) return rc;
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

int gpu_hier_bcast(const char* fn, MPI_Comm comm, Comm& c, void* buf, int count, MPI_Datatype dt, int root,
                   void* first_byte, size_t bytes) {
  GpuHier* h = nullptr;
  if (int rc = levels(fn, comm, c, &h); rc != MPI_SUCCESS) return rc;
  const int root_node = h->node_of[size_t(root)];
  const bool roots_node = h->node_of[size_t(c.rank)] == root_node;
  int rc = MPI_SUCCESS;
  if (roots_node && h->node_size > 1 &&
      (rc = PMPI_Bcast(buf, count, dt, h->rank_in_node[size_t(root)], h->node)) != MPI_SUCCESS)
    return rc;
  if (h->leaders != MPI_COMM_NULL && h->nodes > 1 && bytes) {
    StagingBuffer host = staging_buffer(bytes);
    Status s = roots_node ? memkind_copy(host.get(), first_byte, bytes) : Status::ok;
    if (s != Status::ok) return raise_status(comm, s, fn);
    if ((rc = PMPI_Bcast(host.get(), int(bytes), MPI_BYTE, root_node, h->leaders)) != MPI_SUCCESS) return rc;
    if (!roots_node && (s = memkind_copy(first_byte, host.get(), bytes)) != Status::ok) return raise_status(comm, s, fn);
  }
  if (!roots_node && h->node_size > 1) rc = PMPI_Bcast(buf, count, dt, 0, h->node);
  return rc;
}

int gpu_hier_reduce(const char* fn, MPI_Comm comm, Comm& c, const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype dt, MPI_Op op, int root, ptrdiff_t offset, size_t bytes) {
  GpuHier* h = nullptr;
  if (int rc = levels(fn, comm, c, &h); rc != MPI_SUCCESS) return rc;
  const int root_node = h->node_of[size_t(root)], root_in_node = h->rank_in_node[size_t(root)];
  const bool roots_node = h->node_of[size_t(c.rank)] == root_node;
  const bool is_root = c.rank == root, leader = h->node_rank == 0;
  const bool in_place = sendbuf == MPI_IN_PLACE;  // the root's only
  const void* in = in_place ? recvbuf : sendbuf;
  // Where this node's partial lands: the root's buffer on its node, else a device buffer of
  // the leader's (the same extent as the user's, so count and dt describe it).
  void* partial = nullptr;
  if (roots_node ? is_root : leader) {
    if (is_root) {
      partial = recvbuf;
    } else {
      void* scratch = nullptr;
      if (Status s = device_scratch(*h, bytes, &scratch); s != Status::ok) return raise_status(comm, s, fn);
      partial = static_cast<char*>(scratch) - offset;
    }
  }
  const int node_root = roots_node ? root_in_node : 0;
  int rc = MPI_SUCCESS;
  if (h->node_size > 1) {
    const void* send = h->node_rank == node_root && in_place ? MPI_IN_PLACE : in;
    rc = PMPI_Reduce(send, partial, count, dt, op, node_root, h->node);
  } else if (partial && partial != in && bytes) {
    Status s = memkind_copy(static_cast<char*>(partial) + offset, static_cast<const char*>(in) + offset, bytes);
    if (s != Status::ok) return raise_status(comm, s, fn);
  }
  if (rc != MPI_SUCCESS || h->nodes < 2 || !bytes) return rc;
  // The leaders reduce host copies to the root's node leader. On the root's node the leader's
  // partial is the root's (it is the root) or is not on the leader: there the root sends its
  // node's partial to the leader first, and receives the total back.
  const int tag = 0;
  if (roots_node && root_in_node != 0) {
    if (is_root) {
      rc = PMPI_Send(partial, count, dt, 0, tag, h->node);
    } else if (leader) {
      void* scratch = nullptr;
      if (Status s = device_scratch(*h, bytes, &scratch); s != Status::ok) return raise_status(comm, s, fn);
      partial = static_cast<char*>(scratch) - offset;
      rc = PMPI_Recv(partial, count, dt, root_in_node, tag, h->node, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) return rc;
  }
  if (leader) {
    StagingBuffer host = staging_buffer(bytes), total = staging_buffer(bytes);
    Status s = memkind_copy(host.get(), static_cast<const char*>(partial) + offset, bytes);
    if (s != Status::ok) return raise_status(comm, s, fn);
    if ((rc = PMPI_Reduce(host.get() - offset, total.get() - offset, count, dt, op, root_node, h->leaders)) !=
        MPI_SUCCESS)
      return rc;
    if (roots_node && (s = memkind_copy(static_cast<char*>(partial) + offset, total.get(), bytes)) != Status::ok)
      return raise_status(comm, s, fn);
  }
  if (roots_node && root_in_node != 0) {
    if (is_root) rc = PMPI_Recv(recvbuf, count, dt, 0, tag, h->node, MPI_STATUS_IGNORE);
    else if (leader) rc = PMPI_Send(partial, count, dt, root_in_node, tag, h->node);
  }
  return rc;
}

int gpu_hier_allgather(const char* fn, MPI_Comm comm, Comm& c, const void* own, void* recv, size_t block) {
  GpuHier* h = nullptr;
  if (int rc = levels(fn, comm, c, &h); rc != MPI_SUCCESS) return rc;
  const size_t p = size_t(c.size), total = p * block;
  int rc = MPI_SUCCESS;
  // 1. The node's blocks, in node rank order, at every rank of the node (GPU-native).
  const char* node_blocks = static_cast<const char*>(own);
  if (h->node_size > 1) {
    void* scratch = nullptr;
    if (Status s = device_scratch(*h, size_t(h->node_size) * block, &scratch); s != Status::ok)
      return raise_status(comm, s, fn);
    if ((rc = PMPI_Allgather(own, int(block), MPI_BYTE, scratch, int(block), MPI_BYTE, h->node)) != MPI_SUCCESS)
      return rc;
    node_blocks = static_cast<const char*>(scratch);
  }
  // 2. The leaders gather every node's blocks on the host and lay them out in parent rank
  // order (a node's ranks need not be contiguous there).
  if (h->node_rank == 0) {
    std::vector<int> counts(size_t(h->nodes), 0), displs(size_t(h->nodes), 0);
    for (size_t q = 0; q < p; ++q) counts[size_t(h->node_of[q])] += int(block);
    for (size_t n = 1; n < counts.size(); ++n) displs[n] = displs[n - 1] + counts[n - 1];
    StagingBuffer mine = staging_buffer(size_t(h->node_size) * block), by_node = staging_buffer(total),
                  ordered = staging_buffer(total);
    Status s = memkind_copy(mine.get(), node_blocks, size_t(h->node_size) * block);
    if (s != Status::ok) return raise_status(comm, s, fn);
    if (h->nodes > 1) {
      if ((rc = PMPI_Allgatherv(mine.get(), int(size_t(h->node_size) * block), MPI_BYTE, by_node.get(), counts.data(),
                                displs.data(), MPI_BYTE, h->leaders)) != MPI_SUCCESS)
        return rc;
    } else {
      memcpy(by_node.get(), mine.get(), total);
    }
    for (size_t q = 0; q < p; ++q)
      memcpy(ordered.get() + q * block,
             by_node.get() + size_t(displs[size_t(h->node_of[q])]) + size_t(h->rank_in_node[q]) * block, block);
    if ((s = memkind_copy(recv, ordered.get(), total)) != Status::ok) return raise_status(comm, s, fn);
  }
  // 3. The whole result from the leader to the rest of the node (GPU-native).
  if (h->node_size > 1) rc = PMPI_Bcast(recv, int(total), MPI_BYTE, 0, h->node);
  return rc;
}

int gpu_hier_reduce_scatter(const char* fn, MPI_Comm comm, Comm& c, const void* in, void* out, size_t first,
                            size_t mine, int count, MPI_Datatype dt, MPI_Op op, size_t bytes) {
  GpuHier* h = nullptr;
  if (int rc = levels(fn, comm, c, &h); rc != MPI_SUCCESS) return rc;
  void* scratch = nullptr;
  if (Status s = device_scratch(*h, bytes, &scratch); s != Status::ok) return raise_status(comm, s, fn);
  if (int rc = gpu_hier_allreduce(fn, comm, c, in, scratch, count, dt, op, bytes); rc != MPI_SUCCESS) return rc;
  Status s = memkind_copy(out, static_cast<const char*>(scratch) + first, mine);
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, fn);
}

void release_gpu_hier(Comm& c) {
  auto it = g_state->gpu_hier.find(c.context_id);
  if (it == g_state->gpu_hier.end()) return;
  GpuHier* h = it->second.get();
  if (h->node != MPI_COMM_NULL) (void)PMPI_Comm_free(&h->node);
  if (h->leaders != MPI_COMM_NULL) (void)PMPI_Comm_free(&h->leaders);
  memkind_device_free(h->scratch);
  g_state->gpu_hier.erase(it);
}

}  // namespace weft::mpi
