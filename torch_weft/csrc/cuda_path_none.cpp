// Builds whose PyTorch has no CUDA: no tensor reaches the GPU paths (check_tensor refuses CUDA
// tensors first); these say so if one does.
#include <c10/util/Exception.h>

#include "cuda_path.h"

namespace torch_weft {

namespace {

[[noreturn]] void refuse() {
  TORCH_CHECK(false, "weft backend: this build moves CPU tensors only (its PyTorch has no CUDA)");
}

bool any_cuda(const std::vector<at::Tensor>& tensors) {
  for (const at::Tensor& t : tensors)
    if (t.is_cuda()) return true;
  return false;
}

}  // namespace

struct CudaPath::State {};

bool cuda_path_built() { return false; }

CudaPath::CudaPath(MPI_Comm base, int, int, std::chrono::milliseconds) {
  if (base != MPI_COMM_NULL) MPI_Comm_free(&base);
}

CudaPath::~CudaPath() = default;

c10::intrusive_ptr<c10d::Work> CudaPath::run(c10d::OpType, const char*, const std::vector<at::Tensor>&,
                                             std::vector<at::Tensor>, const std::function<int(MPI_Comm)>&,
                                             const std::function<void()>&) {
  refuse();
}

c10::intrusive_ptr<c10d::Work> CudaPath::exchange(c10d::OpType, const char*, const std::vector<at::Tensor>&,
                                                  std::vector<at::Tensor>, std::vector<P2pMessage>, bool,
                                                  const std::function<void()>&) {
  refuse();
}

bool CudaPath::streaming() const { return false; }

int CudaPath::reserved_tag() const { return -1; }

void CudaPath::shutdown() {}

std::function<void()> cuda_ready(const std::vector<at::Tensor>& tensors) {
  if (any_cuda(tensors)) refuse();
  return nullptr;
}

std::function<void()> cuda_drain(const std::vector<at::Tensor>& tensors) {
  if (any_cuda(tensors)) refuse();
  return nullptr;
}

}  // namespace torch_weft
