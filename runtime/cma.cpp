// cma_transfer (cma.h).
#include "runtime/cma.h"

#include <sys/uio.h>

#include <cerrno>

namespace weft {

size_t cma_transfer(int pid, bool write, void* local, uint64_t remote, size_t n) {
  size_t moved = 0;
  while (moved < n) {
    iovec l{static_cast<char*>(local) + moved, n - moved};
    iovec r{reinterpret_cast<void*>(remote + moved), n - moved};
    const ssize_t got = write ? process_vm_writev(pid_t(pid), &l, 1, &r, 1, 0) : process_vm_readv(pid_t(pid), &l, 1, &r, 1, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) errno = EFAULT;
      return moved;
    }
    moved += size_t(got);
  }
  return moved;
}

}  // namespace weft
