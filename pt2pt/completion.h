// Completion of sets of requests and probing, with failure detection: a request whose peer,
// or a member of whose communicator, is known to have failed fails instead of waiting forever.
#pragma once
#include <cstddef>
#include <cstdint>

#include "pt2pt/comm.h"
#include "pt2pt/transport.h"
#include "runtime/request.h"

namespace weft {

// The communicator whose failed members fail a request (its owner), or null.
using FailureScope = const Comm* (*)(const Request*);

// Fails the incomplete requests among reqs (null entries are skipped) that a known failure
// fails; true if any was.
bool fail_on_member_failures(Transport& t, Request* const* reqs, size_t n, FailureScope scope);
// Blocks until a request among reqs completes, or one fails.
void wait_for_any(Transport& t, Request* const* reqs, size_t n, FailureScope scope);
// The first complete request among reqs, or -1.
int first_complete(Request* const* reqs, size_t n);

// Looks for a message matching (tag, mask) on c; remove: takes it out of matching (*message is
// the transport's handle). blocking: waits for one; false then, with the error detail set,
// when `source` (a communicator rank, -1 for any) or another member of c has failed.
bool probe(Transport& t, const Comm& c, int source, uint64_t tag, uint64_t mask, bool remove, bool blocking,
           MatchInfo* info, void** message);

}  // namespace weft
