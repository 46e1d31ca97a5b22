// Which id a new buffer registration takes (registered.cpp). Each rank describes its ids as
// masks; the ranks combine them with bitwise or; every rank then computes the same answer from
// the same combined masks, so they drop and take the same ids. No CUDA here.
#pragma once
#include <cstdint>

namespace weft::coll::gpu {

struct RegistrationIds {
  uint64_t used = 0;    // bit k: id k is live
  uint64_t keep = 0;    // bit k: the user's or a persistent call's (never evicted)
  uint64_t graph = 0;   // bit k: made by a captured call (dropped only once stale)
  uint64_t stale = 0;   // bit k: a call's, and its memory was freed
  uint64_t oldest = 0;  // the bit of the oldest uncaptured call's id

  RegistrationIds& operator|=(const RegistrationIds& o) {
    used |= o.used;
    keep |= o.keep;
    graph |= o.graph;
    stale |= o.stale;
    oldest |= o.oldest;
    return *this;
  }
  // Calls' registrations to drop before choosing: stale somewhere.
  uint64_t stale_calls() const { return used & ~keep & stale; }
  // The id to take out of max_ids (stale calls' ids already dropped from used): the lowest
  // free one; else, if may_evict_live, the oldest uncaptured call's, *evict true; -1: none.
  int choose(int max_ids, bool may_evict_live, bool* evict) const {
    *evict = false;
    const uint64_t ids = max_ids >= 64 ? ~uint64_t(0) : (uint64_t(1) << max_ids) - 1;
    int id = lowest(ids & ~used);
    if (id >= 0 || !may_evict_live) return id;
    const uint64_t uncaptured = ids & used & ~keep & ~graph;
    id = lowest(uncaptured & oldest);
    if (id < 0) id = lowest(uncaptured);
    *evict = id >= 0;
    return id;
  }
  static int lowest(uint64_t m) { return m ? __builtin_ctzll(m) : -1; }
};
static_assert(sizeof(RegistrationIds) % 8 == 0);

}  // namespace weft::coll::gpu
