// Shared by the collective bindings (coll.cpp, coll_data.cpp): turning an MPI collective call
// into a schedule, and running that schedule blocking, non-blocking or persistently.
//
// A call's buffers are described per rank as pieces (pointer, count, datatype). Contiguous
// pieces are used in place; otherwise the call packs its inputs into scratch memory in a first
// round and unpacks its outputs in a last one, around the algorithm's rounds, so every
// datatype works in every mode.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "coll/schedule.h"
#include "state.h"

namespace weft::mpi {

enum class CollMode { blocking, nonblocking, persistent };

struct Piece {
  const void* buf = nullptr;
  size_t count = 0;
  const Datatype* type = nullptr;
};

class CollCall {
 public:
  CollCall(const char* fn, MPI_Comm comm, Comm* c) : fn_(fn), comm_(comm), c_(c) {}

  // Lays out one side of the call; returns the base its blocks' offsets refer to. Inputs are
  // packed before the algorithm runs, outputs unpacked after it. `prepack`: an output piece
  // that also holds this rank's input (in place) and is packed first. `force_pack`: always
  // copy into scratch (in-place alltoall reads its input from there).
  char* input(const std::vector<Piece>& pieces, std::vector<coll::Block>* blocks, bool force_pack = false);
  char* output(const std::vector<Piece>& pieces, std::vector<coll::Block>* blocks, int prepack = -1);

  // Keeps an object alive as long as the schedule.
  void keep(std::shared_ptr<const void> object) { kept_.push_back(std::move(object)); }

  // Plans the algorithm for `args` and wraps it with the packing rounds.
  int plan(const coll::CollArgs& args);
  // An empty schedule (e.g. a zero-count reduction): completes at once in every mode.
  void plan_nothing();

  // Runs the planned call in `mode`; *request receives the request for the non-blocking and
  // persistent modes.
  int execute(CollMode mode, MPI_Request* request);

  // Blocking calls: reuse the schedule of an identical earlier call (true: planned), or
  // remember this call's schedule once planned. No-ops in the other modes.
  bool reuse(CollMode mode, const CollPlanKey& key);
  void remember(CollMode mode, const CollPlanKey& key);

  const Comm& comm() const { return *c_; }

 private:
  char* lay_out(const std::vector<Piece>& pieces, std::vector<coll::Block>* blocks, bool is_input,
                bool force_pack, int prepack);
  // Whether a GPU device piece may be staged through host memory; raises the error if not.
  bool staging_allowed(bool contiguous);
  int error_ = MPI_SUCCESS;  // raised while laying out; plan() returns it
  const char* fn_;
  MPI_Comm comm_;
  Comm* c_;
  coll::Schedule& outer();  // made on first use: cached and contiguous calls never need it
  std::shared_ptr<coll::Schedule> outer_;
  std::vector<std::function<Status()>> pre_, post_;
  std::vector<std::shared_ptr<const void>> kept_;
  std::shared_ptr<coll::Schedule> planned_;
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

// Keeps a derived datatype alive as long as the schedule that uses it.
std::shared_ptr<const void> hold_type(const Datatype* d);

}  // namespace weft::mpi
