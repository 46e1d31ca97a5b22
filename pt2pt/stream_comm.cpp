// Stream communicators and the steps the *_enqueue calls share (stream_comm.h).
#include "stream_comm.h"

#include <mutex>
#include <unordered_map>

#include "runtime/typemap.h"

namespace weft {

namespace {

struct StreamComms {
  std::mutex mu;
  std::unordered_map<uint32_t, std::unique_ptr<StreamComm>> by_context;
};
StreamComms& stream_comms() {
  static StreamComms t;
  return t;
}

}  // namespace

void add_stream_comm(const Comm& c, std::unique_ptr<StreamComm> sc) {
  StreamComms& t = stream_comms();
  std::lock_guard<std::mutex> lock(t.mu);
  t.by_context[c.context_id] = std::move(sc);
}

const StreamComm* find_stream_comm(const Comm& c) {
  StreamComms& t = stream_comms();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_context.find(c.context_id);
  return it == t.by_context.end() ? nullptr : it->second.get();
}

void release_stream_comm(const Comm& c) {
  std::unique_ptr<StreamComm> sc;
  {
    StreamComms& t = stream_comms();
    std::lock_guard<std::mutex> lock(t.mu);
    auto it = t.by_context.find(c.context_id);
    if (it == t.by_context.end()) return;
    sc = std::move(it->second);
    t.by_context.erase(it);
  }
  stream_drain(sc->stream);  // before the communicator's GPU workspace goes
}

Status stream_route_end(const char* fn, const char* what, const StreamComm& sc, const StreamRoute& route,
                        bool require_fast_path, bool* host_call) {
  if (route.path == StreamPath::native) {
    *host_call = false;
    return Status::ok;
  }
  if (route.path == StreamPath::fallback)
    WEFT_TRY(stream_host_fallback(sc.stream.cuda, fn, what, route.why, require_fast_path));
  *host_call = true;
  return Status::ok;
}

StreamSpan stream_span(const Datatype* d, const void* buf, size_t count) {
  ptrdiff_t offset = 0;
  const bool contiguous = type_is_contiguous(d, count, &offset);
  return {static_cast<char*>(const_cast<void*>(buf)) + offset, d->packed * count, contiguous};
}

Status stream_send(const char* fn, Transport& t, const Comm& c, const StreamComm& sc, const StreamSpan& m, int dest,
                   int tag, Request** request, StreamRoute* route) {
  route->why = sc.p2p.native_why(fn, c, dest, false, m.contiguous, m.at, m.bytes);
  route->path = route->why.empty() ? StreamPath::native : StreamPath::fallback;
  if (route->path == StreamPath::fallback) return Status::ok;
  return sc.p2p.send(t, c, sc.stream, m.at, m.bytes, dest, tag, request);
}

Status stream_recv(const char* fn, Transport& t, const Comm& c, const StreamComm& sc, const StreamSpan& m,
                   int source, int tag, bool wildcard, RequestStatus* rs, Request** request, StreamRoute* route) {
  route->why = sc.p2p.native_why(fn, c, source, wildcard, m.contiguous, m.at, m.bytes);
  route->path = route->why.empty() ? StreamPath::native : StreamPath::fallback;
  if (route->path == StreamPath::fallback) return Status::ok;
  if (request) return sc.p2p.irecv(t, c, sc.stream, m.at, m.bytes, source, tag, request);
  return sc.p2p.recv(t, c, sc.stream, m.at, m.bytes, source, tag, rs);
}

void complete_stream_native(Transport& t, std::vector<StreamWait>* waits,
                            const std::function<void(const StreamWait&)>& done) {
  for (StreamWait& w : *waits) w.native = StreamP2p::is_native(*w.request);
  for (StreamWait& w : *waits) {
    if (!w.native) continue;
    w.status = w.sc->p2p.complete(t, *w.comm, w.sc->stream, w.request, &w.rs);
    w.request = nullptr;  // released
    done(w);
  }
}

Status sync_host_streams(const char* fn, const std::vector<StreamWait>& waits, bool require_fast_path,
                         const StreamWait** failed) {
  const StreamRoute route{StreamPath::fallback, ""};
  for (size_t i = 0; i < waits.size(); ++i) {
    const StreamWait& w = waits[i];
    bool first = !w.native;
    for (size_t j = 0; first && j < i; ++j) first = waits[j].native || waits[j].sc->stream.cuda != w.sc->stream.cuda;
    if (!first) continue;
    bool host_call = false;
    const Status s = stream_route_end(fn, "waits from the host", *w.sc, route, require_fast_path, &host_call);
    if (s != Status::ok) {
      *failed = &w;
      return s;
    }
  }
  return Status::ok;
}

}  // namespace weft
