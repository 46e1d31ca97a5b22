// The pages known to hold ordinary host memory, so that a program that has initialised CUDA does
// not pay the driver's pointer query (about 160 ns) on every host buffer it sends.
//
// Only "unknown to CUDA" answers are kept: device, managed and pinned buffers are asked every
// time. CUDA memory can appear at an address only after what was mapped there is unmapped, so
// every unmapping (reported by UCX's memory hooks, memkind_cuda.cpp) forgets the pages it
// covers. The table is direct-mapped by page and safe for any thread: a query racing an
// unmapping either sees the new generation and drops what it stored, or its entry is cleared by
// the unmapping's sweep (both sides use sequentially consistent operations).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft {

class HostPageCache {
 public:
  static constexpr size_t kEntries = 256;
  static constexpr unsigned kPageShift = 12;

  bool known_host(const void* p) const {
    const uint64_t key = key_of(p);
    return table_[slot(key)].load(std::memory_order_relaxed) == key;
  }
  // The generation to pass to remember(), read before asking the driver.
  uint64_t generation() const { return generation_.load(std::memory_order_seq_cst); }
  // Records p's page as host memory, unless something was unmapped since `seen` was read.
  void remember(const void* p, uint64_t seen) {
    const uint64_t key = key_of(p);
    std::atomic<uint64_t>& e = table_[slot(key)];
    if (generation_.load(std::memory_order_seq_cst) != seen) return;
    e.store(key, std::memory_order_seq_cst);
    if (generation_.load(std::memory_order_seq_cst) != seen) e.store(0, std::memory_order_seq_cst);
  }
  // Forgets every page of [addr, addr + bytes).
  void unmapped(const void* addr, size_t bytes) {
    generation_.fetch_add(1, std::memory_order_seq_cst);
    const uint64_t first = key_of(addr);
    const uint64_t last = bytes ? key_of(static_cast<const char*>(addr) + bytes - 1) : first;
    for (std::atomic<uint64_t>& e : table_) {
      const uint64_t k = e.load(std::memory_order_seq_cst);
      if (k >= first && k <= last) e.store(0, std::memory_order_seq_cst);
    }
  }
  void clear() {
    generation_.fetch_add(1, std::memory_order_seq_cst);
    for (std::atomic<uint64_t>& e : table_) e.store(0, std::memory_order_seq_cst);
  }

 private:
  // Page number + 1, so that 0 means empty.
  static uint64_t key_of(const void* p) { return (reinterpret_cast<uintptr_t>(p) >> kPageShift) + 1; }
  static size_t slot(uint64_t key) { return size_t((key ^ (key >> 8)) % kEntries); }
  std::atomic<uint64_t> table_[kEntries]{};
  std::atomic<uint64_t> generation_{0};
};

}  // namespace weft
