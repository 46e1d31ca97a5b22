// What differs between the PyTorch versions the backend builds against: 1.13 (Debian 12's)
// derives backends from c10d::ProcessGroup, 2.x from c10d::Backend (a ProcessGroup holds one
// per device type).
#pragma once
#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
namespace torch_weft {
using BackendBase = c10d::Backend;
}
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
namespace torch_weft {
using BackendBase = c10d::ProcessGroup;
}
#endif
