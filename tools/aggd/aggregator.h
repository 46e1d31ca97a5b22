// The daemon's protocol engine, free of sockets: the handshake (CHALLENGE, the HELLO's MAC),
// groups of leaders, their operations and the fragment slots they reduce into. It consumes
// parsed frames of each client and answers by appending frames to the clients' output queues;
// a client it refuses is marked closing (the daemon then flushes its ERROR and closes it).
// Only an authenticated client can join, and so affect, a group.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/aggd/auth.h"
#include "tools/aggd/wire.h"

namespace weft::aggd {

struct Group;

// One client connection as the protocol sees it.
struct Client {
  uint64_t id = 0;
  std::string name;       // for messages: "connection 7", then "leader 1/3 of job 'j' comm 0x2a"
  ByteQueue out;
  bool closing = false;   // refused or its group is gone: no more input is processed

  uint8_t nonce[kNonceBytes] = {};  // the CHALLENGE's
  bool said_hello = false;  // an authenticated HELLO: only then is it a member of a group
  HelloPayload hello{};     // that HELLO (its nonce and group fields go into the WELCOME's MAC)
  Group* group = nullptr;
  uint32_t leader_index = 0;

  uint64_t next_seq = 0;  // the seq its next BEGIN must carry
  bool in_op = false;     // began operation op_seq and has not sent all of its fragments
  uint64_t op_seq = 0;
  uint64_t next_fragment = 0, fragments = 0;
  Range contrib;          // allgather: its part of op_seq's result
};

class Aggregator {
 public:
  struct Options {
    uint32_t fragment_bytes = 64 * 1024;
    uint32_t window = 8;
    uint64_t max_bytes = uint64_t(1) << 30;
    bool quiet = false;
    Key daemon_key{};  // job keys derive from it (auth.h)
  };
  struct Stats {
    uint64_t groups = 0;      // groups that reached WELCOME
    uint64_t operations = 0;  // operations whose every fragment was reduced and answered
    uint64_t fragments = 0;   // fragments reduced and answered
    uint64_t refused = 0;     // connections closed for their own protocol errors
    uint64_t unauthenticated = 0;  // HELLOs whose MAC did not match (also counted in refused)
    uint64_t timed_out = 0;   // connections closed by the handshake or idle deadline
  };

  explicit Aggregator(const Options& options);
  ~Aggregator();

  // A new connection: its CHALLENGE is queued.
  void on_connect(Client& c);
  void on_frame(Client& c, const Frame& f);
  // The reader found a malformed frame (or a truncated one at end of stream).
  void on_malformed(Client& c, const std::string& why);
  // The client is gone (end of stream, reset, write error); it is destroyed after this.
  void on_disconnect(Client& c, const std::string& why);

  // Closes c for a deadline it missed (ERROR with `why`). A member leaves its group as a lost
  // leader would: an incomplete group ends, a complete one between operations goes on (the
  // others hear of it at their next BEGIN).
  void expire(Client& c, const std::string& why);
  // Whether c's group has an operation in flight (the idle deadline does not apply then).
  bool in_operation(const Client& c) const;

  const Stats& stats() const { return stats_; }
  size_t group_count() const { return groups_.size(); }

 private:
  void on_hello(Client& c, const HelloPayload& h);
  void on_begin(Client& c, const BeginPayload& b);
  void on_frag(Client& c, const FragPayload& fp, const uint8_t* bytes);
  void complete_fragment(Group& g, uint64_t seq, uint64_t fragment);

  // A protocol error of c: ERROR to c, then its group (if any) is dissolved.
  void refuse(Client& c, int code, const std::string& why);
  // Ends group g: ERROR to every member still connected (text: `why`, except `culprit`, which
  // already has its own), marks them closing and deletes g.
  void dissolve(Group& g, const Client* culprit, int code, const std::string& why);
  void log(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));

  Options options_;
  Stats stats_;
  std::map<std::pair<std::string, uint64_t>, std::unique_ptr<Group>> groups_;
};

}  // namespace weft::aggd
