// Each rank's record of the collectives it started and finished on each communicator, kept in a
// small shared-memory file of its own that only it writes. When a collective times out
// (WEFT_TIMEOUT), the waiting rank reads the files of the members on its host: the diagnosis
// does not travel through the path that is stuck. Kept only while WEFT_TIMEOUT is set (the file
// is made at the first collective): without it nothing reads the board, and a default job makes
// no file.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "pmix/bootstrap.h"
#include "pt2pt/comm.h"

namespace weft {

class ShmSegment;

class StatusBoard {
 public:
  explicit StatusBoard(Bootstrap& boot);
  ~StatusBoard();
  StatusBoard(const StatusBoard&) = delete;
  StatusBoard& operator=(const StatusBoard&) = delete;

  // Collective number n (counted per communicator from 1) started / finished on c, named op.
  void enter(const Comm& c, const char* op);
  void leave(const Comm& c, bool failed = false);
  // Why a collective on c that this rank waits in does not finish: the members that never
  // arrived (started fewer collectives on c than this rank) and each member's last collective,
  // e.g. "collective #6 on MPI_COMM_WORLD: ranks that never arrived: 3; last collective by
  // rank: 0 #6 MPI_Allreduce (waiting), ..., 3 #5 MPI_Allreduce (finished)". Members on other
  // hosts are "not readable from this host".
  std::string describe_stall(const Comm& c);

  struct Record {
    bool known = false;     // the member's file was readable
    uint32_t started = 0;   // collectives started on the communicator
    uint32_t finished = 0;  // and finished
    uint32_t failed = 0;    // the last one that returned an error
    std::string op;         // the last one started
  };
  // A member's record for the communicator of context `context` (job rank).
  Record read(int job_rank, uint32_t context);

 private:
  struct Page;
  bool open();  // makes this rank's file on first use; false if it cannot
  int entry_of(const Comm& c);
  Bootstrap& boot_;
  std::unique_ptr<ShmSegment> own_;
  Page* page_ = nullptr;
  bool unavailable_ = false;
};

}  // namespace weft
