// CUDA tensors. Collectives that weft has a stream-ordered call for (MPIX_*_enqueue: allreduce,
// broadcast, reduce, allgather into a tensor, reduce_scatter into a tensor) run on the group's
// communication stream: that stream first waits for the caller's current stream (an event, no
// host wait), the call is enqueued on it, and the returned Work completes through an event
// recorded after it. Its future is CUDA-aware, so wait() and the future's callbacks make the
// waiter's stream wait, as NCCL's backend does; the host never blocks.
// Every other operation on CUDA tensors runs on the communication thread (worker.h), which
// first waits for an event of the caller's stream (cuda_ready) and, after the operation's
// finish step, for its own stream (cuda_drain).
// Builds without CUDA in PyTorch compile cuda_path_none.cpp: CUDA tensors are refused there.
#pragma once
#include <mpi.h>

#include <ATen/ATen.h>
#include <functional>
#include <memory>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

namespace torch_weft {

// Whether this build moves CUDA tensors.
bool cuda_path_built();

class CudaPath {
 public:
  // base: a communicator of the group's own, used by this path alone (made with the group, so
  // its stream communicator can be made at the first CUDA collective, collective over it).
  CudaPath(MPI_Comm base, int rank);
  ~CudaPath();
  CudaPath(const CudaPath&) = delete;
  CudaPath& operator=(const CudaPath&) = delete;

  // Enqueues `enqueue` (an MPIX_*_enqueue call on the stream communicator it is given) in
  // stream order; `after` (may be null) runs PyTorch ops on the communication stream after it
  // (AVG's division). `touched`: every tensor the call reads or writes (kept from reuse by the
  // caching allocator until the stream is past them).
  c10::intrusive_ptr<c10d::Work> run(c10d::OpType type, const char* name, const std::vector<at::Tensor>& touched,
                                     std::vector<at::Tensor> outputs, const std::function<int(MPI_Comm)>& enqueue,
                                     const std::function<void()>& after = nullptr);
  // Waits for the communication stream, then frees the stream communicator and `base`.
  void shutdown();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// For an operation run on the communication thread: null when no tensor is on a GPU; else a
// function that waits (on the calling thread) for an event recorded now on the caller's
// current stream of that GPU.
std::function<void()> cuda_ready(const std::vector<at::Tensor>& tensors);
// The function that waits for the calling thread's current stream of that GPU (null as above).
std::function<void()> cuda_drain(const std::vector<at::Tensor>& tensors);

}  // namespace torch_weft
