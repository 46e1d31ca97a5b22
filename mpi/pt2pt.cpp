// Point-to-point bindings: validate, call the point-to-point engine (pt2pt/p2p.h), map errors.
#include <climits>
#include <cstring>
#include <optional>

#include "pt2pt/p2p.h"
#include "runtime/profiler.h"
#include "pt2pt/tag.h"
#include "pt2pt_call.h"

static_assert(weft::kBsendOverhead == MPI_BSEND_OVERHEAD);

namespace weft::mpi {

namespace {

int check_common(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, MPI_Comm comm, Message* m) {
  Comm* c = lookup_comm(comm);
  if (!c) [[unlikely]]
    return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  if (g_state->boot->fault_events()) [[unlikely]] {
    if (int rc = check_comm_alive(fn, comm, *c, true); rc != MPI_SUCCESS) return rc;
  }
  if (count < 0) [[unlikely]]
    return raise(comm, MPI_ERR_COUNT, fn, "negative count %ld (argument 'count')", long(count));
  // No data: MPI_DATATYPE_NULL is accepted (a receive from MPI_PROC_NULL may name no type).
  if (count == 0 && dt == MPI_DATATYPE_NULL) [[unlikely]] dt = MPI_BYTE;
  const Datatype* type;
  if (int rc = check_datatype(comm, fn, dt, &type)) [[unlikely]] return rc;
  switch (describe_message(c, type, size_t(count), buf, m)) {
    case Status::ok: break;
    case Status::invalid_buffer: return raise_unsupported_device(comm, fn, buf);
    default: return raise(comm, MPI_ERR_TYPE, fn, "%s", error_detail().c_str());
  }
  // MPI_BOTTOM (NULL) is a valid base for derived types with absolute displacements.
  if (!buf && m->bytes > 0 && type->predefined) [[unlikely]]
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %ld (argument 'buf')", long(count));
  return MPI_SUCCESS;
}

// The common message checked in one pass: a predefined type, a count of at least 0, an
// intracommunicator with no failure known, a rank and tag in range (a receive may name any
// source or tag) and host memory. False for anything else, left to the full checks, which
// report it: nothing is raised here.
[[gnu::always_inline]] inline bool quick_message(const void* buf, MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                          bool receive, Message* m) {
  const Datatype* type = builtin_datatype(dt);
  if (!type || count < 0) return false;
  const Comm* c = lookup_comm(comm);
  if (!c || c->inter || g_state->boot->fault_events()) [[unlikely]] return false;
  const bool any_source = receive && peer == MPI_ANY_SOURCE, any_tag = receive && tag == MPI_ANY_TAG;
  if ((uint32_t(peer) >= uint32_t(c->size) && !any_source) ||
      (uint32_t(tag) > uint32_t(tag::kMaxUserTag) && !any_tag)) [[unlikely]]
    return false;
  m->comm = c;
  m->type = type;
  m->count = size_t(count);
  m->bytes = type->packed * size_t(count);
  m->contiguous = true;
  m->offset = 0;
  if (m->bytes > 0) {
    if (!buf) [[unlikely]] return false;
    if (memkind_device_possible() && (describe_device_message(buf, m) != Status::ok || m->on_device)) return false;
  }
  if (receive) {
    m->peer = any_source ? kAnyPeer : c->world_ranks[size_t(peer)];
    set_recv_tag(m, peer, any_source, tag, any_tag);
  } else {
    m->peer = c->world_ranks[size_t(peer)];
    set_send_tag(m, tag);
  }
  return true;
}

// A device buffer travels as it is or staged through host memory; WEFT_REQUIRE_FAST_PATH may
// forbid the staging.
int choose_path(const char* fn, MPI_Comm comm, Message* m) {
  if (choose_device_path(*g_state->transport, m) != Status::ok) [[unlikely]]
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", error_detail().c_str());
  return MPI_SUCCESS;
}

// A peer known to have failed fails the call at once (under WEFT_FAULT_SCOPE=process, where
// the communicator's other failures do not: check_comm_alive).
int check_peer_alive(const char* fn, MPI_Comm comm, const Message& m) {
  if (!g_state->boot->fault_events() || m.peer < 0 || !g_state->boot->peer_failed(m.peer)) [[likely]]
    return MPI_SUCCESS;
  return raise(comm, MPIX_ERR_PROC_FAILED, fn, "%s", Transport::failure_detail(m.comm, m.peer).c_str());
}

// Every check of a send, reporting what fails (after quick_message has declined).
int check_send_fully(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                     MPI_Comm comm, Message* m) {
  *m = Message{};
  int rc = check_common(fn, buf, count, dt, comm, m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  const int size = m->comm->peer_count();
  if (dest == MPI_PROC_NULL) {
    m->peer = kNoPeer;
  } else if (dest < 0 || dest >= size) [[unlikely]] {
    return raise(comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'dest'; %s has %d ranks)",
                 dest, m->comm->label().c_str(), size);
  } else {
    m->peer = m->comm->peer_world_rank(dest);
  }
  if (int rc = check_peer_alive(fn, comm, *m)) [[unlikely]] return rc;
  if (tag < 0 || tag > tag::kMaxUserTag) [[unlikely]]
    return raise(comm, MPI_ERR_TAG, fn, "invalid tag %d (argument 'tag'; valid 0..%d)", tag,
                 tag::kMaxUserTag);
  set_send_tag(m, tag);
  return choose_path(fn, comm, m);
}

// Every check of a receive, reporting what fails (after quick_message has declined).
int check_recv_fully(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
                     MPI_Comm comm, Message* m) {
  *m = Message{};
  int rc = check_common(fn, buf, count, dt, comm, m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  const int size = m->comm->peer_count();
  if (source == MPI_PROC_NULL) m->peer = kNoPeer;
  else if (source == MPI_ANY_SOURCE) m->peer = kAnyPeer;
  else if (source < 0 || source >= size) [[unlikely]]
    return raise(comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'source'; %s has %d ranks)",
                 source, m->comm->label().c_str(), size);
  else m->peer = m->comm->peer_world_rank(source);
  if (int rc = check_peer_alive(fn, comm, *m)) [[unlikely]] return rc;
  if (tag != MPI_ANY_TAG && (tag < 0 || tag > tag::kMaxUserTag)) [[unlikely]]
    return raise(comm, MPI_ERR_TAG, fn, "invalid tag %d (argument 'tag'; valid 0..%d or MPI_ANY_TAG)",
                 tag, tag::kMaxUserTag);
  set_recv_tag(m, source, source == MPI_ANY_SOURCE, tag, tag == MPI_ANY_TAG);
  return choose_path(fn, comm, m);
}

}  // namespace

int check_send(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm, Message* m) {
  if (quick_message(buf, count, dt, dest, tag, comm, false, m)) [[likely]] return MPI_SUCCESS;
  return check_send_fully(fn, buf, count, dt, dest, tag, comm, m);
}

int check_recv(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
               MPI_Comm comm, Message* m) {
  if (quick_message(buf, count, dt, source, tag, comm, true, m)) [[likely]] return MPI_SUCCESS;
  return check_recv_fully(fn, buf, count, dt, source, tag, comm, m);
}

// The events of a blocking point-to-point call while a profiler consumer runs: the P2P
// operation and, under it, its message's TRANSFER, for the duration of the transport call.
class BlockingEvents {
 public:
  BlockingEvents(const char* fn, const char* kind, const Message& m, int tag)
      : op_(fn, peer_of(m), tag, m.bytes, m.comm->context_id),
        transfer_(profiler::wants(WEFT_PROFILER_TRANSFER) ? g_state->transport->transfer_event(kind, peer_of(m), m.bytes)
                                                          : nullptr) {}
  ~BlockingEvents() { profiler::stop(transfer_); }
  void fail(Status s) {
    op_.fail(s);
    profiler::failed(transfer_, s);
  }

 private:
  static int peer_of(const Message& m) { return m.peer == kAnyPeer ? -1 : m.peer; }
  profiler::P2pScope op_;
  void* transfer_;
};

// kProfiled: a profiler consumer runs (do_blocking_send decides once per call).
template <bool kProfiled>
[[gnu::always_inline]] inline int blocking_send(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt,
                                                int dest, int tag, MPI_Comm comm, SendMode mode) {
  Message m;
  // The common message straight to the transport (no packing or device step to take).
  if (quick_message(buf, count, dt, dest, tag, comm, false, &m)) [[likely]] {
    std::optional<BlockingEvents> events;
    if constexpr (kProfiled) events.emplace(fn, "send", m, tag);
    const Status s = g_state->transport->send(buf, m.bytes, m.peer, m.tag, mode, m.comm);
    if constexpr (kProfiled) if (s != Status::ok) events->fail(s);
    return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, fn);
  }
  int rc = check_send_fully(fn, buf, count, dt, dest, tag, comm, &m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (m.peer == kNoPeer) return MPI_SUCCESS;
  std::optional<BlockingEvents> events;
  if constexpr (kProfiled) events.emplace(fn, "send", m, tag);
  Status s = send(*g_state->transport, m, buf, mode);
  if (s != Status::ok) [[unlikely]] {
    if constexpr (kProfiled) events->fail(s);
    return raise_status(comm, s, fn);
  }
  return MPI_SUCCESS;
}

int do_blocking_send(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, int dest,
                     int tag, MPI_Comm comm, SendMode mode) {
  WEFT_REQUIRE_INIT(fn);
  if (profiler::active()) [[unlikely]] {
    profiler::ApiScope api(fn);
    return blocking_send<true>(fn, buf, count, dt, dest, tag, comm, mode);
  }
  return blocking_send<false>(fn, buf, count, dt, dest, tag, comm, mode);
}

int post_operation(const char* fn, bool receive, const void* buf, MPI_Count count, MPI_Datatype dt, int peer,
                   int tag, MPI_Comm comm, SendMode mode, Request** out) {
  Message m;
  int rc = receive ? check_recv(fn, buf, count, dt, peer, tag, comm, &m)
                   : check_send(fn, buf, count, dt, peer, tag, comm, &m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  *out = nullptr;
  if (m.peer == kNoPeer) return MPI_SUCCESS;
  Status s = post_immediate(*g_state->transport, g_state->requests, m, const_cast<void*>(buf), receive, mode, comm, out);
  if (s != Status::ok) [[unlikely]] return raise_status(comm, s, fn);
  if (*out && profiler::wants(WEFT_PROFILER_TRANSFER)) [[unlikely]]
    (*out)->profile = g_state->transport->transfer_event(receive ? "recv" : "send", m.peer == kAnyPeer ? -1 : m.peer,
                                                          m.bytes);
  return MPI_SUCCESS;
}

template <bool kProfiled>
[[gnu::always_inline]] inline int immediate(const char* fn, bool receive, const void* buf, MPI_Count count,
                                            MPI_Datatype dt, int peer, int tag, MPI_Comm comm, SendMode mode,
                                            MPI_Request* request) {
  // The common message goes straight to the transport: contiguous host memory needs none of
  // post_immediate's packing or device steps.
  if (Message m; request && quick_message(buf, count, dt, peer, tag, comm, receive, &m)) [[likely]] {
    Request* r = g_state->requests.alloc(receive ? RequestKind::recv : RequestKind::send);
    r->owner = comm;
    Transport& t = *g_state->transport;
    const Status s = receive ? t.irecv(const_cast<void*>(buf), m.bytes, m.peer == kAnyPeer ? -1 : m.peer, m.tag,
                                       m.mask, r)
                             : t.isend(buf, m.bytes, m.peer, m.tag, mode, r);
    if (s != Status::ok) [[unlikely]] {
      g_state->requests.release(r);
      return raise_status(comm, s, fn);
    }
    if constexpr (kProfiled)
      if (profiler::wants(WEFT_PROFILER_TRANSFER))
        r->profile = t.transfer_event(receive ? "recv" : "send", m.peer == kAnyPeer ? -1 : m.peer, m.bytes);
    *request = request_handle(r);
    return MPI_SUCCESS;
  }
  if (!request) [[unlikely]] {
    Message m;  // the arguments' errors first, as before the request
    int rc = receive ? check_recv(fn, buf, count, dt, peer, tag, comm, &m)
                     : check_send(fn, buf, count, dt, peer, tag, comm, &m);
    return rc != MPI_SUCCESS ? rc : raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  }
  Request* r;
  int rc = post_operation(fn, receive, buf, count, dt, peer, tag, comm, mode, &r);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (!r) r = completed_request(g_state->requests, receive ? RequestKind::recv : RequestKind::send, proc_null_status());
  *request = request_handle(r);
  return MPI_SUCCESS;
}

int do_immediate(const char* fn, bool receive, const void* buf, MPI_Count count, MPI_Datatype dt, int peer,
                 int tag, MPI_Comm comm, SendMode mode, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  if (profiler::active()) [[unlikely]] {
    profiler::ApiScope api(fn);
    return immediate<true>(fn, receive, buf, count, dt, peer, tag, comm, mode, request);
  }
  return immediate<false>(fn, receive, buf, count, dt, peer, tag, comm, mode, request);
}

namespace {

template <bool kProfiled>
[[gnu::always_inline]] inline int blocking_recv(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt,
                                                int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Message m;
  if (quick_message(buf, count, dt, source, tag, comm, true, &m)) [[likely]] {
    std::optional<BlockingEvents> events;
    if constexpr (kProfiled) events.emplace(fn, "recv", m, tag);
    MatchInfo info;
    const Status s = g_state->transport->recv(buf, m.bytes, m.peer == kAnyPeer ? -1 : m.peer, m.tag, m.mask, &info,
                                              m.comm);
    fill_status(status, RequestStatus{info.source, info.tag, info.bytes});
    if constexpr (kProfiled) if (s != Status::ok) events->fail(s);
    return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, fn);
  }
  int rc = check_recv_fully(fn, buf, count, dt, source, tag, comm, &m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (m.peer == kNoPeer) {
    set_status_proc_null(status);
    return MPI_SUCCESS;
  }
  std::optional<BlockingEvents> events;
  if constexpr (kProfiled) events.emplace(fn, "recv", m, tag);
  RequestStatus rs;
  Status s = recv(*g_state->transport, m, buf, &rs);
  fill_status(status, rs);
  if (s != Status::ok) [[unlikely]] {
    if constexpr (kProfiled) events->fail(s);
    return raise_status(comm, s, fn);
  }
  return MPI_SUCCESS;
}

int do_recv(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
            MPI_Comm comm, MPI_Status* status) {
  WEFT_REQUIRE_INIT(fn);
  if (profiler::active()) [[unlikely]] {
    profiler::ApiScope api(fn);
    return blocking_recv<true>(fn, buf, count, dt, source, tag, comm, status);
  }
  return blocking_recv<false>(fn, buf, count, dt, source, tag, comm, status);
}

// Buffered send; immediate (MPI_Ibsend): *request is a request already complete.
int do_bsend(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
             bool immediate, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  Message m;
  int rc = check_send(fn, buf, count, dt, dest, tag, comm, &m);
  if (rc != MPI_SUCCESS) return rc;
  if (immediate && !request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  uint64_t copy = 0;
  if (m.peer != kNoPeer) {
    copy_out_of_device(&m);
    if (Status s = bsend(*g_state->transport, bsend_scopes(*lookup_comm_entry(comm)).pick(), m, buf, &copy);
        s != Status::ok)
      return raise_status(comm, s, fn);
  }
  if (immediate) {  // the data was copied: the user's buffer is free again
    Request* r = completed_request(g_state->requests, RequestKind::send, RequestStatus{});
    r->buffered = copy;  // what MPI_Cancel recalls
    *request = request_handle(r);
  }
  return MPI_SUCCESS;
}

int make_persistent(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt, int peer_rank, int tag,
                    MPI_Comm comm, PersistentKind kind, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  Message m;
  int rc = kind == PersistentKind::recv ? check_recv(fn, buf, count, dt, peer_rank, tag, comm, &m)
                                        : check_send(fn, buf, count, dt, peer_rank, tag, comm, &m);
  if (rc != MPI_SUCCESS) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  if (kind == PersistentKind::bsend) copy_out_of_device(&m);
  *request = request_handle(persistent_request(*g_state->transport, g_state->requests, m, buf, kind,
                                               bsend_scopes(*lookup_comm_entry(comm)), proc_null_status(), comm));
  return MPI_SUCCESS;
}

// MPI_Psend_init and MPI_Precv_init: `partitions` partitions of `count` elements each.
int make_partitioned(const char* fn, void* buf, int partitions, MPI_Count count, MPI_Datatype dt, int peer_rank,
                     int tag, MPI_Comm comm, MPI_Info info, bool receive, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  if (partitions < 1) return raise(comm, MPI_ERR_ARG, fn, "invalid partitions %d (at least 1)", partitions);
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %ld (argument 'count')", long(count));
  if (count > INT_MAX / partitions)
    return raise(comm, MPI_ERR_COUNT, fn, "%d partitions of %ld elements: more than INT_MAX in all", partitions,
                 long(count));
  if (receive && (peer_rank == MPI_ANY_SOURCE || tag == MPI_ANY_TAG))
    return raise(comm, receive && peer_rank == MPI_ANY_SOURCE ? MPI_ERR_RANK : MPI_ERR_TAG, fn,
                 "a partitioned receive takes no wildcard source or tag");
  const int total = int(count) * partitions;
  Message m;
  int rc = receive ? check_recv(fn, buf, total, dt, peer_rank, tag, comm, &m)
                   : check_send(fn, buf, total, dt, peer_rank, tag, comm, &m);
  if (rc != MPI_SUCCESS) return rc;
  if (info != MPI_INFO_NULL && !lookup_info(info)) return raise(comm, MPI_ERR_INFO, fn, "invalid info 0x%x", unsigned(info));
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  *request = request_handle(partitioned_request(*g_state->transport, g_state->requests, g_state->partitioned, m, buf,
                                                partitions, peer_rank, tag, receive, proc_null_status(), comm));
  return MPI_SUCCESS;
}

// The partitioned request behind h, or the error raised.
int partitioned_of(const char* fn, MPI_Request h, Request** out) {
  WEFT_REQUIRE_INIT(fn);
  Request* r = lookup_request(h);
  if (!r || !g_state->partitioned.state_of(*r))
    return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "not a partitioned request (0x%x)", unsigned(h));
  *out = r;
  return MPI_SUCCESS;
}

int ready(const char* fn, Request* r, int partition) {
  if (Status s = mark_ready(g_state->partitioned, *r, partition); s != Status::ok) return raise_status(r->owner, s, fn);
  return MPI_SUCCESS;
}

}  // namespace

void set_status_proc_null(MPI_Status* st) { fill_status(st, proc_null_status()); }

// MPI's empty status: MPI_ANY_SOURCE, MPI_ANY_TAG, no data, not cancelled, and MPI_SUCCESS.
void set_status_empty(MPI_Status* st) {
  fill_status(st, RequestStatus{MPI_ANY_SOURCE, MPI_ANY_TAG, 0});
  if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = MPI_SUCCESS;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

// The three forms of a send mode from one line: blocking, immediate and persistent, with counts
// of type Count and the names' suffix c (_c: the large-count forms). Ready mode sends as
// standard: the matching receive is posted, so the semantics are the same.
#define WEFT_SEND_FORMS(Blocking, Immediate, Persistent, mode, kind, Count, c)                                     \
  int PMPI_##Blocking##c(const void* buf, Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {      \
    WEFT_ENTRY;                                                                                                  \
    return do_blocking_send("MPI_" #Blocking #c, buf, count, dt, dest, tag, comm, SendMode::mode);               \
  }                                                                                                               \
  int PMPI_##Immediate##c(const void* buf, Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,       \
                          MPI_Request* request) {                                                                 \
    WEFT_ENTRY;                                                                                                  \
    return do_immediate("MPI_" #Immediate #c, false, buf, count, dt, dest, tag, comm, SendMode::mode, request);  \
  }                                                                                                               \
  int PMPI_##Persistent##c(const void* buf, Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,      \
                           MPI_Request* request) {                                                                \
    WEFT_ENTRY;                                                                                                  \
    return make_persistent("MPI_" #Persistent #c, const_cast<void*>(buf), count, dt, dest, tag, comm,            \
                           PersistentKind::kind, request);                                                        \
  }

// Every point-to-point binding that takes a count, for counts of type Count and the suffix c.
#define WEFT_PT2PT_BINDINGS(Count, c)                                                                             \
  WEFT_SEND_FORMS(Send, Isend, Send_init, standard, send, Count, c)                                               \
  WEFT_SEND_FORMS(Ssend, Issend, Ssend_init, synchronous, ssend, Count, c)                                        \
  WEFT_SEND_FORMS(Rsend, Irsend, Rsend_init, standard, send, Count, c)                                            \
  int PMPI_Bsend##c(const void* buf, Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {           \
    WEFT_ENTRY;                                                                                                  \
    return do_bsend("MPI_Bsend" #c, buf, count, dt, dest, tag, comm, false, nullptr);                            \
  }                                                                                                               \
  int PMPI_Ibsend##c(const void* buf, Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,            \
                     MPI_Request* request) {                                                                      \
    WEFT_ENTRY;                                                                                                  \
    return do_bsend("MPI_Ibsend" #c, buf, count, dt, dest, tag, comm, true, request);                            \
  }                                                                                                               \
  int PMPI_Bsend_init##c(const void* buf, Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,        \
                         MPI_Request* request) {                                                                  \
    WEFT_ENTRY;                                                                                                  \
    return make_persistent("MPI_Bsend_init" #c, const_cast<void*>(buf), count, dt, dest, tag, comm,              \
                           PersistentKind::bsend, request);                                                       \
  }                                                                                                               \
  int PMPI_Recv##c(void* buf, Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,                  \
                   MPI_Status* status) {                                                                          \
    WEFT_ENTRY;                                                                                                  \
    return do_recv("MPI_Recv" #c, buf, count, dt, source, tag, comm, status);                                    \
  }                                                                                                               \
  int PMPI_Irecv##c(void* buf, Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,                 \
                    MPI_Request* request) {                                                                       \
    WEFT_ENTRY;                                                                                                  \
    return do_immediate("MPI_Irecv" #c, true, buf, count, dt, source, tag, comm, SendMode::standard, request);   \
  }                                                                                                               \
  int PMPI_Recv_init##c(void* buf, Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,             \
                        MPI_Request* request) {                                                                   \
    WEFT_ENTRY;                                                                                                   \
    return make_persistent("MPI_Recv_init" #c, buf, count, dt, source, tag, comm, PersistentKind::recv, request); \
  }

WEFT_PT2PT_BINDINGS(int, )
WEFT_PT2PT_BINDINGS(MPI_Count, _c)
#undef WEFT_PT2PT_BINDINGS
#undef WEFT_SEND_FORMS

}  // extern "C"

namespace weft::mpi {

BsendScopes bsend_scopes(CommEntry& e) {
  if (!e.bsend) e.bsend = std::make_shared<BufferedSends>();
  BsendScopes scopes{e.bsend, nullptr, g_state->bsend};
  if (SessionEntry* s = e.session != MPI_SESSION_NULL ? lookup_session(e.session) : nullptr) {
    if (!s->bsend) s->bsend = std::make_shared<BufferedSends>();
    scopes.session = s->bsend;
  }
  return scopes;
}

BufferedSends& buffered_sends_of(int comm) {
  CommEntry* e = lookup_comm_entry(MPI_Comm(comm));
  return e ? bsend_scopes(*e).pick() : *g_state->bsend;
}

int attach_buffer(const char* fn, BufferedSends& b, void* buffer, MPI_Count size, const BufferFail& fail) {
  WEFT_REQUIRE_INIT(fn);
  if (b.attached()) return fail(MPI_ERR_BUFFER, "a buffer is already attached");
  if (buffer == MPI_BUFFER_AUTOMATIC) {  // copies of any size, no bound: the size is not used
    b.automatic = true;
    return MPI_SUCCESS;
  }
  if (size < 0) return fail(MPI_ERR_ARG, "negative size " + std::to_string(size));
  if (!buffer && size > 0) return fail(MPI_ERR_BUFFER, "NULL buffer");
  b.buffer = static_cast<char*>(buffer);
  b.capacity = size_t(size);
  return MPI_SUCCESS;
}

int detach_buffer(const char* fn, BufferedSends& b, void* buffer_addr, MPI_Count* size, MPI_Count max,
                  const BufferFail& fail) {
  WEFT_REQUIRE_INIT(fn);
  if (!buffer_addr || !size) return fail(MPI_ERR_ARG, "buffer_addr or size is NULL");
  if (MPI_Count(b.capacity) > max)
    return fail(MPI_ERR_VALUE_TOO_LARGE,
                "the attached buffer's size " + std::to_string(b.capacity) + " exceeds " + std::to_string(max));
  *static_cast<void**>(buffer_addr) = b.automatic ? MPI_BUFFER_AUTOMATIC : b.buffer;
  *size = b.automatic ? 0 : MPI_Count(b.capacity);
  detach(*g_state->transport, b);
  return MPI_SUCCESS;
}

int iflush_buffer(const char* fn, BufferedSends& b, MPI_Request* request, const BufferFail& fail) {
  WEFT_REQUIRE_INIT(fn);
  if (!request) return fail(MPI_ERR_ARG, "request is NULL");
  Request* r = g_state->requests.alloc(RequestKind::coll);
  iflush(*g_state->transport, b, r);
  *request = request_handle(r);
  return MPI_SUCCESS;
}

}  // namespace weft::mpi

namespace {

// Errors of the process's and a communicator's attached space.
BufferFail fail_on(MPI_Comm comm, const char* fn) {
  return [comm, fn](int error_class, const std::string& detail) {
    return raise(comm, error_class, fn, "%s", detail.c_str());
  };
}

// The communicator's own space (MPI_Comm_*_buffer); MPI_ERR_COMM raised for an invalid comm.
int comm_buffer(const char* fn, MPI_Comm comm, BufferedSends** out) {
  CommEntry* e;
  if (int rc = comm_entry_of(fn, comm, &e)) return rc;
  *out = bsend_scopes(*e).comm.get();
  return MPI_SUCCESS;
}

int comm_attach(const char* fn, MPI_Comm comm, void* buffer, MPI_Count size) {
  BufferedSends* b;
  if (int rc = comm_buffer(fn, comm, &b)) return rc;
  return attach_buffer(fn, *b, buffer, size, fail_on(comm, fn));
}

int comm_detach(const char* fn, MPI_Comm comm, void* buffer_addr, MPI_Count* size, MPI_Count max) {
  BufferedSends* b;
  if (int rc = comm_buffer(fn, comm, &b)) return rc;
  return detach_buffer(fn, *b, buffer_addr, size, max, fail_on(comm, fn));
}

}  // namespace

extern "C" {

int PMPI_Buffer_attach(void* buffer, int size) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Buffer_attach");
  return attach_buffer("MPI_Buffer_attach", *g_state->bsend, buffer, size, fail_on(MPI_COMM_NULL, "MPI_Buffer_attach"));
}
int PMPI_Buffer_attach_c(void* buffer, MPI_Count size) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Buffer_attach_c");
  return attach_buffer("MPI_Buffer_attach_c", *g_state->bsend, buffer, size,
                       fail_on(MPI_COMM_NULL, "MPI_Buffer_attach_c"));
}

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Buffer_detach");
  MPI_Count n = 0;
  int rc = detach_buffer("MPI_Buffer_detach", *g_state->bsend, buffer_addr, size ? &n : nullptr, INT32_MAX,
                         fail_on(MPI_COMM_NULL, "MPI_Buffer_detach"));
  if (rc == MPI_SUCCESS) *size = int(n);
  return rc;
}

int PMPI_Buffer_detach_c(void* buffer_addr, MPI_Count* size) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Buffer_detach_c");
  return detach_buffer("MPI_Buffer_detach_c", *g_state->bsend, buffer_addr, size, INT64_MAX,
                       fail_on(MPI_COMM_NULL, "MPI_Buffer_detach_c"));
}

int PMPI_Buffer_flush(void) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Buffer_flush");
  flush(*g_state->transport, *g_state->bsend);
  return MPI_SUCCESS;
}

int PMPI_Buffer_iflush(MPI_Request* request) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Buffer_iflush");
  return iflush_buffer("MPI_Buffer_iflush", *g_state->bsend, request, fail_on(MPI_COMM_NULL, "MPI_Buffer_iflush"));
}

int PMPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size) {
  WEFT_ENTRY;
  return comm_attach("MPI_Comm_attach_buffer", comm, buffer, size);
}

int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void* buffer, MPI_Count size) {
  WEFT_ENTRY;
  return comm_attach("MPI_Comm_attach_buffer_c", comm, buffer, size);
}

int PMPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size) {
  WEFT_ENTRY;
  MPI_Count n = 0;
  int rc = comm_detach("MPI_Comm_detach_buffer", comm, buffer_addr, size ? &n : nullptr, INT32_MAX);
  if (rc == MPI_SUCCESS) *size = int(n);
  return rc;
}

int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void* buffer_addr, MPI_Count* size) {
  WEFT_ENTRY;
  return comm_detach("MPI_Comm_detach_buffer_c", comm, buffer_addr, size, INT64_MAX);
}

int PMPI_Comm_flush_buffer(MPI_Comm comm) {
  WEFT_ENTRY;
  const char* fn = "MPI_Comm_flush_buffer";
  BufferedSends* b;
  if (int rc = comm_buffer(fn, comm, &b)) return rc;
  flush(*g_state->transport, *b);
  return MPI_SUCCESS;
}

int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request* request) {
  WEFT_ENTRY;
  const char* fn = "MPI_Comm_iflush_buffer";
  BufferedSends* b;
  if (int rc = comm_buffer(fn, comm, &b)) return rc;
  return iflush_buffer(fn, *b, request, fail_on(comm, fn));
}

int PMPI_Psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  WEFT_ENTRY;
  return make_partitioned("MPI_Psend_init", const_cast<void*>(buf), partitions, count, dt, dest, tag, comm, info,
                          false, request);
}

int PMPI_Precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype dt, int source, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  WEFT_ENTRY;
  return make_partitioned("MPI_Precv_init", buf, partitions, count, dt, source, tag, comm, info, true, request);
}

int PMPI_Pready(int partition, MPI_Request request) {
  WEFT_ENTRY;
  Request* r;
  if (int rc = partitioned_of("MPI_Pready", request, &r)) return rc;
  return ready("MPI_Pready", r, partition);
}

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
  WEFT_ENTRY;
  Request* r;
  if (int rc = partitioned_of("MPI_Pready_range", request, &r)) return rc;
  for (int p = partition_low; p <= partition_high; ++p)
    if (int rc = ready("MPI_Pready_range", r, p)) return rc;
  return MPI_SUCCESS;
}

int PMPI_Pready_list(int length, int partitions[], MPI_Request request) {
  WEFT_ENTRY;
  Request* r;
  if (int rc = partitioned_of("MPI_Pready_list", request, &r)) return rc;
  if (length > 0 && !partitions)
    return raise(r->owner, MPI_ERR_ARG, "MPI_Pready_list", "array_of_partitions is NULL");
  for (int i = 0; i < length; ++i)
    if (int rc = ready("MPI_Pready_list", r, partitions[i])) return rc;
  return MPI_SUCCESS;
}

int PMPI_Parrived(MPI_Request request, int partition, int* flag) {
  WEFT_ENTRY;
  Request* r;
  if (int rc = partitioned_of("MPI_Parrived", request, &r)) return rc;
  if (!flag) return raise(r->owner, MPI_ERR_ARG, "MPI_Parrived", "flag is NULL");
  bool arrived = false;
  if (Status s = partition_arrived(g_state->partitioned, *g_state->transport, *r, partition, &arrived); s != Status::ok)
    return raise_status(r->owner, s, "MPI_Parrived");
  *flag = arrived;
  return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request* request) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Start");
  if (!request) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Start", "request is NULL");
  Request* r = lookup_request(*request);
  if (!r || !r->persistent)
    return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Start", "not a persistent request (0x%x)", unsigned(*request));
  if (r->active) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Start", "request is already active");
  r->status = RequestStatus{};
  Status s = r->start(*r);
  if (s != Status::ok) return raise_status(MPI_COMM_NULL, s, "MPI_Start");
  r->active = true;
  return MPI_SUCCESS;
}

int PMPI_Startall(int count, MPI_Request requests[]) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Startall");
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Startall", "negative count %d", count);
  if (count > 0 && !requests) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Startall", "requests is NULL");
  for (int i = 0; i < count; ++i) {
    int rc = PMPI_Start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Send, Ssend, Rsend, Bsend, Isend, Issend, Irsend, Ibsend, Buffer_attach,
                  Buffer_detach, Recv, Irecv, Send_init, Ssend_init, Rsend_init, Bsend_init, Recv_init,
                  Start, Startall, Psend_init, Precv_init, Pready, Pready_range, Pready_list, Parrived)
WEFT_PMPI_ALIASES(Buffer_flush, Buffer_iflush, Comm_attach_buffer, Comm_detach_buffer, Comm_flush_buffer,
                  Comm_iflush_buffer, Comm_attach_buffer_c, Comm_detach_buffer_c)
WEFT_PMPI_ALIASES(Send_c, Ssend_c, Rsend_c, Bsend_c, Isend_c, Issend_c, Irsend_c, Ibsend_c, Buffer_attach_c,
                  Buffer_detach_c, Recv_c, Irecv_c, Send_init_c, Ssend_init_c, Rsend_init_c, Bsend_init_c,
                  Recv_init_c)
