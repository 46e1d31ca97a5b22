// Fault-tolerant agreement among the surviving members of a communicator (the ULFM calls
// MPIX_Comm_agree and MPIX_Comm_shrink are built on it). It runs on a context of its own, below
// the communicator's failure and revocation state: a failed member fails only the messages to
// and from it, never the agreement.
//
// Algorithm: the lowest-ranked member not known to have failed coordinates. Every other member
// sends it its words and waits for the decision; the coordinator collects the words of every
// member it does not find dead, ands them, clears the alive bit of every member it found dead,
// and sends the result to the others in rank order. A member whose coordinator dies turns to the
// next one (itself, perhaps). The result is the same on every member that gets one as long as
// the coordinator does not die after some members have its decision and before all do (a
// second failure inside the agreement; not handled yet, see docs/RELIABILITY.md).
#pragma once
#include <cstdint>
#include <vector>

#include "pt2pt/comm.h"
#include "pt2pt/transport.h"

namespace weft::coll::fault {

// Words of the alive mask (one bit per member) of c.
inline size_t alive_words(const Comm& c) { return (size_t(c.size) + 63) / 64; }

// *words: on entry this rank's contribution: the alive mask first (alive_words(c) words, bit k set
// for every member k this rank does not know to have failed), then any payload; every member
// passes the same number of words. On return, the and of the contributions of the members that
// took part, with the alive bit of every member found dead cleared. seq: the agreement's number
// on c (every member numbers them alike). Status::timed_out past WEFT_TIMEOUT.
Status agree(Transport& t, const Comm& c, uint32_t seq, std::vector<uint64_t>* words);

// The alive mask of c as this rank knows it now.
std::vector<uint64_t> alive_mask(Transport& t, const Comm& c);

}  // namespace weft::coll::fault
