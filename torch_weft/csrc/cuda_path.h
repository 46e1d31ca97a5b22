// CUDA tensors, stream-ordered. Every operation on CUDA tensors runs on the group's
// communication stream once its stream communicator exists: that stream first waits for the
// caller's current stream (an event, no host wait), the weft calls are enqueued on it, and the
// returned Work completes through an event recorded after them. Its future is CUDA-aware, so
// wait() and the future's callbacks make the waiter's stream wait, as NCCL's backend does.
// - Collectives weft has an *_enqueue call for (allreduce, broadcast, reduce, allgather,
//   reduce_scatter): `run`.
// - Point-to-point and the collectives built from it (gather, scatter, alltoall): `exchange`,
//   through MPIX_Isend_enqueue/MPIX_Irecv_enqueue and one MPIX_Waitall_enqueue. The host waits
//   only until each sender has issued its call (the message's header), never for the GPU.
//   A lone send's own wait is enqueued when its Work is first asked about (wait, is_completed,
//   its future, or its end), so isend then irecv on both sides of a pair does not deadlock.
//   batch_isend_irecv's sends and receives are one exchange (process_group.h holds them until
//   the coalescing block ends), so the order its Works are waited in does not matter (its
//   messages still match the peers' in the order each side lists them).
// CUDA graphs: the communication stream joins a capture on the caller's stream (through the
// event), so the weft calls are captured and replay as a graph (weft relaxes the capture mode
// for its own calls). Captured operations are not watched (their events are graph nodes); the
// watchdog queries in thread-local capture mode, so it never invalidates a capture in global
// mode. Every Work issued during a capture must be waited for inside it (CUDA requires the
// communication stream to rejoin the capture before it ends); a lone send's Work waited for
// after its capture ended fails, saying so (and warns when dropped unwaited). Lone sends
// deferred before a capture are settled before the stream joins it. Not supported: waiting
// inside a capture for a Work from before it; replays of a graph are not watched (a peer
// that dies during a replay is not reported).
// The stream communicator is made collectively: at group creation when every rank had CUDA
// initialised (torch.cuda.set_device), else at the first CUDA collective. Point-to-point on
// CUDA tensors before it exists runs on the communication thread (worker.h), which waits for
// the caller's stream (cuda_ready) and, after the operation, for its own (cuda_drain).
// A watchdog thread watches the oldest operation still on the stream: after a second it asks
// weft for failed members every 100 ms, and past the group's timeout it gives up. Either way it
// revokes the stream communicator (weft's kernels waiting on a dead peer end) and the group is
// broken: that Work and every later one raise, naming the dead rank.
// Builds without CUDA in PyTorch compile cuda_path_none.cpp: CUDA tensors are refused there.
#pragma once
#include <mpi.h>

#include <ATen/ATen.h>
#include <chrono>
#include <functional>
#include <memory>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

namespace torch_weft {

// Whether this build moves CUDA tensors.
bool cuda_path_built();

// One message of an exchange: `tensor` (contiguous) to or from group rank `peer`.
struct P2pMessage {
  bool send = false;
  at::Tensor tensor;
  int peer = 0;
  int tag = 0;
};

class CudaPath {
 public:
  // base: a communicator of the group's own, used by this path alone. eager_device >= 0 on
  // every rank: the stream communicator is made now on that device (collective over base;
  // the ranks agree first). timeout: the group's, for the watchdog.
  CudaPath(MPI_Comm base, int rank, int eager_device, std::chrono::milliseconds timeout);
  ~CudaPath();
  CudaPath(const CudaPath&) = delete;
  CudaPath& operator=(const CudaPath&) = delete;

  // Whether the stream communicator exists (point-to-point may then run on the stream).
  bool streaming() const;
  // The tag exchanges of gather, scatter and alltoall use; user messages may not use it.
  int reserved_tag() const;

  // Enqueues `enqueue` (an MPIX_*_enqueue call on the stream communicator it is given) in
  // stream order; `after` (may be null) runs PyTorch ops on the communication stream after it
  // (AVG's division). `touched`: every tensor the call reads or writes (kept from reuse by the
  // caching allocator until the stream is past them).
  c10::intrusive_ptr<c10d::Work> run(c10d::OpType type, const char* name, const std::vector<at::Tensor>& touched,
                                     std::vector<at::Tensor> outputs, const std::function<int(MPI_Comm)>& enqueue,
                                     const std::function<void()>& after = nullptr);
  // Enqueues the messages (receives posted first) and their completion, then `local` (copies
  // on the communication stream; may be null). A single send's completion is deferred (see
  // above). collective: every rank of the group makes this call (it may then make the stream
  // communicator); else streaming() must hold.
  c10::intrusive_ptr<c10d::Work> exchange(c10d::OpType type, const char* name, const std::vector<at::Tensor>& touched,
                                          std::vector<at::Tensor> outputs, std::vector<P2pMessage> messages, bool collective,
                                          const std::function<void()>& local = nullptr);
  // Waits for the communication stream, stops the watchdog, then frees the stream
  // communicator and `base`.
  void shutdown();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// For an operation run on the communication thread: null when no tensor is on a GPU; else a
// function that waits (on the calling thread) for an event recorded now on the caller's
// current stream of that GPU.
std::function<void()> cuda_ready(const std::vector<at::Tensor>& tensors);
// The function that waits for the calling thread's current stream of that GPU (null as above).
std::function<void()> cuda_drain(const std::vector<at::Tensor>& tensors);

}  // namespace torch_weft
