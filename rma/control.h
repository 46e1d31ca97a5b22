// Layout of a window's control block (one registered block per rank, see window.h): byte
// offsets of its words. The directory of a dynamic window follows the queue slots (dynamic.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft::rma::ctrl {

constexpr size_t kLock = 0;       // the lock word (below)
constexpr size_t kComplete = 8;   // MPI_Win_complete calls received (pscw.cpp)
constexpr size_t kMutex = 16;     // holder's window rank + 1 during a locked accumulate; 0 free
constexpr size_t kQueue = 24;     // the lock's queue (below)
constexpr size_t kPosts = 32;     // one word per origin rank: its MPI_Win_post calls not yet started on
// After the posts, one word per origin rank: 1 while it holds or is taking a shared lock here
// (windows whose lock word counts shared holders rather than naming them, see below).
constexpr size_t reader_slots(size_t ranks) { return kPosts + 8 * ranks; }
// After the reader slots, one word per origin rank: its place in the lock's queue (below).
constexpr size_t queue_slots(size_t ranks) { return reader_slots(ranks) + 8 * ranks; }
// The end of the per-rank words.
constexpr size_t slots_end(size_t ranks) { return queue_slots(ranks) + 8 * ranks; }

// The lock word records every holder, so that a waiter can tell that a dead rank holds it:
//   bit 62          exclusive: held exclusively by the rank in bits 32..61;
//   bits 32..61     the exclusive holder's window rank + 1;
//   bits 0..31      shared holders: in windows of at most kReaderBits ranks one bit per origin
//                   rank (bit r: rank r holds a shared lock or is taking one), else their count,
//                   each holder also setting its reader slot before counting itself.
// A shared taker adds its bit (or 1) and backs out if the exclusive bit was set.
constexpr uint64_t kExclusive = uint64_t(1) << 62;
constexpr int kHolderShift = 32;
constexpr uint64_t kHolderMask = (uint64_t(1) << 30) - 1;
constexpr uint64_t kReaderMask = 0xffffffffu;
constexpr int kReaderBits = 32;
constexpr uint64_t exclusive_mark(int rank) { return kExclusive | (uint64_t(rank) + 1) << kHolderShift; }
// The exclusive holder recorded in a lock word, or -1.
constexpr int exclusive_holder(uint64_t word) {
  return word & kExclusive ? int((word >> kHolderShift) & kHolderMask) - 1 : -1;
}

// The lock's queue, a ticket lock in front of the lock word (locks.cpp): bits 32..63 the next
// ticket, bits 0..31 the ticket admitted to take the lock word; equal halves mean nobody
// queues. A taker tries the lock word at once only while nobody queues, so ranks that lock
// and unlock in a loop cannot keep a waiting rank out. A queue slot is 0 outside the queue,
// kTakingTicket while its rank takes a ticket, and ticket + kTicketBias from then until its
// rank leaves the queue, with kTicketGivenUp set where its rank failed in line: waiters skip
// the tickets of dead ranks and given-up ones.
constexpr uint64_t kNextTicket = uint64_t(1) << 32;
constexpr uint64_t kTakingTicket = 1;
constexpr uint64_t kTicketBias = 2;
constexpr uint64_t kTicketGivenUp = uint64_t(1) << 63;
constexpr uint32_t admitted_ticket(uint64_t queue) { return uint32_t(queue); }
constexpr uint32_t next_ticket(uint64_t queue) { return uint32_t(queue >> 32); }
// What admits the ticket after `ticket`: one added to the low half, without a carry into the
// high half when it wraps.
constexpr uint64_t admit_next(uint32_t ticket) { return ticket == UINT32_MAX ? uint64_t(1) - kNextTicket : 1; }

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
