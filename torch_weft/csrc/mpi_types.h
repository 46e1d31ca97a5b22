// How tensors and PyTorch's reduction ops map onto MPI datatypes and operations.
#pragma once
#include <ATen/ATen.h>
#include <mpi.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

namespace torch_weft {

// The MPI datatype of a tensor's elements; throws for a type weft cannot move.
MPI_Datatype mpi_datatype(at::ScalarType type);

// The MPI operation that reduces `type` as `op` does. AVG reduces as a sum (the caller divides);
// PREMUL_SUM, and bitwise ops on floating types, throw (not supported).
MPI_Op mpi_op(const c10d::ReduceOp& op, at::ScalarType type);

// The tensor must be dense and contiguous, on the CPU (CUDA tensors: see process_group.h).
void check_tensor(const at::Tensor& t, const char* what);

}  // namespace torch_weft
