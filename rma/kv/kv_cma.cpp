// Cross-memory-attach copies for KV agents on one host (kv_cma.h).
#include "kv_cma.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace weft::kv {

bool cma_usable(pid_t pid, uint64_t address, int* error) {
  char byte = 0;
  iovec local{&byte, 1};
  iovec remote{reinterpret_cast<void*>(address), 1};
  if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == 1) return true;
  *error = errno;
  return false;
}

CmaEngine::~CmaEngine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CmaEngine::submit(std::shared_ptr<Job> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  cv_.notify_one();
}

void CmaEngine::run_now(Job& job) {
  job.error = copy(job);
  job.done.store(true, std::memory_order_release);
}

void CmaEngine::run() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every job is done
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    run_now(*job);
  }
}

// Moves the bytes of every block, at most IOV_MAX blocks a call; the kernel may stop short
// (at a page it cannot reach, or at its own limits), so each call resumes where the last
// one stopped.
int CmaEngine::copy(Job& job) {
  size_t li = 0, ri = 0;
  size_t loff = 0, roff = 0;  // bytes already moved of local[li] and remote[ri]
  std::vector<iovec> lv, rv;
  while (li < job.local.size() && ri < job.remote.size()) {
    lv.clear();
    rv.clear();
    for (size_t i = li; i < job.local.size() && lv.size() < IOV_MAX; ++i) {
      const size_t skip = i == li ? loff : 0;
      lv.push_back({static_cast<char*>(job.local[i].iov_base) + skip, job.local[i].iov_len - skip});
    }
    for (size_t i = ri; i < job.remote.size() && rv.size() < IOV_MAX; ++i) {
      const size_t skip = i == ri ? roff : 0;
      rv.push_back({static_cast<char*>(job.remote[i].iov_base) + skip, job.remote[i].iov_len - skip});
    }
    const ssize_t n = job.write ? process_vm_writev(job.pid, lv.data(), lv.size(), rv.data(), rv.size(), 0)
                                : process_vm_readv(job.pid, lv.data(), lv.size(), rv.data(), rv.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EFAULT;
    for (size_t left = size_t(n); left;) {  // advance the local side
      const size_t take = std::min(left, job.local[li].iov_len - loff);
      left -= take;
      loff += take;
      if (loff == job.local[li].iov_len) ++li, loff = 0;
    }
    for (size_t left = size_t(n); left;) {  // and the remote side
      const size_t take = std::min(left, job.remote[ri].iov_len - roff);
      left -= take;
      roff += take;
      if (roff == job.remote[ri].iov_len) ++ri, roff = 0;
    }
  }
  return 0;
}

}  // namespace weft::kv
