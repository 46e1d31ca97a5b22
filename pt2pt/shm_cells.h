// The cells of weft's shared-memory rings (shm.h) as the engine's files see them (shm.cpp:
// messages; shm_cancel.cpp: cancellation); their kinds, flags, header and the receiver's
// checks are in shm_cell_read.h.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "shm.h"
#include "shm_cell_read.h"

namespace weft {

// A ring cell: a 32-byte header and its payload, one after the other in the ring, each starting
// on a cache line (a message of up to 32 bytes takes one line, and the receiver never reads a
// line the sender is still filling with the next cell). The sender never reads a line the
// receiver wrote. The sender's rank is the ring's, not a field.
struct ShmEngine::Cell {
  std::atomic<uint32_t> word;  // shm_cells::CellWord
  uint16_t kind;
  uint16_t flags;
  uint32_t len;                // payload bytes
  uint32_t message;            // a message: its number (0: cannot be cancelled); kCancel: the one to drop
  uint64_t tag;                // context | source | tag
  uint64_t cookie;             // the sender's ticket (ShmEngine::Awaiting), echoed back in finish / sync ack
  char* payload() { return reinterpret_cast<char*>(this) + shm_cells::kCellHeaderBytes; }
  const char* payload() const { return reinterpret_cast<const char*>(this) + shm_cells::kCellHeaderBytes; }
};
static_assert(sizeof(ShmEngine::Cell) == shm_cells::kCellHeaderBytes);
static_assert(offsetof(ShmEngine::Cell, len) == offsetof(shm_cells::CellHeader, len) &&
              offsetof(ShmEngine::Cell, tag) == offsetof(shm_cells::CellHeader, tag) &&
              offsetof(ShmEngine::Cell, cookie) == offsetof(shm_cells::CellHeader, cookie));

}  // namespace weft
