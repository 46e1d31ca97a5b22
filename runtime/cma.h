// Cross-memory attach: moving bytes between this process and a node peer's memory with
// process_vm_readv / process_vm_writev.
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft {

// Moves n bytes between local and the address remote in process pid (write: local to remote),
// resuming where the kernel stopped: one call moves at most MAX_RW_COUNT (just under 2 GiB),
// and a signal may cut it short. Returns the bytes moved; fewer than n only with errno set
// (EFAULT where a call moved nothing and gave no reason).
size_t cma_transfer(int pid, bool write, void* local, uint64_t remote, size_t n);

}  // namespace weft
