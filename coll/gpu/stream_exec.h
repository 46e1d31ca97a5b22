// Stream-ordered collectives on a user's CUDA stream (MPIX_Allreduce_enqueue, Bcast_enqueue,
// Allgather_enqueue, Reduce_scatter_block_enqueue), and the stream communicator's agreement
// (what it carries: pt2pt/stream_comm.h).
//
// A call runs stream-native (enqueued on the user's stream, no host wait) when one shared check
// passes: every rank on one node with the workspace usable and its flag kernels allowed
// (agreed when the communicator was made), contiguous datatypes, device buffers, and for the
// two reductions a predefined op on a predefined type the kernels reduce. On a communicator of
// one rank it is a stream-ordered copy (or nothing). Every rank must answer alike, or the ranks
// that enqueue flag barriers wait on the GPU for ranks that took the fallback: the
// communicator's part was agreed by every rank, the op and a reduction's datatype are the same
// on every rank (MPI requires it), and contiguity and memory kinds rest on the rule the
// blocking GPU-native collectives have too: every rank passes device memory, in contiguous
// datatypes.
#pragma once
#include <string>

#include "coll/coll.h"
#include "pt2pt/stream_comm.h"

namespace weft::coll::gpu {

// At creation, collectively over ctx.comm: agrees whether every rank passed a GPU stream
// (sc->stream.gpu) and, if so on one node, makes the communicator's GPU workspace now (a
// cudaMalloc, which stream capture forbids later) and agrees whether CUDA IPC of user buffers
// works on every rank. Logs the outcome at INFO.
Status prepare_stream_comm(const CollContext& ctx, StreamComm* sc);

// One stream-ordered collective call, its buffers at their first bytes (contiguous: every
// datatype of the call lays its data out as one run). In place: coll/gpu's forms (allgather:
// send == recv + rank * bytes; reduce_scatter_block: send == recv, the input in recv); bcast:
// send == recv, the buffer.
struct StreamCall {
  Collective coll = Collective::allreduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t bytes = 0;       // this rank's result: the vector (allreduce, bcast) or one block
  size_t count = 0;       // reductions: elements of red.type in this rank's result
  bool reduction = false;
  Reduction red{};
  bool predefined_type = true;  // the reduction's datatype is predefined
  int root = 0;                 // bcast, reduce
  bool contiguous = true;
  bool empty = false;  // nothing to move: done at once
};

// The calls as the bindings describe them (arguments checked; buffers at the first element).
// A reduction of `count` elements of type per rank's result over `ranks` blocks (allreduce: 1,
// reduce_scatter_block: the communicator's size), reduce_count / ranks elements of red.type
// each; in: the input (recv in place).
StreamCall stream_reduction(const void* in, void* recv, const Datatype* type, size_t count, size_t ranks,
                            size_t reduce_count, const Reduction& red);
// The same reduction (ranks 1) as a reduce to root: this rank's result only at the root.
StreamCall stream_reduce(StreamCall call, int root, int rank);
StreamCall stream_bcast(const Datatype* type, void* buf, size_t count, int root);
// Allgather of `count` elements of rtype per rank into recv; stype null: in place (this rank's
// block already in recv).
StreamCall stream_allgather(const Datatype* rtype, void* recv, size_t count, const Datatype* stype, const void* send,
                            size_t scount, const Comm& c);

// Enqueues the call on the user's stream when it can run stream-native (route native; the
// choice logged at INFO once per communicator, call and algorithm; an empty call is done at
// once); else route fallback and its reason. fn names the call in logs. While the stream is
// being captured into a CUDA graph, an allreduce that runs as fused pieces registers its
// buffers first, and so does one of WEFT_GPU_AUTO_REGISTER_MIN bytes or more
// (register_call_buffers: collective, on the host).
Status stream_collective(const char* fn, const StreamComm& sc, const CollContext& ctx, const StreamCall& call,
                         StreamRoute* route);

}  // namespace weft::coll::gpu
