// Completion of sets of requests and probing, with failure detection: a request whose peer,
// or a member of whose communicator, is known to have failed fails instead of waiting forever.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "pt2pt/comm.h"
#include "pt2pt/tag.h"
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

// The requests of a multiple-completion call, by position; null for an entry that completes at
// once (a null handle, an inactive persistent request). Up to 32 live on the stack, so the
// common call allocates nothing; larger sets go to the heap.
class RequestSet {
 public:
  explicit RequestSet(size_t n)
      : heap_(n > kOnStack ? std::make_unique<Request*[]>(n) : nullptr), items_(heap_ ? heap_.get() : stack_), n_(n) {
    for (size_t i = 0; i < n; ++i) items_[i] = nullptr;
  }
  RequestSet(const RequestSet&) = delete;
  RequestSet& operator=(const RequestSet&) = delete;
  Request*& operator[](size_t i) { return items_[i]; }
  Request* operator[](size_t i) const { return items_[i]; }
  Request* const* data() const { return items_; }
  size_t size() const { return n_; }
  bool none_active() const;   // every entry null
  bool all_complete() const;  // every entry null or complete

 private:
  static constexpr size_t kOnStack = 32;
  Request* stack_[kOnStack];
  std::unique_ptr<Request*[]> heap_;
  Request** items_;
  size_t n_;
};

// One look at a set: a turn of the progress engine, then failing what a known failure fails.
void poll_once(Transport& t, Request* const* reqs, size_t n, FailureScope scope);
// Waits until every request of the set has completed or failed.
void wait_all(Transport& t, const RequestSet& set, FailureScope scope);
// The position of a complete request of the set, or -1. blocking: waits for one (or a failure);
// else one look first (poll_once).
int any_complete(Transport& t, const RequestSet& set, FailureScope scope, bool blocking);
// The positions of the complete requests of the set, in order, into `positions`; their number.
// blocking: waits until there is one (or a failure fails one); else one look first (poll_once).
int some_complete(Transport& t, const RequestSet& set, FailureScope scope, bool blocking, int* positions);
// Waits until every pending request that `owner` (a communicator handle) owns has completed or
// failed: the started ones; inactive persistent requests are not pending.
void wait_owned(Transport& t, const RequestPool& pool, int owner, const Comm* scope);
// Ends a completed request for its user: runs its finish step and copies its status to *out;
// a persistent request becomes inactive, another goes back to the pool (true: its handle is
// now void).
bool retire_request(RequestPool& pool, Request* r, RequestStatus* out);

// Looks for a message matching (tag, mask) on c; remove: takes it out of matching (*message is
// the transport's handle). blocking: waits for one; false then, with the error detail set,
// when `source` (a communicator rank, -1 for any) or another member of c has failed.
bool probe(Transport& t, const Comm& c, int source, uint64_t tag, uint64_t mask, bool remove, bool blocking,
           MatchInfo* info, void** message);

// A message taken out of matching (probe with remove) as a receive request that holds the
// transport's handle and the match, owned by the communicator handle `owner`.
Request* matched_message(RequestPool& pool, void* message, const MatchInfo& info, int owner);

// The probe family (MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe) on c: a message from
// `source` (a rank of c, -1 for any) with `tag` (-1 for any); *status gets its source, tag and
// size. message: the match is taken out of matching as a receive request owned by `owner`
// (matched_message). blocking and the result as for probe.
bool probe_message(Transport& t, RequestPool& pool, const Comm& c, int owner, int source, int tag, bool blocking,
                   RequestStatus* status, Request** message);

}  // namespace weft
