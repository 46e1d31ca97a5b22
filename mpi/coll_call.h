// Shared by the collective bindings (coll.cpp, coll_data.cpp): an MPI collective call handed
// to coll's call machinery (coll/call.h: buffer lay-out, packing, planning, the plan cache and
// the runs in flight), with the errors it returns raised on the communicator, and the request
// handle of a non-blocking or persistent call.
#pragma once
#include <initializer_list>
#include <memory>
#include <vector>

#include "coll/call.h"
#include "state.h"

namespace weft::mpi {

using CollMode = coll::Mode;
using Piece = coll::Piece;
using CollPlanKey = coll::PlanKey;

class CollCall {
 public:
  CollCall(const char* fn, MPI_Comm comm, Comm* c, CollMode mode)
      : fn_(fn), comm_(comm), c_(c), mode_(mode), call_(coll_context(*c), mode) {}

  // See coll::Call.
  char* input(const std::vector<Piece>& pieces, std::vector<coll::Block>* blocks, bool force_pack = false) {
    return call_.input(pieces, blocks, force_pack);
  }
  char* output(const std::vector<Piece>& pieces, std::vector<coll::Block>* blocks, int prepack = -1) {
    return call_.output(pieces, blocks, prepack);
  }
  void keep(std::shared_ptr<const void> object) { call_.keep(std::move(object)); }

  // Plans the call (a blocking one is remembered under *key when given); MPI_SUCCESS or the
  // raised error.
  int plan(const coll::CollArgs& args, const CollPlanKey* key = nullptr);
  // Nothing to do (e.g. a zero-count reduction): completes at once in every mode.
  void plan_nothing(const CollPlanKey* key = nullptr) { call_.plan_nothing(key); }
  // A blocking call identical to an earlier one reuses its schedule (true: planned).
  bool reuse(const CollPlanKey& key) { return call_.reuse(key); }

  // Runs the planned call; *request receives the request of a non-blocking or persistent one.
  int execute(MPI_Request* request);

  const Comm& comm() const { return *c_; }
  CollMode mode() const { return mode_; }

 private:
  const char* fn_;
  MPI_Comm comm_;
  Comm* c_;
  CollMode mode_;
  coll::Call call_;
};

// Argument checks shared by the bindings: MPI_SUCCESS or the raised error code.
int check_coll_comm(const char* fn, MPI_Comm comm, Comm** c);
int check_coll_request(const char* fn, MPI_Comm comm, CollMode mode, MPI_Request* request);
int check_root(const char* fn, MPI_Comm comm, const Comm& c, int root);
int check_count(const char* fn, MPI_Comm comm, int count, const char* arg);

// coll/gpu's settings from the config registry, once per process (before the first GPU-native
// collective or stream-ordered call).
void configure_gpu_collectives();

// Blocking allreduce, bcast and reduce on device buffers over a communicator spanning nodes
// (coll_gpu_hier.cpp): GPU-native stages within each node, host staging between the node
// leaders. Whether a call takes this path: every buffer in bufs is device memory, the
// reduction (if any) has a GPU kernel, and the vector has at least 256 KiB (any size under
// WEFT_REQUIRE_FAST_PATH). Every rank must decide alike (pass device memory).
bool gpu_hier_applies(const Comm& c, size_t bytes, std::initializer_list<const void*> bufs,
                      const coll::Reduction* red);
// sendbuf may be MPI_IN_PLACE; bytes: the contiguous extent of the vector.
int gpu_hier_allreduce(const char* fn, MPI_Comm comm, Comm& c, const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype dt, MPI_Op op, size_t bytes);
// first_byte: buf's first byte of data (contiguous), bytes of them.
int gpu_hier_bcast(const char* fn, MPI_Comm comm, Comm& c, void* buf, int count, MPI_Datatype dt, int root,
                   void* first_byte, size_t bytes);
// sendbuf may be MPI_IN_PLACE at the root; the data of count x dt start `offset` bytes into
// the buffers and span `bytes`.
int gpu_hier_reduce(const char* fn, MPI_Comm comm, Comm& c, const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype dt, MPI_Op op, int root, ptrdiff_t offset, size_t bytes);
// Allgather of `block` bytes per rank: own is this rank's block (in place: its place in recv),
// recv the p blocks back to back (p * block at most INT_MAX).
int gpu_hier_allgather(const char* fn, MPI_Comm comm, Comm& c, const void* own, void* recv, size_t block);
// Reduce_scatter(_block) of count x dt (contiguous, `bytes` in all): an allreduce of the whole
// vector into a device buffer of this rank's, then this rank's share (`mine` bytes from byte
// `first`) copied to out.
int gpu_hier_reduce_scatter(const char* fn, MPI_Comm comm, Comm& c, const void* in, void* out, size_t first,
                            size_t mine, int count, MPI_Datatype dt, MPI_Op op, size_t bytes);
// Frees the node and leader communicators the gpu_hier_* calls split off c, if any.
void release_gpu_hier(Comm& c);

}  // namespace weft::mpi
