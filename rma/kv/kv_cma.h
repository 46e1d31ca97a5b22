// Copies between this process and another process on the same host with cross-memory attach
// (process_vm_writev / process_vm_readv): the fastest path between host regions of two agents
// on one host, where UCX would emulate RMA through active messages and need the target's
// progress. Jobs run in order on one thread per agent, so posting never waits for the copy.
#pragma once
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace weft::kv {

// Whether this process may read the memory of process pid at address (one byte): the kernel's
// ptrace rules decide (same user, Yama scope); *why says why not.
bool cma_usable(pid_t pid, uint64_t address, int* error);

class CmaEngine {
 public:
  struct Job {
    pid_t pid = 0;
    bool write = true;
    std::vector<iovec> local, remote;  // the same number of bytes in each, block by block
    size_t bytes = 0;
    std::atomic<bool> done{false};
    int error = 0;  // errno of a failed copy, once done
  };
  CmaEngine() = default;
  ~CmaEngine();
  CmaEngine(const CmaEngine&) = delete;
  CmaEngine& operator=(const CmaEngine&) = delete;
  void submit(std::shared_ptr<Job> job);
  // Copies at once on the calling thread: for small jobs, where handing over to the thread
  // would cost more than the copy.
  static void run_now(Job& job);

 private:
  void run();
  static int copy(Job& job);
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace weft::kv
