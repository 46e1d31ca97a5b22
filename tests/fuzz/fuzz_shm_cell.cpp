// Fuzzes the receiver's reading of a shared-memory ring (pt2pt/shm_cell_read.h), whose bytes a
// local peer writes: the input's first 4 bytes bound the payload of a cell, the rest is the
// ring (whole cache lines). Walking it as a receiver does, every cell read is of a known kind,
// within the payload bound, and ends inside the ring; a wrap goes back to the start.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "pt2pt/shm_cell_read.h"

using namespace weft::shm_cells;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4 + kCellAlign) return 0;
  uint32_t payload_max = 0;
  memcpy(&payload_max, data, 4);
  const size_t ring_bytes = (size - 4) / kCellAlign * kCellAlign;
  std::vector<uint64_t> ring(ring_bytes / 8);  // aligned as a mapped ring is
  memcpy(ring.data(), data + 4, ring_bytes);
  const char* base = reinterpret_cast<const char*>(ring.data());

  size_t offset = 0;
  unsigned lap = 0;
  for (size_t steps = 0; steps <= ring_bytes / kCellAlign; ++steps) {
    CellHeader h;
    size_t bytes = 0;
    const char* why = nullptr;
    const CellRead read = read_cell(base, offset, ring_bytes, payload_max, lap, &h, &bytes, &why);
    if (read == CellRead::nothing) break;
    if (read == CellRead::broken) {
      if (why == nullptr) abort();
      break;
    }
    if (read == CellRead::wrap) {
      if (bytes != ring_bytes - offset) abort();
    } else {
      if (h.word != cell_ready_word(lap) || h.kind < kEager || h.kind > kCancelAnswer) abort();
      if (h.len > payload_max || bytes != cell_bytes(h.len) || bytes > ring_bytes - offset) abort();
      // The payload lies inside the ring: touching its last byte must stay in bounds.
      if (h.len) {
        volatile char last = base[offset + kCellHeaderBytes + h.len - 1];
        (void)last;
      }
    }
    if (bytes == 0 || bytes % kCellAlign != 0) abort();
    offset += bytes;
    if (offset == ring_bytes) {
      offset = 0;
      lap ^= 1;
    }
  }
  return 0;
}
