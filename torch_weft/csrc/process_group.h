// torch.distributed's process-group backend "weft": every operation is an MPI call on the
// group's communicator, made on the group's communication thread (worker.h), so the caller
// returns at once with a Work that completes (with its future) when the MPI requests have.
//
// Tensors: dense and contiguous, on the CPU, or on one GPU where PyTorch has CUDA (cuda_path.h:
// stream-ordered on the group's communication stream).
#pragma once
#include <mpi.h>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

#include "compat.h"
#include "cuda_path.h"
#include "worker.h"

namespace torch_weft {

// A Work completed by the communication thread; its future holds the operation's output
// tensors, or the error.
class WeftWork : public c10d::Work {
 public:
  WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs);
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  int sourceRank() const override { return *source_; }
  // On the communication thread, once: success (null) or the error.
  void complete(std::exception_ptr error);
  // The sender's group rank (recv; recvAnysource sets it when the message has arrived).
  std::shared_ptr<std::atomic<int>> source_ = std::make_shared<std::atomic<int>>(-1);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// One Work over several: the operations issued between startCoalescing and endCoalescing, or
// the pairs of a *_tensor_coalesced call. Complete when all are; wait() waits for each. Its
// future is the one operation's where there is one (a batch_isend_irecv on CUDA tensors).
class CoalescedWork : public c10d::Work {
 public:
  CoalescedWork(int rank, std::vector<c10::intrusive_ptr<c10d::Work>> works);
  bool isCompleted() override;
  bool wait(std::chrono::milliseconds timeout) override;
  void synchronize() override;
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  std::vector<c10::intrusive_ptr<c10d::Work>> works_;
};

// Where the sends and receives of one coalescing block on CUDA tensors find the Work of the
// exchange that carries them all, once the block has ended (or why there is none).
struct BatchSlot {
  std::mutex mutex;
  c10::intrusive_ptr<c10d::Work> work;
  std::exception_ptr error;
};

// A block's held sends and receives and their Works' slot (made with the first message).
struct HeldBatch {
  std::vector<P2pMessage> messages;
  std::shared_ptr<BatchSlot> slot;
};

// A send or receive on CUDA tensors issued inside a coalescing block (batch_isend_irecv): it
// runs with the block's others as one exchange when the block ends, and waits for it then.
// Waited for before that exchange is issued, it raises; until then it is not complete.
class BatchedWork : public c10d::Work {
 public:
  BatchedWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::shared_ptr<BatchSlot> slot);
  bool isCompleted() override;
  bool wait(std::chrono::milliseconds timeout) override { return exchange()->wait(timeout); }
  void synchronize() override { exchange()->synchronize(); }
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return exchange()->getFuture(); }

 private:
  // The exchange's Work, or null before it is issued; raises if issuing it failed.
  c10::intrusive_ptr<c10d::Work> issued();
  c10::intrusive_ptr<c10d::Work> exchange();
  std::vector<at::Tensor> outputs_;
  std::shared_ptr<BatchSlot> slot_;
};

class ProcessGroupWeft : public BackendBase {
 public:
  // comm: the group's own communicator (freed with the group). cuda_device: the CUDA device
  // this rank has set up (torch.cuda.set_device), or -1 (cuda_path.h).
  ProcessGroupWeft(MPI_Comm comm, int rank, int size, std::chrono::milliseconds timeout, int cuda_device = -1);
  ~ProcessGroupWeft() override;
  const std::string getBackendName() const override { return "weft"; }

  // Stops the communication thread and frees the communicator (before MPI_Finalize).
  void shutdown();

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits,
                                               std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
#if TORCH_VERSION_MAJOR >= 2
  // PyTorch 2.x's coalescing (batch_isend_irecv on CUDA tensors, _coalescing_manager with a
  // device): collectives run as they are issued; sends and receives on the communication stream
  // are held and issued together as one exchange (receives posted first, one completion) when
  // the block ends or before the next other operation. endCoalescing gives back one Work over
  // them all. 1.13's no-op defaults already run each operation alone.
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 6
  // batch_isend_irecv coalesces only on backends that say they can (PyTorch 2.6 on).
  bool supportsCoalescing() const override { return true; }
#endif
  void startCoalescing() override { begin_coalescing(); }
  c10::intrusive_ptr<c10d::Work> endCoalescing() override { return end_coalescing(); }
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) override;
#endif

 private:
  using Start = std::function<int(std::vector<MPI_Request>*)>;
  using Finish = std::function<void(const std::vector<MPI_Status>&)>;
  // Submits one operation; outputs are the Work's result tensors, inputs the others it reads
  // (for CUDA tensors: the thread first waits for the caller's stream).
  c10::intrusive_ptr<WeftWork> submit(c10d::OpType type, const char* name, std::vector<at::Tensor> outputs,
                                      std::chrono::milliseconds timeout, Start start, Finish finish = nullptr,
                                      std::shared_ptr<std::atomic<int>> source = nullptr,
                                      const std::vector<at::Tensor>& inputs = {});
  // Both reduce_scatter forms: `in` holds size blocks of out's count back to back.
  c10::intrusive_ptr<c10d::Work> reduce_scatter_block(c10d::OpType type, const char* name,
                                                    std::vector<at::Tensor> outputs, at::Tensor in, at::Tensor out,
                                                    const c10d::ReduceScatterOptions& opts);
  std::chrono::milliseconds timeout_of(std::chrono::milliseconds requested) const;
  // Coalescing: while on, every Work made is also kept; end_coalescing gives them back as one.
  void keep(const c10::intrusive_ptr<c10d::Work>& work);
  void begin_coalescing();
  c10::intrusive_ptr<c10d::Work> end_coalescing();
  // While coalescing, a stream-ordered send or receive joins the block's batch: its Work, else
  // null (not coalescing; the caller issues it now).
  c10::intrusive_ptr<c10d::Work> batch(c10d::OpType type, const P2pMessage& message);
  // Issues the held batch before another operation (its Work kept), so operations keep the
  // order they were issued in.
  void issue_held_batch();
  // One exchange for a block's sends and receives; its Work is handed to theirs (slot).
  c10::intrusive_ptr<c10d::Work> issue_batch(HeldBatch held);
  // One operation per (output, input) pair, as one Work (the *_tensor_coalesced forms).
  c10::intrusive_ptr<c10d::Work> each_pair(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const char* what,
      const std::function<c10::intrusive_ptr<c10d::Work>(at::Tensor&, at::Tensor&)>& one);
  // cuda_->run, the Work kept while coalescing.
  c10::intrusive_ptr<c10d::Work> run_cuda(c10d::OpType type, const char* name, const std::vector<at::Tensor>& touched,
                                          std::vector<at::Tensor> outputs, const std::function<int(MPI_Comm)>& enqueue,
                                          const std::function<void()>& after = nullptr);
  // cuda_->exchange, the Work kept while coalescing.
  c10::intrusive_ptr<c10d::Work> exchange_cuda(c10d::OpType type, const char* name,
                                               const std::vector<at::Tensor>& touched, std::vector<at::Tensor> outputs,
                                               std::vector<P2pMessage> messages, bool collective,
                                               const std::function<void()>& local = nullptr);
  // Whether point-to-point on these tensors runs on the communication stream (CUDA tensors
  // once the stream communicator exists); says once when CUDA tensors cannot yet.
  bool stream_p2p(const at::Tensor& t, const char* what);
  // alltoall(_single) on CUDA tensors: counts and displacements in elements of the flat tensors.
  c10::intrusive_ptr<c10d::Work> alltoall_cuda(c10d::OpType type, const char* name, at::Tensor in, at::Tensor out,
                                               const std::vector<int>& send_counts,
                                               const std::vector<int>& send_displs,
                                               const std::vector<int>& recv_counts,
                                               const std::vector<int>& recv_displs);
  void check_user_tag(int tag) const;
  const at::Tensor& single(std::vector<at::Tensor>& tensors, const char* what) const;

  MPI_Comm comm_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<CudaPath> cuda_;  // collectives on CUDA tensors
  std::mutex coalesce_mutex_;
  bool coalescing_ = false;
  std::vector<c10::intrusive_ptr<c10d::Work>> coalesced_;
  HeldBatch held_;  // this block's sends and receives, not issued yet
};

}  // namespace torch_weft
