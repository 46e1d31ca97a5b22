// Copies for the staging tests without a GPU ("device memory" is host memory): a started copy
// is only queued, and runs when the code under test waits for it or copies out of sequence, as
// a CUDA stream would run it. Reading a chunk before its copy has run, or refilling one whose
// copy has not run yet, then shows up as wrong bytes.
#pragma once
#include <cstddef>
#include <cstring>
#include <deque>

namespace weft::test {

class DeferredCopies {
 public:
  void start(int slot, void* dst, const void* src, size_t n) { queue_.push_back(Copy{slot, dst, src, n}); }
  // Runs everything up to and including the last copy of this slot (stream order).
  void wait(int slot) {
    size_t last = 0;
    bool found = false;
    for (size_t i = 0; i < queue_.size(); ++i)
      if (queue_[i].slot == slot) last = i, found = true;
    if (found) run(last + 1);
  }
  // Runs every queued copy, then this one (a synchronous copy after the stream's work).
  void copy_now(void* dst, const void* src, size_t n) {
    run(queue_.size());
    memcpy(dst, src, n);
  }
  // Runs the first `count` queued copies.
  void run(size_t count) {
    for (size_t i = 0; i < count; ++i) {
      memcpy(queue_.front().dst, queue_.front().src, queue_.front().n);
      queue_.pop_front();
    }
  }
  size_t queued() const { return queue_.size(); }

 private:
  struct Copy {
    int slot;
    void* dst;
    const void* src;
    size_t n;
  };
  std::deque<Copy> queue_;
};

}  // namespace weft::test
