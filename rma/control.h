// Layout of a window's control block (one registered block per rank, see window.h): byte
// offsets of its words. The directory of a dynamic window follows the posts (dynamic.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft::rma::ctrl {

constexpr size_t kLock = 0;       // exclusive mark, or the number of shared holders
constexpr size_t kComplete = 8;   // MPI_Win_complete calls received (pscw.cpp)
constexpr size_t kMutex = 16;     // holder's window rank + 1 during a locked accumulate; 0 free
constexpr size_t kPosts = 32;     // one word per origin rank: its MPI_Win_post calls not yet started on

// The exclusive holder's mark in the lock word; shared holders add 1 each.
constexpr uint64_t kExclusive = uint64_t(1) << 62;

// Dynamic windows: the directory header (sequence, regions, bytes of entries after the
// header), then entries {base, size, key bytes, key}. The sequence is odd while the owner
// rewrites the directory.
constexpr size_t kDirHeader = 32;
struct DirEntry {
  uint64_t base, size;
  uint32_t key_bytes, pad;
};
// Room for the entries: a packed UCX key takes tens to a few hundred bytes, so this holds
// hundreds of regions; MPI_Win_attach reports an error when it is full.
constexpr size_t kDirBytes = 64 * 1024;

}  // namespace weft::rma::ctrl
