// Reading one cell of a shared-memory ring (shm.h) into the receiver's own memory, with every
// check the receiver makes on bytes its sender controls. The header is read once, after the
// first word: every later check and use reads the copy, never the ring, so a sender that
// rewrites a cell after publishing it cannot get past a check. No dependencies (a fuzz target
// includes it).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace weft::shm_cells {

constexpr size_t kCellHeaderBytes = 32;  // cell header; the payload follows
constexpr size_t kCellAlign = 64;        // cells start on cache lines

// A cell's first word says which lap of the ring it belongs to (laps alternate 0, 1): a cell
// or a wrap word left from the previous lap reads as "nothing yet", so a sender publishes a
// message without touching the line its next cell takes (a second line to take from the
// receiver per message). kNone: never written, or cleared by the sender where old bytes could
// read as a word of the lap to come (payload, or a word two laps old). kWrap0/kWrap1: the ring
// goes on at its start.
enum CellWord : uint32_t {
  kNone = 0,
  kCellReady0 = 0x63656c6c,
  kCellReady1 = 0x43454c4c,
  kWrap0 = 0x77726170,
  kWrap1 = 0x57524150,
};
constexpr uint32_t cell_ready_word(unsigned lap) { return lap & 1 ? kCellReady1 : kCellReady0; }
constexpr uint32_t wrap_word(unsigned lap) { return lap & 1 ? kWrap1 : kWrap0; }

// kCancel asks the receiver to drop an unmatched message (send cancellation); kCancelAnswer
// says whether it did.
enum CellKind : uint32_t { kEager = 1, kReadyToSend = 2, kFinish = 3, kSyncAck = 4, kCancel = 5, kCancelAnswer = 6 };
// kDevice: a ready-to-send of GPU memory (CUDA IPC). kAnswered (cancel cells): the send waits
// for an answer too (finish or acknowledgement), whose ticket the cell's tag carries.
// kCancelled (cancel answers): the message was dropped.
enum CellFlags : uint32_t { kSync = 1, kDevice = 2, kAnswered = 4, kCancelled = 8 };

// The header as the ring holds it (ShmEngine::Cell has the same layout, with an atomic first word).
struct CellHeader {
  uint32_t word;
  uint16_t kind;
  uint16_t flags;
  uint32_t len;      // payload bytes
  uint32_t message;  // a message: its number (0: cannot be cancelled); kCancel: the one to drop
  uint64_t tag;      // context | source | tag
  uint64_t cookie;   // the sender's ticket, echoed back in finish / sync ack
};
static_assert(sizeof(CellHeader) == kCellHeaderBytes);

// A cell's bytes in the ring: header and payload, rounded up to a cache line.
constexpr size_t cell_bytes(size_t payload) {
  return (kCellHeaderBytes + payload + kCellAlign - 1) & ~(kCellAlign - 1);
}

enum class CellRead : uint8_t { nothing, cell, wrap, broken };

// What starts at `offset` (a multiple of kCellAlign below ring_bytes) of a ring of ring_bytes,
// read in lap `lap`: nothing yet (also a word of the other lap); a wrap (*bytes: the rest of the ring); a cell (*h: its header, read once; *bytes:
// its size in the ring), of a known kind, whose payload is at most payload_max bytes and ends
// inside the ring; or broken (*why says how).
inline CellRead read_cell(const char* ring, size_t offset, size_t ring_bytes, size_t payload_max, unsigned lap,
                          CellHeader* h, size_t* bytes, const char** why) {
  const char* at = ring + offset;
  const uint32_t word = __atomic_load_n(reinterpret_cast<const uint32_t*>(at), __ATOMIC_ACQUIRE);
  if (word == kNone || word == cell_ready_word(lap ^ 1) || word == wrap_word(lap ^ 1)) return CellRead::nothing;
  if (word == wrap_word(lap)) {
    *bytes = ring_bytes - offset;
    return CellRead::wrap;
  }
  if (word != cell_ready_word(lap)) [[unlikely]] {
    *why = "a cell starts with an unknown word";
    return CellRead::broken;
  }
  memcpy(h, at, sizeof *h);
  if (h->kind < kEager || h->kind > kCancelAnswer) [[unlikely]] {
    *why = "a cell of an unknown kind";
    return CellRead::broken;
  }
  if (h->len > payload_max || cell_bytes(h->len) > ring_bytes - offset) [[unlikely]] {
    *why = "a cell runs past the end of the ring";
    return CellRead::broken;
  }
  *bytes = cell_bytes(h->len);
  return CellRead::cell;
}

}  // namespace weft::shm_cells
