// WEFT_COLL_CHECK: the arguments of a collective call that every member must give alike (which
// collective, root, operation, counts), compared across the members before the call runs. A
// mismatch is an error at every member, where without the check it may hang or mix data.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "coll/coll.h"

namespace weft::coll {

// One argument every member must give alike, as a number, with its name for the error, the
// status a mismatch gives, and how the error names a value (none: the number).
struct SameArgument {
  const char* what;
  uint64_t value;
  Status mismatch;
  std::string (*name)(uint64_t) = nullptr;
};

// Compares `args` (the same list, in the same order, at every member of ctx.comm, an
// intracommunicator) across the members in one allreduce. own_mismatch: this member's own sides
// already disagree (its send block and its receive block differ), which fails the call at every
// member too. Status::ok, or the first mismatch's status with the detail naming the argument and
// the range the members gave.
Status check_same_call(const CollContext& ctx, const char* fn, const std::vector<SameArgument>& args,
                       bool own_mismatch);

}  // namespace weft::coll
