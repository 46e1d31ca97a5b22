// weft-aggd's event loop: one thread, poll() over the listening sockets, every client
// connection (non-blocking, with its frame reader and output queue) and a wake-up pipe that
// the signal handlers write to. The protocol itself is the Aggregator's; the loop enforces
// the limits on connections: how many, how long to authenticate, how long to sit idle.
#pragma once
#include <chrono>
#include <memory>
#include <vector>

#include "tools/aggd/address.h"
#include "tools/aggd/aggregator.h"

namespace weft::aggd {

class Daemon {
 public:
  struct Listener {
    int fd = -1;
    Address address;  // as bound (the chosen port for tcp port 0)
  };

  struct Limits {
    size_t max_connections = 4096;  // one more is sent ERROR and closed at once
    std::chrono::milliseconds handshake{5000};  // from accept to an authenticated HELLO
    std::chrono::milliseconds idle{3600 * 1000};  // no input while its group has no operation in flight; 0: none
  };

  // Takes ownership of the listeners' sockets (closed, and unix socket files removed, at
  // destruction). wake_fd: readable once the daemon should stop.
  Daemon(const Aggregator::Options& options, const Limits& limits, std::vector<Listener> listeners, int wake_fd);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Serves until wake_fd becomes readable; false if poll itself failed.
  bool run();
  const Aggregator::Stats& stats() const { return aggregator_.stats(); }
  uint64_t over_limit() const { return over_limit_; }  // connections refused at the connection limit

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    int fd = -1;
    Client client;
    FrameReader reader;
    bool eof = false;        // the peer closed its side
    bool shut_write = false; // closing: the ERROR is flushed and our side shut down
    Clock::time_point linger_until{};
    Clock::time_point handshake_until{};  // the authenticated HELLO must come before this
    Clock::time_point last_input{};       // for the idle deadline
    bool was_in_operation = false;        // the idle time restarts when its group's operation ends
    bool dead = false;       // to be closed at the end of this round
    Connection(int fd, Clock::time_point now, const DecodeLimits& limits, size_t initial_bytes)
        : fd(fd), reader(limits, initial_bytes), last_input(now) {}
  };

  void accept_from(const Listener& l);
  void read_from(Connection& c);
  void write_to(Connection& c);
  void lost(Connection& c, const std::string& why);  // the peer is gone
  void advance_closing(Connection& c, Clock::time_point now);
  // Closes connections past their handshake or idle deadline; the next deadline of any.
  Clock::time_point enforce_deadlines(Clock::time_point now);
  // Sends one ERROR to a connection accepted over the limit and closes it.
  void refuse_over_limit(int fd);
  bool wants_input(const Connection& c) const;

  Aggregator::Options options_;
  Limits limits_;
  Aggregator aggregator_;
  std::vector<Listener> listeners_;
  int wake_fd_;
  std::vector<std::unique_ptr<Connection>> connections_;
  uint64_t next_id_ = 0;
  size_t output_limit_;             // above it, a client's input waits until it reads
  Clock::time_point accept_paused_until_{};
  uint64_t over_limit_ = 0;
  size_t closed_since_trim_ = 0;  // connections closed since memory was last handed back
};

}  // namespace weft::aggd
