// weft-aggd's event loop: one thread, poll() over the listening sockets, every client
// connection (non-blocking, with its frame reader and output queue) and a wake-up pipe that
// the signal handlers write to. The protocol itself is the Aggregator's.
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

  // Takes ownership of the listeners' sockets (closed, and unix socket files removed, at
  // destruction). wake_fd: readable once the daemon should stop.
  Daemon(const Aggregator::Options& options, std::vector<Listener> listeners, int wake_fd);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Serves until wake_fd becomes readable; false if poll itself failed.
  bool run();
  const Aggregator::Stats& stats() const { return aggregator_.stats(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    int fd = -1;
    Client client;
    FrameReader reader;
    bool eof = false;        // the peer closed its side
    bool shut_write = false; // closing: the ERROR is flushed and our side shut down
    Clock::time_point linger_until{};
    bool dead = false;       // to be closed at the end of this round
    Connection(int fd, uint32_t fragment_bytes) : fd(fd), reader(Reader::daemon, fragment_bytes) {}
  };

  void accept_from(const Listener& l);
  void read_from(Connection& c);
  void write_to(Connection& c);
  void lost(Connection& c, const std::string& why);  // the peer is gone
  void advance_closing(Connection& c, Clock::time_point now);
  bool wants_input(const Connection& c) const;

  Aggregator::Options options_;
  Aggregator aggregator_;
  std::vector<Listener> listeners_;
  int wake_fd_;
  std::vector<std::unique_ptr<Connection>> connections_;
  uint64_t next_id_ = 0;
  size_t output_limit_;             // above it, a client's input waits until it reads
  Clock::time_point accept_paused_until_{};
};

}  // namespace weft::aggd
