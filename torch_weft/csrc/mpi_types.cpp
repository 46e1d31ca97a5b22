// Tensor element types and reduction ops in MPI terms (mpi_types.h).
#include "mpi_types.h"

#include "cuda_path.h"

#include <c10/util/Exception.h>

namespace torch_weft {

MPI_Datatype mpi_datatype(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return MPI_FLOAT;
    case at::kDouble: return MPI_DOUBLE;
    case at::kHalf: return MPIX_C_FLOAT16;
    case at::kBFloat16: return MPIX_BFLOAT16;
    case at::kChar: return MPI_INT8_T;
    case at::kByte: return MPI_UINT8_T;
    case at::kShort: return MPI_INT16_T;
    case at::kInt: return MPI_INT32_T;
    case at::kLong: return MPI_INT64_T;
    case at::kBool: return MPI_C_BOOL;
    case at::kComplexFloat: return MPI_C_FLOAT_COMPLEX;
    case at::kComplexDouble: return MPI_C_DOUBLE_COMPLEX;
    default: break;
  }
  TORCH_CHECK(false, "weft backend: tensors of type ", at::toString(type), " are not supported");
}

MPI_Op mpi_op(const c10d::ReduceOp& op, at::ScalarType type) {
  const bool floating = at::isFloatingType(type) || at::isComplexType(type);
  if (type == at::kBool) {
    // As PyTorch's other backends: a sum or max of booleans is a logical or.
    switch (op) {
      case c10d::ReduceOp::SUM:
      case c10d::ReduceOp::MAX:
      case c10d::ReduceOp::BOR: return MPI_LOR;
      case c10d::ReduceOp::PRODUCT:
      case c10d::ReduceOp::MIN:
      case c10d::ReduceOp::BAND: return MPI_LAND;
      case c10d::ReduceOp::BXOR: return MPI_LXOR;
      default: break;
    }
  } else {
    switch (op) {
      case c10d::ReduceOp::SUM: return MPI_SUM;
      case c10d::ReduceOp::AVG:
        TORCH_CHECK(floating, "weft backend: AVG is supported on floating-point tensors only, not ",
                    at::toString(type));
        return MPI_SUM;
      case c10d::ReduceOp::PRODUCT: return MPI_PROD;
      case c10d::ReduceOp::MIN:
        TORCH_CHECK(!at::isComplexType(type), "weft backend: MIN of complex tensors is undefined");
        return MPI_MIN;
      case c10d::ReduceOp::MAX:
        TORCH_CHECK(!at::isComplexType(type), "weft backend: MAX of complex tensors is undefined");
        return MPI_MAX;
      case c10d::ReduceOp::BAND:
      case c10d::ReduceOp::BOR:
      case c10d::ReduceOp::BXOR:
        TORCH_CHECK(!floating, "weft backend: bitwise reductions need integer tensors, not ", at::toString(type));
        return op == c10d::ReduceOp::BAND ? MPI_BAND : op == c10d::ReduceOp::BOR ? MPI_BOR : MPI_BXOR;
      default: break;
    }
  }
  TORCH_CHECK(false, "weft backend: reduction op ", int(op), " is not supported (PREMUL_SUM is NCCL's)");
}

void check_tensor(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.layout() == at::kStrided, "weft backend: ", what, " must be a dense tensor");
  TORCH_CHECK(t.is_contiguous(), "weft backend: ", what, " must be contiguous");
  TORCH_CHECK(t.device().is_cpu() || (t.is_cuda() && cuda_path_built()), "weft backend: ", what, " is on ",
              t.device().str(), "; this build of the backend moves CPU tensors only");
}

}  // namespace torch_weft
