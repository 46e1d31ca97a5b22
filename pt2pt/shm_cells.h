// The cells of weft's shared-memory rings (shm.h): their kinds, flags and header, for the
// engine's files (shm.cpp: messages; shm_cancel.cpp: cancellation).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "shm.h"

namespace weft::shm_cells {

constexpr size_t kCellHeaderBytes = 40;  // cell header; the payload follows

// kCancel asks the receiver to drop an unmatched message (send cancellation); kCancelAnswer
// says whether it did.
enum CellKind : uint32_t { kEager = 1, kReadyToSend = 2, kFinish = 3, kSyncAck = 4, kCancel = 5, kCancelAnswer = 6 };
// kDevice: a ready-to-send of GPU memory (CUDA IPC). kAnswered (cancel cells): the send waits
// for an answer too (finish or acknowledgement), whose ticket the cell's tag carries.
// kCancelled (cancel answers): the message was dropped.
enum CellFlags : uint32_t { kSync = 1, kDevice = 2, kAnswered = 4, kCancelled = 8 };

}  // namespace weft::shm_cells

namespace weft {

// A ring cell. The header is kept small so a message of up to 24 bytes shares the first cache
// line with the sequence word: one line moves between the cores per small message.
struct ShmEngine::Cell {
  std::atomic<uint64_t> seq;  // producer ticket t may write when seq == t; ready when t + 1
  uint64_t tag;               // context | source | tag
  uint32_t len;               // eager: payload bytes
  uint16_t kind;
  uint16_t flags;
  int32_t sender;             // sender's job rank
  uint32_t message;           // a message: its number (0: cannot be cancelled); kCancel: the one to drop
  uint64_t cookie;            // the sender's ticket (ShmEngine::Awaiting), echoed back in finish / sync ack
  char* payload() { return reinterpret_cast<char*>(this) + shm_cells::kCellHeaderBytes; }
  const char* payload() const { return reinterpret_cast<const char*>(this) + shm_cells::kCellHeaderBytes; }
};

}  // namespace weft
