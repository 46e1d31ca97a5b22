// Stream communicators (MPIX_Stream_comm_create): what one carries, the table of them by context
// id, and the steps every *_enqueue call shares: its route (stream-native, a fallback to the
// host call, or straight to the host call), the fallback, and the point-to-point calls and the
// MPIX_Wait(all)_enqueue of their requests.
//
// A stream communicator is a duplicate on which a user's stream hangs; freeing it (release)
// first waits for the kernels weft enqueued on the stream that still use its GPU workspace, so
// the communicator must be freed before its cudaStream_t is destroyed. A duplicate of a stream
// communicator carries no stream.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm.h"
#include "runtime/datatype.h"
#include "runtime/request.h"
#include "runtime/status.h"
#include "stream.h"
#include "transport.h"

namespace weft {

// What a stream communicator carries.
struct StreamComm {
  UserStream stream;
  bool every_rank_gpu = false;  // agreed at creation: every rank passed a GPU stream
  std::string native_why;       // why the collective calls cannot run stream-native (agreed, by coll/gpu)
  StreamP2p p2p;                // the point-to-point calls (their reason agreed too)
};

// The table of this process's stream communicators, by context id. add: c is a new stream
// communicator; find: its state, nullptr for a communicator without a stream; release (when c
// is freed): waits for the work weft enqueued on its stream (stream_drain) and forgets it.
void add_stream_comm(const Comm& c, std::unique_ptr<StreamComm> sc);
const StreamComm* find_stream_comm(const Comm& c);
void release_stream_comm(const Comm& c);

// How an *_enqueue call goes: on the stream, through the fallback (`why` it cannot run
// stream-native), or straight to the host call (arguments the host call rejects, MPI_PROC_NULL:
// nothing to order on the stream).
enum class StreamPath : uint8_t { native, fallback, host };
struct StreamRoute {
  StreamPath path = StreamPath::host;
  std::string why;
};

// The end of an *_enqueue call's stream step: *host_call says whether the ordinary host call
// (which `what`s from the host, for logs) must follow. Not after a stream-native run; after a
// fallback only once stream_host_fallback passed (its WARN once per call and reason, its stream
// synchronisation; Status::not_supported under WEFT_REQUIRE_FAST_PATH and stream capture).
Status stream_route_end(const char* fn, const char* what, const StreamComm& sc, const StreamRoute& route,
                        bool require_fast_path, bool* host_call);

// `count` elements of d at buf as they travel: one run of `bytes` bytes from `at`, if contiguous.
struct StreamSpan {
  char* at;
  size_t bytes;
  bool contiguous;
};
StreamSpan stream_span(const Datatype* d, const void* buf, size_t count);

// MPIX_Send_enqueue (request null) and MPIX_Isend_enqueue: stream-native when the protocol
// allows it (route native), else route fallback and its reason; arguments already checked.
Status stream_send(const char* fn, Transport& t, const Comm& c, const StreamComm& sc, const StreamSpan& m, int dest,
                   int tag, Request** request, StreamRoute* route);
// MPIX_Recv_enqueue (request null: *rs set on a stream-native run) and MPIX_Irecv_enqueue;
// wildcard: from any source or with any tag.
Status stream_recv(const char* fn, Transport& t, const Comm& c, const StreamComm& sc, const StreamSpan& m,
                   int source, int tag, bool wildcard, RequestStatus* rs, Request** request, StreamRoute* route);

// One request of MPIX_Wait(all)_enqueue, from a communicator with a GPU stream.
struct StreamWait {
  int index = 0;  // in the caller's array
  Request* request = nullptr;
  int owner = 0;  // the request's communicator handle (errors are raised there)
  const Comm* comm = nullptr;
  const StreamComm* sc = nullptr;
  bool native = false;         // a stream-native request (StreamP2p::is_native)
  Status status = Status::ok;  // stream-native: how its completion went
  RequestStatus rs{};          // stream-native: its status
};
// Marks the stream-native requests of *waits, then completes and releases them in order
// (StreamP2p::complete: status and rs set), calling done after each.
void complete_stream_native(Transport& t, std::vector<StreamWait>* waits,
                            const std::function<void(const StreamWait&)>& done);
// Before the host requests of waits (complete_stream_native marked the others) are waited for
// from the host: the fallback (stream_route_end, "waits from the host") once on each distinct
// stream among them, in order, until one fails (*failed: the first request on that stream).
Status sync_host_streams(const char* fn, const std::vector<StreamWait>& waits, bool require_fast_path,
                         const StreamWait** failed);

}  // namespace weft
