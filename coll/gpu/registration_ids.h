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
  uint64_t oldest = 0;  // each rank's oldest uncaptured call's id (or-ed: a few bits)

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

  struct Choice {
    int id = -1;         // the id to take; -1: none
    uint64_t drop = 0;   // ids every rank drops first (stale calls', and the evicted one)
    bool evicts = false; // drop holds a live uncaptured call's id
  };
  // The id a new registration takes out of max_ids. may_drop (not while a stream is being
  // captured: dropping closes mappings): the calls' stale ids are dropped first. Then the
  // lowest free id; else, if may_evict_live, one of the ranks' oldest uncaptured call ids (the
  // lowest of those bits), or the lowest uncaptured one.
  Choice choose(int max_ids, bool may_drop, bool may_evict_live) const {
    Choice c;
    const uint64_t ids = max_ids >= 64 ? ~uint64_t(0) : (uint64_t(1) << max_ids) - 1;
    c.drop = may_drop ? stale_calls() & ids : 0;
    const uint64_t live = used & ~c.drop;
    c.id = lowest(ids & ~live);
    if (c.id >= 0 || !may_drop || !may_evict_live) return c;
    const uint64_t uncaptured = ids & live & ~keep & ~graph;
    c.id = lowest(uncaptured & oldest);
    if (c.id < 0) c.id = lowest(uncaptured);
    if (c.id >= 0) {
      c.drop |= uint64_t(1) << c.id;
      c.evicts = true;
    }
    return c;
  }
  static int lowest(uint64_t m) { return m ? __builtin_ctzll(m) : -1; }
};
static_assert(sizeof(RegistrationIds) % 8 == 0);

}  // namespace weft::coll::gpu
