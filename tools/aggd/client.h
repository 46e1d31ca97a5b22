// The plugin's side of the aggd protocol: one connection per (node leader, communicator),
// set up with CHALLENGE/HELLO/WELCOME (each side proving it holds the job's key), then one
// operation at a time driven by non-blocking test() calls.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tools/aggd/address.h"
#include "tools/aggd/auth.h"
#include "tools/aggd/wire.h"
#include "weft/offload.h"

namespace weft::aggd {

// What init read (the environment, the node) and the plugin-wide last error.
struct PluginContext {
  weft_offload_log_fn log = nullptr;
  std::string job_id;  // at most kMaxJobId - 1 bytes: the job key file's job, else weft's job id
  Key job_key{};       // from the key file (WEFT_AGGD_KEY_FILE)
  Address address;
  std::string address_text;
  int timeout_ms = 10000;
  std::string last_error;

  void report(int level, const std::string& message) const;
};

class AggdComm {
 public:
  // Connects, answers the daemon's CHALLENGE with an authenticated HELLO and waits for a
  // WELCOME whose MAC proves the daemon's key, all within ctx.timeout_ms. On failure returns
  // the status and sets ctx.last_error.
  static int setup(PluginContext& ctx, const weft_offload_comm_info& info, std::unique_ptr<AggdComm>* out);
  ~AggdComm();
  AggdComm(const AggdComm&) = delete;
  AggdComm& operator=(const AggdComm&) = delete;

  int query(weft_offload_caps* caps) const;
  int post(const weft_offload_op_args& args, void** op);
  int test(void* op, int* done);
  const std::string& last_error() const { return last_error_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Operation;

  AggdComm(PluginContext& ctx, int fd, std::string label);
  // Marks the communicator broken with status and message (later calls fail the same way),
  // ends the operation and closes the connection.
  int fail(int status, const std::string& message);
  int fail_errno(int err, const char* doing);
  // A frame from the daemon while an operation is in flight (or during setup).
  int handle(const Frame& f, bool* welcomed);
  int on_challenge(const Frame& f);
  int on_welcome(const Frame& f, bool* welcomed);
  int error_frame(const Frame& f);
  void queue_fragments();
  // Reads and handles what the socket has: bytes read (0 and *eof at end of stream) or a status.
  int read_available(size_t* bytes, bool* welcomed);
  int wait_for_welcome();

  PluginContext& ctx_;
  int fd_;
  std::string label_;  // "comm 0x2a leader 1/3", for messages
  FrameReader reader_;
  ByteQueue out_;
  HelloPayload hello_{};        // group fields and our nonce; sent once the CHALLENGE came
  uint8_t daemon_nonce_[kNonceBytes] = {};
  bool challenged_ = false;
  WelcomePayload welcome_{};
  int broken_ = WEFT_OFFLOAD_OK;
  std::string last_error_;
  uint64_t next_seq_ = 0;
  std::unique_ptr<Operation> op_;
};

}  // namespace weft::aggd
