// Layout of the 64-bit UCP tag: | context id (16) | source rank (24) | tag (24) |.
// Each communicator owns two context ids (user point-to-point and collectives), so the two
// never match each other. Tag bit 23 is reserved for internal protocols: user tags stop below it.
#pragma once
#include <cstdint>

namespace weft::tag {

inline constexpr int kContextBits = 16, kSourceBits = 24, kTagBits = 24;
inline constexpr int kTagShift = 0, kSourceShift = kTagBits, kContextShift = kTagBits + kSourceBits;

inline constexpr uint64_t kTagMask = (1ull << kTagBits) - 1;
inline constexpr uint64_t kSourceMask = ((1ull << kSourceBits) - 1) << kSourceShift;
inline constexpr uint64_t kContextMask = ((1ull << kContextBits) - 1) << kContextShift;

inline constexpr int kMaxUserTag = (1 << (kTagBits - 1)) - 1;  // MPI_TAG_UB
inline constexpr int kMaxRanks = 1 << kSourceBits;
inline constexpr uint32_t kMaxContextId = (1u << kContextBits) - 1;

inline constexpr uint64_t make(uint32_t context, uint32_t source, uint32_t user_tag) {
  return (uint64_t(context) << kContextShift) | (uint64_t(source) << kSourceShift) |
         (uint64_t(user_tag) & kTagMask);
}

// Receive mask: wildcard source and/or tag clear the matching bits.
inline constexpr uint64_t recv_mask(bool any_source, bool any_tag) {
  uint64_t m = ~0ull;
  if (any_source) m &= ~kSourceMask;
  if (any_tag) m &= ~kTagMask;
  return m;
}

inline constexpr uint32_t context_of(uint64_t t) { return uint32_t(t >> kContextShift); }
inline constexpr int source_of(uint64_t t) { return int((t & kSourceMask) >> kSourceShift); }
inline constexpr int user_tag_of(uint64_t t) { return int(t & kTagMask); }

}  // namespace weft::tag
