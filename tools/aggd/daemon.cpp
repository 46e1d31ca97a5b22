// weft-aggd's event loop: accepting (up to the connection limit), reading frames into the
// Aggregator, flushing output queues, the handshake and idle deadlines, and closing
// connections (an ERROR is flushed first, then the daemon lingers briefly for the peer's end
// of stream so the ERROR is not lost to a reset).
#include "tools/aggd/daemon.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace weft::aggd {

namespace {

constexpr size_t kReadBudget = 1 << 20;  // per connection and round, so one client cannot starve the rest
constexpr auto kLinger = std::chrono::seconds(2);
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
// Before authentication a connection buffers at most one HELLO; after it, enough for many
// small frames per recv (a FRAG grows the buffer to its size, checked from its header).
constexpr size_t kHandshakeBuffer = sizeof(FrameHeader) + sizeof(HelloPayload);
constexpr size_t kMemberBuffer = 64 * 1024;
// Closed connections between hand-backs of freed memory to the system.
constexpr size_t kTrimAfterClosed = 64;

}  // namespace

Daemon::Daemon(const Aggregator::Options& options, const Limits& limits, std::vector<Listener> listeners, int wake_fd)
    : options_(options), limits_(limits), aggregator_(options), listeners_(std::move(listeners)), wake_fd_(wake_fd) {
  // A client that reads its RESULTs holds at most a window of them; twice that plus slack
  // before its input is paused.
  output_limit_ = 2 * size_t(options.window) * (sizeof(FrameHeader) + sizeof(FragPayload) + options.fragment_bytes) +
                  64 * 1024;
}

Daemon::~Daemon() {
  for (auto& c : connections_) ::close(c->fd);
  for (auto& l : listeners_) {
    ::close(l.fd);
    if (l.address.kind == Address::Kind::unix_socket) unlink(l.address.path.c_str());
  }
}

bool Daemon::wants_input(const Connection& c) const {
  if (c.eof || c.dead) return false;
  if (c.client.closing) return true;  // read (and drop) until the peer's end of stream
  return c.client.out.size() <= output_limit_;
}

bool Daemon::run() {
  std::vector<pollfd> fds;
  for (;;) {
    const auto now = Clock::now();
    const bool accepting = now >= accept_paused_until_;
    const Clock::time_point next_deadline = enforce_deadlines(now);
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    for (const auto& l : listeners_) fds.push_back({l.fd, short(accepting ? POLLIN : 0), 0});
    const size_t first_conn = fds.size();
    int timeout_ms = accepting ? -1 : int(kAcceptPause.count());
    for (const auto& c : connections_) {
      short events = 0;
      if (wants_input(*c)) events |= POLLIN;
      if (!c->client.out.empty()) events |= POLLOUT;
      fds.push_back({c->fd, events, 0});
    }
    if (next_deadline != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - now).count() + 1;
      const int wait = int(std::clamp<int64_t>(left, 0, 60000));
      timeout_ms = timeout_ms < 0 ? wait : std::min(timeout_ms, wait);
    }
    const int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) {
      fprintf(stderr, "weft-aggd: poll failed: %s\n", strerror(errno));
      return false;
    }
    if (n > 0 && (fds[0].revents & POLLIN)) return true;

    const size_t polled = connections_.size();  // accepting below appends
    for (size_t i = 0; n > 0 && i < polled; ++i) {
      Connection& c = *connections_[i];
      const short re = fds[first_conn + i].revents;
      if (re & POLLOUT) write_to(c);
      if (!c.dead && (re & (POLLIN | POLLHUP | POLLERR))) read_from(c);
    }
    for (size_t i = 0; n > 0 && i < listeners_.size(); ++i)
      if (fds[1 + i].revents & POLLIN) accept_from(listeners_[i]);

    // Frames of one client queue RESULTs, WELCOMEs and ERRORs for others: send them now.
    const auto after = Clock::now();
    for (auto& c : connections_) {
      if (!c->dead && !c->client.out.empty()) write_to(*c);
      if (!c->dead) advance_closing(*c, after);
    }
    const size_t before = connections_.size();
    std::erase_if(connections_, [](const std::unique_ptr<Connection>& c) {
      if (c->dead) ::close(c->fd);
      return c->dead;
    });
    closed_since_trim_ += before - connections_.size();
    if (closed_since_trim_ >= kTrimAfterClosed && connections_.size() < before) {
      // Many connections went at once (a burst of idle or refused ones): give their memory
      // back rather than keep the peak for the daemon's life.
      if (connections_.capacity() > 4 * connections_.size() + 64) connections_.shrink_to_fit();
      if (fds.capacity() > 4 * fds.size() + 64) fds.shrink_to_fit();
#ifdef __GLIBC__
      malloc_trim(0);
#endif
      closed_since_trim_ = 0;
    }
  }
}

Daemon::Clock::time_point Daemon::enforce_deadlines(Clock::time_point now) {
  Clock::time_point next = Clock::time_point::max();
  for (auto& cp : connections_) {
    Connection& c = *cp;
    if (c.dead) continue;
    if (c.client.closing) {
      if (c.linger_until != Clock::time_point{}) next = std::min(next, c.linger_until);
      continue;
    }
    if (!c.client.said_hello) {
      if (now >= c.handshake_until) {
        aggregator_.expire(c.client, "no authenticated HELLO within " + std::to_string(limits_.handshake.count()) +
                                         " ms of connecting");
        advance_closing(c, now);
        if (c.linger_until != Clock::time_point{}) next = std::min(next, c.linger_until);
      } else {
        next = std::min(next, c.handshake_until);
      }
      continue;
    }
    if (limits_.idle.count() == 0) continue;
    if (aggregator_.in_operation(c.client)) {
      c.was_in_operation = true;
      continue;
    }
    if (c.was_in_operation) {  // the idle time counts from the end of the group's last operation
      c.was_in_operation = false;
      c.last_input = now;
    }
    const auto idle_until = c.last_input + limits_.idle;
    if (now >= idle_until) {
      aggregator_.expire(c.client, "idle for " + std::to_string(limits_.idle.count() / 1000) +
                                       " s with no operation in flight (weft-aggd --idle-timeout)");
      advance_closing(c, now);
      if (c.linger_until != Clock::time_point{}) next = std::min(next, c.linger_until);
    } else {
      next = std::min(next, idle_until);
    }
  }
  return next;
}

void Daemon::refuse_over_limit(int fd) {
  ++over_limit_;
  ByteQueue q;
  put_error(q, WEFT_OFFLOAD_ERR_NETWORK,
            "too many connections: this daemon serves at most " + std::to_string(limits_.max_connections) +
                " at once (weft-aggd --max-connections)");
  (void)q.flush(fd);  // a fresh socket's buffer takes one frame; the peer has sent nothing yet
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

void Daemon::accept_from(const Listener& l) {
  for (;;) {
    const int fd = ::accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      // Out of descriptors or memory: keep serving the connections there are, retry later.
      fprintf(stderr, "weft-aggd: cannot accept on %s: %s; retrying in %lld ms\n", to_string(l.address).c_str(),
              strerror(errno), (long long)kAcceptPause.count());
      accept_paused_until_ = Clock::now() + kAcceptPause;
      return;
    }
    if (connections_.size() >= limits_.max_connections) {
      refuse_over_limit(fd);
      continue;
    }
    if (l.address.kind == Address::Kind::tcp) {
      set_tcp_nodelay(fd);
      set_tcp_keepalive(fd);
    }
    const auto now = Clock::now();
    DecodeLimits dl;
    dl.reader = Reader::daemon;
    dl.fragment_bytes = options_.fragment_bytes;
    dl.handshake = true;
    auto c = std::make_unique<Connection>(fd, now, dl, kHandshakeBuffer);
    c->handshake_until = now + limits_.handshake;
    c->client.id = ++next_id_;
    c->client.name = "connection " + std::to_string(c->client.id);
    aggregator_.on_connect(c->client);
    connections_.push_back(std::move(c));
  }
}

void Daemon::lost(Connection& c, const std::string& why) {
  aggregator_.on_disconnect(c.client, why);
  c.dead = true;
}

void Daemon::read_from(Connection& c) {
  size_t budget = kReadBudget;
  while (budget > 0 && !c.dead) {
    const ssize_t n = c.reader.fill(c.fd, budget);
    if (n == -EAGAIN) return;
    if (n < 0) {
      if (c.client.closing)
        c.dead = true;
      else
        lost(c, std::string("its connection failed: ") + strerror(int(-n)));
      return;
    }
    if (n == 0) {
      c.eof = true;
      if (c.client.closing) return;  // advance_closing ends it once the ERROR is out
      if (c.reader.buffered() > 0) {
        // The peer may have shut down only its sending side: it can still read the ERROR.
        aggregator_.on_malformed(c.client, "the stream ended inside a frame (" + std::to_string(c.reader.buffered()) +
                                               " bytes of it arrived)");
        c.reader.discard();
      } else {
        lost(c, "it closed its connection");
      }
      return;
    }
    budget -= size_t(n);
    c.last_input = Clock::now();
    if (c.client.closing) {
      c.reader.discard();
      continue;
    }
    Frame f;
    std::string why;
    for (;;) {
      const auto next = c.reader.next(&f, &why);
      if (next == FrameReader::Next::need_more) break;
      if (next == FrameReader::Next::malformed) {
        aggregator_.on_malformed(c.client, why);
        break;
      }
      aggregator_.on_frame(c.client, f);
      if (c.client.closing) break;
      if (c.reader.in_handshake() && c.client.said_hello) c.reader.end_handshake(kMemberBuffer);
    }
    if (c.client.closing) c.reader.discard();
    if (!wants_input(c)) return;  // its output is backed up: let it read first
  }
}

void Daemon::write_to(Connection& c) {
  const ssize_t n = c.client.out.flush(c.fd);
  if (n >= 0) return;
  if (c.client.closing)
    c.dead = true;
  else
    lost(c, std::string("writing to it failed: ") + strerror(int(-n)));
}

void Daemon::advance_closing(Connection& c, Clock::time_point now) {
  if (!c.client.closing) return;
  if (!c.shut_write) {
    if (!c.client.out.empty()) {
      // A peer that never reads cannot hold the connection forever either.
      if (c.linger_until == Clock::time_point{}) c.linger_until = now + kLinger;
      if (now >= c.linger_until) c.dead = true;
      return;
    }
    ::shutdown(c.fd, SHUT_WR);
    c.shut_write = true;
    c.linger_until = now + kLinger;
  }
  if (c.eof || now >= c.linger_until) c.dead = true;
}

}  // namespace weft::aggd
