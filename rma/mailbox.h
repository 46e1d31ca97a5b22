// Layout of the accumulate mailboxes (mailbox.cpp): created and dynamic windows whose ranks
// share a node give every origin one slot at every target, in the node segment next to the
// target's control block. An origin writes an accumulate (or compare-and-swap) into its slot
// and the target applies it to its own memory, under its accumulate mutex, when it progresses.
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft::rma::mailbox {

// The area of one target: a header line (the count of posted slots, which the target's poller
// reads first), then one slot per origin rank, each a header line and its data.
constexpr size_t kAreaHeader = 64;
constexpr size_t kSlotHeader = 64;

// A slot's state word, moved only forward by its owner of the moment:
//   free -> posted (origin, after writing the request) -> taken (target) -> done (target,
//   after writing status and result) -> free (origin, after reading them);
//   posted -> free (origin: a withdrawal, when the target has not taken it in time).
enum State : uint32_t { kFree = 0, kPosted = 1, kTaken = 2, kDone = 3 };

enum Kind : uint8_t { kAccumulate = 1, kCompareSwap = 2 };

struct SlotHeader {
  uint32_t state;
  int32_t status;   // the target's weft::Status for the request
  uint8_t kind;     // Kind
  uint8_t op;       // ReduceOp (accumulate)
  uint8_t type;     // BasicType of the elements
  uint8_t result;   // 1: the old contents are returned in the data
  uint32_t pad;
  uint64_t addr;    // the target's address (its own virtual address space)
  uint64_t bytes;   // of the target range; compare-and-swap: one element
};
static_assert(sizeof(SlotHeader) <= kSlotHeader);

// Data bytes per slot: the node segment holds ranks * ranks slots, so the slots shrink as the
// window grows (16 KiB at up to 8 ranks, 1 KiB from 32); longer accumulates go in pieces.
constexpr size_t capacity(size_t ranks) {
  const size_t budget = (size_t(1) << 20) / (ranks * ranks);
  const size_t c = budget < 1024 ? 1024 : budget > 16384 ? 16384 : budget;
  return c & ~size_t(63);
}
constexpr size_t slot_bytes(size_t ranks) { return kSlotHeader + capacity(ranks); }
constexpr size_t area_bytes(size_t ranks) { return kAreaHeader + ranks * slot_bytes(ranks); }

}  // namespace weft::rma::mailbox
