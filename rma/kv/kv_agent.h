// KV transfer agents (include/weft/kv.h) over UCX active messages, independent of MPI: each
// agent makes its own instance of the UCX service (runtime/ucx_service.h: context, worker,
// endpoints). The agent that registered a region is its owner and the only one that touches it:
// importers send requests (kv_wire.h) and the owner checks each block against the regions it
// registered and granted, then copies the bytes in or out itself. A blob
// is checked by its owner when it is imported (kv_blob.h: the owner's secret seal, its incarnation,
// regions still registered as listed). Device regions on one host are the exception: the
// importer maps the owner's CUDA IPC handle, which the owner has vouched for at import.
// Where UCX moves data through the target's progress (tcp, shared memory) an owner must progress
// to serve requests, so each agent has a progress thread that sleeps on the worker's event
// descriptor (WEFT_KV_PROGRESS_THREAD=0 turns it off; the program then calls weft_kv_progress).
// One mutex per agent serialises the thread and the API calls. Active-message callbacks only
// apply eager bytes and queue work; sends and rendezvous receives run after the worker's progress
// returns (kv_owner.cpp, kv_request.cpp).
// Functions return weft_kv_status_t codes and record the reason of an error (error_detail).
#pragma once
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kv_blob.h"
#include "kv_device.h"
#include "kv_error.h"
#include "kv_wire.h"
#include "weft/kv.h"

namespace weft {
class UcxService;
}

namespace weft::kv {

class Agent;

class Request {
 public:
  ~Request();
  int post();
  // weft_kv_set_device_signal: the counter at (remote_region, remote_offset) of the owner.
  int set_device_signal(uint32_t remote_region, uint64_t remote_offset);
  int test();
  int wait(int timeout_ms);
  // Frees the request now or, while UCX still holds it, once UCX lets go of it.
  void release();

 private:
  friend class Agent;
  struct Op {
    void* local;
    uint32_t remote_region;
    uint64_t remote_offset;
    uint64_t length;
    void* device_remote;  // the owner's device region mapped here (CUDA IPC), or null
  };
  // data: sent, not all landed; flushed: landed, the notification waits its turn; notify: the
  // notification is being sent.
  enum class State : uint8_t { idle, data, flushed, notify, done, failed };
  Request(Agent& agent, uint32_t peer, uint64_t id) : agent_(agent), peer_(peer), id_(id) {}
  void on_done(const wire::Done& d, const std::string& reason);
  // A READ_DATA for block `index` of post `post`: its bytes (eager) or its rendezvous descriptor.
  int on_read_data(uint32_t post, uint32_t index, const void* data, size_t length, bool rndv);
  void on_received(uint32_t post, uint32_t index, int status);
  void advance();
  void send_notification();
  void on_notified(int status);
  void fail(int status);
  bool host_part_landed() const;
  bool ucx_busy() const { return sends_in_flight_ || receives_in_flight_ || notify_pending_; }

  Agent& agent_;
  uint32_t peer_;
  uint64_t id_;  // names the request in the owner's replies
  weft_kv_op_t op_ = WEFT_KV_WRITE;
  std::vector<Op> ops_;
  std::vector<uint32_t> host_ops_;         // ops_ moved by the owner, in block-index order
  std::vector<wire::Transfer> headers_;    // WRITE: one header per host op, alive while sent
  std::vector<wire::ReadBlock> read_list_; // READ: the host ops as the owner sees them
  wire::Transfer read_header_{};
  wire::SessionOnly notify_header_{};
  std::vector<uint32_t> landed_post_;      // READ: the post in which each host op landed
  std::vector<unsigned char> notification_;
  State state_ = State::idle;
  int status_ = WEFT_KV_SUCCESS;
  std::string error_;  // the reason of status_
  std::vector<uint32_t> local_regions_;  // the local regions its blocks use
  uint32_t post_ = 0;                    // number of the current post
  uint32_t landed_ = 0;                  // READ: host ops landed in this post
  bool done_ = false;                    // the owner's DONE for this post arrived
  uint32_t sends_in_flight_ = 0, receives_in_flight_ = 0;
  bool notify_pending_ = false, released_ = false;
  bool queued_ = false;           // in the agent's notification queue
  void* device_batch_ = nullptr;  // its device-memory copies (kv_device.h)
  void* device_token_ = nullptr;  // the device-memory copies of the current post
  void* signal_word_ = nullptr;   // the owner's counter (mapped), advanced after each post
};

class Agent {
 public:
  static int create(const char* name, std::unique_ptr<Agent>* out);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  int register_region(void* base, size_t length, uint32_t* id);
  int deregister(uint32_t id);
  int export_blob(std::vector<unsigned char>* out);
  int import_blob(const void* blob, size_t length, uint32_t* peer);
  int forget(uint32_t peer);
  int peer_name(uint32_t peer, std::string* name);
  int prepare(weft_kv_op_t op, uint32_t peer, const weft_kv_block_t* blocks, size_t count, const void* notification,
              size_t notification_length, Request** out);
  int progress();
  // The oldest notification, or WEFT_KV_NO_NOTIFICATION.
  int take_notification(std::string* from, std::vector<unsigned char>* message, size_t capacity, size_t* length);
  // weft_kv_wait_signal_enqueue.
  int wait_signal_enqueue(const void* word, uint64_t value, void* stream);

 private:
  friend class Request;
  DeviceStop device_stop_;  // ends the device waits when a peer is lost or the agent goes
  struct Region {
    void* base;
    size_t length;
    RegionKind kind;
    std::vector<unsigned char> ipc;
    uint32_t in_flight = 0;  // rendezvous transfers into or out of it that UCX still holds
  };
  // An agent this one imported (this agent sends it requests).
  struct RemoteRegion {
    RegionInfo info;
    void* mapped = nullptr;  // the region mapped through CUDA IPC (device), on first use
  };
  struct Peer {
    Agent* agent = nullptr;
    uint32_t id = 0;
    AgentInfo info;
    void* ep = nullptr;  // ucp_ep_h
    uint64_t session = 0;
    std::map<uint32_t, RemoteRegion> regions;
    int failed = WEFT_KV_SUCCESS;
    double next_liveness_check = 0;
  };
  // An agent that imported this one's blob (this agent serves its requests).
  struct PendingWrite {
    uint32_t count = 0, accounted = 0;
    int status = WEFT_KV_SUCCESS;
    std::string reason;
  };
  struct Session {
    Agent* agent = nullptr;
    uint64_t id = 0;
    std::string name, host;
    uint32_t pid = 0;
    uint64_t start_time = 0;
    void* ep = nullptr;  // ucp_ep_h, to the importer
    std::set<uint32_t> regions;  // the regions its blob granted
    std::map<std::pair<uint64_t, uint32_t>, PendingWrite> writes;  // by (request, post)
    double next_liveness_check = 0;
    bool lost = false;
  };
  struct Notification {
    std::string from;
    std::vector<unsigned char> message;
  };
  // Records of operations UCX runs for the agent, freed when UCX completes them (or with the
  // agent, for those whose peer vanished).
  struct UcxOwned {
    virtual ~UcxOwned() = default;
  };
  // A message UCX sends for the agent: its header (and owned payload) live until it completes.
  struct Outgoing : UcxOwned {
    Outgoing(Agent* a) : agent(a) {}
    Agent* agent;
    std::vector<unsigned char> header, payload;
    uint32_t region = 0;  // a region the payload points into (kept registered until done)
  };
  // A rendezvous receive UCX runs for the agent.
  struct Incoming : UcxOwned {
    explicit Incoming(Agent* a) : agent(a) {}
    Agent* agent;
    bool to_owner = true;  // a WRITE block into this agent's region; else a READ block of a request
    uint64_t session = 0, request = 0;
    uint32_t post = 0, index = 0, region = 0;
  };
  struct Verdict {
    int status = WEFT_KV_SUCCESS;
    uint64_t session = 0;
    std::string reason;
    bool answered = false;
  };

  Agent() = default;
  int init(const char* name);
  void progress_thread_main();
  int progress_locked();
  Peer* find_peer(uint32_t id);
  // Whether the peer is known to be gone: its endpoint failed, or its process (on this host)
  // has exited. Checks the process at most every 100 ms.
  bool peer_gone(Peer& p);
  void mark_failed(Peer& p, const char* why);
  void close_endpoint(void** ep, bool force);
  // An endpoint to a peer's worker; its errors go to on_session_error (session) or
  // on_endpoint_error with error_arg. *rc is the UCX status on failure.
  void* connect(const std::vector<unsigned char>& address, bool same_host, void* error_arg, bool session, int* rc);
  // Requests released while UCX still held them, freed once it lets go.
  void reap();
  // Sends an active message; the header and payload are kept until UCX is done with them.
  int send(void* ep, unsigned id, std::unique_ptr<Outgoing> out, const void* data, size_t length, bool eager);
  // One rendezvous transfer of an importer's into or out of a region has ended.
  void release_region(uint32_t id);
  static void on_endpoint_error(void* arg, void* ep, int status);
  static void on_session_error(void* arg, void* ep, int status);

  // An active-message handler: (arg, header, header_length, data, length, param), a UCX status.
  using AmHandler = int(void* arg, const void* header, size_t header_length, void* data, size_t length,
                        const void* param);

  // The owner's side (kv_owner.cpp).
  static AmHandler on_hello, on_write, on_read, on_notify, on_bye;
  void answer_hello(const wire::Hello& h, const std::vector<unsigned char>& payload);
  int check_block(const Session& s, uint32_t region, uint64_t offset, uint64_t length, std::string* why) const;
  void account_write(uint64_t session, uint64_t request, uint32_t post, int status, const std::string& reason);
  void serve_read(uint64_t session, const wire::Transfer& t, const std::vector<unsigned char>& blocks);
  void send_done(Session& s, uint64_t request, uint32_t post, int status, uint32_t blocks, const std::string& reason);
  // Posts a rendezvous receive of desc into dst; received() runs when the bytes are in.
  void receive(Incoming* in, void* desc, void* dst, size_t length);
  void received(const Incoming& in, int status);
  // Closes a session's endpoint without waiting; the session lives until the close completes
  // (UCX may still call its error handler).
  void close_later(std::unique_ptr<Session> s);
  void finish_closing(bool wait);
  void watch_sessions();
  void drop_session(uint64_t id, const char* why);
  Session* find_session(uint64_t id);
  // The session a received header names: *h gets the header (a wire struct with a `session`);
  // nullptr when the header is malformed or the session unknown.
  template <class H>
  Session* session_named(const void* header, size_t header_length, H* h) {
    return wire::read_header(header, header_length, h) ? find_session(h->session) : nullptr;
  }

  // The importer's side (kv_request.cpp).
  static AmHandler on_verdict, on_done, on_read_data;
  Request* find_request(uint64_t id);
  // The same for the request a header names (its `request`).
  template <class H>
  Request* request_named(const void* header, size_t header_length, H* h) {
    return wire::read_header(header, header_length, h) ? find_request(h->request) : nullptr;
  }

  std::string name_;
  Instance instance_{};
  SecretKey key_{};
  std::unique_ptr<UcxService> ucx_;  // the agent's UCX context and worker
  std::vector<unsigned char> address_;
  std::map<uint32_t, Region> regions_;
  uint32_t next_region_ = 1;
  std::map<uint32_t, std::unique_ptr<Peer>> peers_;
  uint32_t next_peer_ = 1;
  std::map<uint64_t, std::unique_ptr<Session>> sessions_;
  struct Closing {
    void* request;  // ucs_status_ptr_t of ucp_ep_close_nbx
    std::unique_ptr<Session> session;
  };
  std::vector<Closing> closing_;
  std::map<uint64_t, Verdict> verdicts_;  // this agent's imports waiting for an answer, by token
  std::deque<Notification> notifications_;
  std::deque<Request*> notify_queue_;  // posted WRITEs with a notification, in posting order
  std::vector<std::unique_ptr<Request>> requests_;
  std::deque<std::function<void()>> deferred_;  // work queued by callbacks, run after progress
  std::unordered_set<UcxOwned*> ucx_owned_;     // Outgoing and Incoming records UCX still holds
  std::unordered_map<uint64_t, Request*> request_ids_;
  bool unchecked_prepare_ = false;               // WEFT_KV_UNCHECKED_PREPARE (tests of the owner)
  double next_session_watch_ = 0;
  std::string host_;
  uint64_t start_time_ = 0;
  std::recursive_mutex mu_;
  std::thread progress_thread_;
  std::atomic<bool> stop_{false};
  int efd_ = -1;  // the worker's event descriptor, for the progress thread
};

// The start time of a process (clock ticks since boot), 0 when it cannot be read; with the
// pid it names one process even after the pid is reused.
uint64_t process_start_time(int pid);
// Whether the process (pid, start time) still runs on this host.
bool process_alive(uint32_t pid, uint64_t start_time);
double now_seconds();

}  // namespace weft::kv
