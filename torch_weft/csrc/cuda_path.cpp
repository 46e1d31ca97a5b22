// The CUDA path (cuda_path.h), built where PyTorch has CUDA.
#include "cuda_path.h"

#include <ATen/core/ivalue.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include <mutex>
#include <optional>

#include "worker.h"

namespace torch_weft {

namespace {

// A Work of the communication stream: complete once the stream is past `done_`.
class CudaWork : public c10d::Work {
 public:
  CudaWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, const c10::cuda::CUDAStream& stream)
      : c10d::Work(rank, type), outputs_(std::move(outputs)), device_(stream.device_index()),
        future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                         std::vector<c10::Device>{stream.device()})) {
    done_.record(stream);
    // Completed now, with the communication stream current: the future records its own event
    // there, and whoever waits on it waits on the device.
    c10::cuda::CUDAStreamGuard guard(stream);
    future_->markCompleted(c10::IValue(outputs_));
  }
  bool isCompleted() override { return done_.query(); }
  // Stream semantics: the caller's current stream waits; the host does not.
  bool wait(std::chrono::milliseconds) override {
    synchronize();
    return true;
  }
  void synchronize() override { done_.block(c10::cuda::getCurrentCUDAStream(device_)); }
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::DeviceIndex device_;
  at::cuda::CUDAEvent done_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

const at::Tensor* first_cuda(const std::vector<at::Tensor>& tensors) {
  for (const at::Tensor& t : tensors)
    if (t.is_cuda()) return &t;
  return nullptr;
}

}  // namespace

bool cuda_path_built() { return true; }

struct CudaPath::State {
  MPI_Comm base = MPI_COMM_NULL;
  int rank = 0;
  std::mutex mutex;  // calls may come from several threads (autograd's, the caller's)
  // Made at the first CUDA collective:
  c10::DeviceIndex device = -1;
  cudaStream_t raw = nullptr;
  std::optional<c10::cuda::CUDAStream> stream;
  MPIX_Stream mpix = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // the stream communicator

  // Collective over base: every rank makes its stream communicator at its first CUDA collective.
  void ensure(c10::DeviceIndex d) {
    if (comm != MPI_COMM_NULL) {
      TORCH_CHECK(d == device, "weft backend: the CUDA tensors of a process group must be on one device; this one "
                  "runs on cuda:", int(device), ", got a tensor on cuda:", int(d));
      return;
    }
    TORCH_CHECK(base != MPI_COMM_NULL, "weft backend: the process group was shut down");
    c10::cuda::CUDAGuard guard(d);
    TORCH_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking) == cudaSuccess,
                "weft backend: could not create the communication stream on cuda:", int(d));
    device = d;
    stream = c10::cuda::getStreamFromExternal(raw, d);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "cudaStream_t");
    MPIX_Info_set_hex(info, "value", &raw, int(sizeof(raw)));
    int rc = MPIX_Stream_create(info, &mpix);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) rc = MPIX_Stream_comm_create(base, mpix, &comm);
    TORCH_CHECK(rc == MPI_SUCCESS, "weft backend: making the stream communicator failed on rank ", rank, ": ",
                mpi_error_text(rc));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
};

CudaPath::CudaPath(MPI_Comm base, int rank) : state_(std::make_unique<State>()) {
  state_->base = base;
  state_->rank = rank;
}

CudaPath::~CudaPath() { shutdown(); }

c10::intrusive_ptr<c10d::Work> CudaPath::run(c10d::OpType type, const char* name,
                                             const std::vector<at::Tensor>& touched, std::vector<at::Tensor> outputs,
                                             const std::function<int(MPI_Comm)>& enqueue,
                                             const std::function<void()>& after) {
  const at::Tensor* like = first_cuda(touched);
  TORCH_CHECK(like, "weft backend: ", name, ": no CUDA tensor");
  std::lock_guard<std::mutex> lock(state_->mutex);
  State& s = *state_;
  s.ensure(like->device().index());
  const c10::cuda::CUDAStream& comm_stream = *s.stream;
  at::cuda::CUDAEvent ready;
  ready.record(c10::cuda::getCurrentCUDAStream(s.device));
  ready.block(comm_stream);
  for (const at::Tensor& t : touched)
    if (t.defined() && t.is_cuda()) c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), comm_stream);
  c10::cuda::CUDAStreamGuard guard(comm_stream);
  const int rc = enqueue(s.comm);
  TORCH_CHECK(rc == MPI_SUCCESS, "weft backend: ", name, " on CUDA tensors failed on rank ", s.rank, ": ",
              mpi_error_text(rc));
  if (after) after();
  return c10::make_intrusive<CudaWork>(s.rank, type, std::move(outputs), comm_stream);
}

void CudaPath::shutdown() {
  if (!state_) return;
  std::lock_guard<std::mutex> lock(state_->mutex);
  State& s = *state_;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (s.raw) cudaStreamSynchronize(s.raw);
  if (!finalized) {
    if (s.comm != MPI_COMM_NULL) MPI_Comm_free(&s.comm);
    if (s.mpix != MPIX_STREAM_NULL) MPIX_Stream_free(&s.mpix);
    if (s.base != MPI_COMM_NULL) MPI_Comm_free(&s.base);
  }
  s.comm = s.base = MPI_COMM_NULL;
  s.mpix = MPIX_STREAM_NULL;
  // The stream itself is left to the process's end: Works and futures may still name it.
}

std::function<void()> cuda_ready(const std::vector<at::Tensor>& tensors) {
  const at::Tensor* like = first_cuda(tensors);
  if (!like) return nullptr;
  auto ready = std::make_shared<at::cuda::CUDAEvent>();
  ready->record(c10::cuda::getCurrentCUDAStream(like->device().index()));
  return [ready] { ready->synchronize(); };
}

std::function<void()> cuda_drain(const std::vector<at::Tensor>& tensors) {
  const at::Tensor* like = first_cuda(tensors);
  if (!like) return nullptr;
  const c10::DeviceIndex d = like->device().index();
  return [d] { c10::cuda::getCurrentCUDAStream(d).synchronize(); };
}

}  // namespace torch_weft
