// The cells of weft's shared-memory rings (shm.h): their kinds, flags and header, for the
// engine's files (shm.cpp: messages; shm_cancel.cpp: cancellation).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "shm.h"

namespace weft::shm_cells {

constexpr size_t kCellHeaderBytes = 32;  // cell header; the payload follows
constexpr size_t kCellAlign = 64;        // cells start on cache lines

// A cell's first word: kNone until the sender publishes it (the sender clears the word where its
// next cell will start before it publishes the current one, so the receiver never mistakes old
// bytes for a cell); kWrap says the ring goes on at its start.
enum CellWord : uint32_t { kNone = 0, kCellReady = 0x63656c6c, kWrap = 0x77726170 };

// kCancel asks the receiver to drop an unmatched message (send cancellation); kCancelAnswer
// says whether it did.
enum CellKind : uint32_t { kEager = 1, kReadyToSend = 2, kFinish = 3, kSyncAck = 4, kCancel = 5, kCancelAnswer = 6 };
// kDevice: a ready-to-send of GPU memory (CUDA IPC). kAnswered (cancel cells): the send waits
// for an answer too (finish or acknowledgement), whose ticket the cell's tag carries.
// kCancelled (cancel answers): the message was dropped.
enum CellFlags : uint32_t { kSync = 1, kDevice = 2, kAnswered = 4, kCancelled = 8 };

}  // namespace weft::shm_cells

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

}  // namespace weft
