// Shared-memory segments (files under /dev/shm), made one way for every layer: named after the
// job, created with their pages reserved, mapped by the other processes of the node, and
// unlinked as soon as every process that needs one has it mapped. From the moment its name is
// known until it is unlinked, a segment's name is tracked by its job (ShmJob), which removes
// what is still tracked at finalize, at abort and when the launcher is gone: a job, even one
// whose ranks die, leaves nothing in /dev/shm.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "log.h"
#include "status.h"

namespace weft {

// Names the job's segments and keeps the list of those not yet unlinked. The bootstrap knows
// the job; pt2pt/shm.h adapts it.
class ShmJob {
 public:
  // A name that carries the job's id, so that no other job's file has it: "/weft-KIND-JOB-REST".
  virtual std::string name(std::string_view kind, std::string_view rest) const = 0;
  // created: this process makes the file (the launcher may remove it at the job's end too).
  virtual void track(const std::string& name, bool created) = 0;
  virtual void untrack(const std::string& name) = 0;
  // A name no other segment of the job has: its maker's id (rank or pid), then a random part.
  std::string unique_name(std::string_view kind, long maker) const;

 protected:
  ~ShmJob() = default;
};

// What a segment is for, as its errors say it.
struct ShmUse {
  Subsys subsys;                         // where its errors are logged
  const char* what;                      // "collectives", "a shared window"
  const char* hint = nullptr;            // what to lower when /dev/shm is full
  Status when_full = Status::transport;  // the status of a /dev/shm without room
};

class ShmSegment {
 public:
  // Names a segment; its job tracks the name from now on. creator: this process makes the file.
  ShmSegment(ShmJob& job, std::string name, bool creator, const ShmUse& use);
  // Unmaps it; a name not yet unlinked stays tracked (finalize removes it).
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Makes the file, zeroed, and maps it. Every page is reserved now: a /dev/shm that runs out
  // later would kill a process with SIGBUS instead. replace_stale: a file of the same name (left
  // by a process of this job that died) is replaced; otherwise it is an error. On failure the
  // name is no longer tracked (a file made here is removed).
  Status create(size_t bytes, bool replace_stale = false);
  // Maps the file another process made. may_wait: Status::pending, not an error, while the file
  // does not exist yet or is still shorter than bytes.
  Status attach(size_t bytes, bool may_wait = false);
  // Removes the name (the mappings stay) and stops tracking it.
  void unlink();
  // Stops tracking the name: another process removes it.
  void forget();

  char* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  const std::string& name() const { return name_; }
  bool tracked() const { return tracked_; }

 private:
  Status fail(const std::string& msg, Status kind = Status::transport) const;
  Status map(int fd, size_t bytes);

  ShmJob& job_;
  std::string name_;
  ShmUse use_;
  char* data_ = nullptr;
  size_t bytes_ = 0;
  bool tracked_ = true;
};

}  // namespace weft
