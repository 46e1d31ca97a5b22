// WEFT_COLL_TUNE: user overrides of the algorithm choice, checked once at init.
//
//   rules   := rule ('#' rule)*
//   rule    := collective ':' [lo '-' hi ':'] choices      sizes: 4096, 64k, 1m; hi may be inf
//   choices := '@' algorithm | '^' algorithm (',' '^' algorithm)*
//
// '@name' forces an algorithm for calls whose size is in [lo, hi); '^name' excludes one.
// Example: allreduce:0-4k:@recursive_doubling#allreduce:4k-inf:@ring
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "coll.h"

namespace weft::coll {

struct Algorithm;

class Tuning {
 public:
  // Fails with a message naming the bad part: unknown collective or algorithm, an algorithm of
  // another collective, malformed sizes, or rules that exclude every algorithm of a collective.
  static Status parse(std::string_view text, Tuning* out, std::string* error);

  // The algorithm forced for a call of `bytes`, or null.
  const Algorithm* forced(Collective coll, size_t bytes) const;
  bool excluded(const Algorithm& a, size_t bytes) const;
  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    Collective coll;
    size_t lo, hi;  // [lo, hi)
    const Algorithm* force;
    std::vector<const Algorithm*> exclude;
  };
  std::vector<Rule> rules_;
};

}  // namespace weft::coll
