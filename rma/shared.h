// The memory of a shared window (MPI_Win_allocate_shared): one POSIX shared-memory segment
// per window, made by one rank of the node and mapped by every other; each rank's part lies
// at its prefix offset, so the parts are contiguous across ranks as MPI expects.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "runtime/status.h"

namespace weft {
class Bootstrap;
class BootstrapShmJob;
class ShmSegment;
}

namespace weft::rma {

class SharedSegment {
 public:
  // Makes a segment of `bytes` (at least one page), named after the job for the others to open.
  // Its name is tracked by the bootstrap until unlinked, so that it never outlives the job.
  static Status create(Bootstrap& boot, size_t bytes, std::unique_ptr<SharedSegment>* out);
  // Maps the segment another rank made (tracked too: if its maker dies first, the others remove it).
  static Status open(Bootstrap& boot, const std::string& name, size_t bytes, std::unique_ptr<SharedSegment>* out);
  ~SharedSegment();
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  // Removes the name once every rank has mapped the segment (the mappings stay).
  void unlink();
  char* data() const;
  const std::string& name() const;

 private:
  explicit SharedSegment(Bootstrap& boot);
  std::unique_ptr<BootstrapShmJob> job_;
  std::unique_ptr<ShmSegment> file_;  // runtime/shm_segment.h
  bool owner_ = false;                // made it: removes the name
};

}  // namespace weft::rma
