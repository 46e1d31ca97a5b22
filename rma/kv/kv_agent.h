// KV transfer agents (include/weft/kv.h) over UCX RMA and active messages, independent of MPI:
// each agent owns a UCX context and worker. Host regions are registered with UCX and reached
// with put/get through the remote key an imported blob carries; device regions travel as CUDA
// IPC descriptors and are reached by copies through the mapped allocation (same host only).
// Between host regions of two agents on one host, blocks are copied with cross-memory attach
// on the agent's copy thread (kv_cma.h) instead: UCX 1.13 emulates RMA on malloc'd memory
// there with active messages. A posted request issues every block without waiting, then one endpoint flush; a WRITE's
// notification is sent as an active message after that flush, so it lands after the data.
// Where UCX emulates RMA with active messages (tcp, and shared memory without cma) a target
// must progress for data to land, so each agent has a progress thread that sleeps on the
// worker's event descriptor (WEFT_KV_PROGRESS_THREAD=0 turns it off; the program then calls
// weft_kv_progress). One mutex per agent serialises the thread and the API calls.
// Functions return weft_kv_status_t codes and record the reason of an error (error_detail).
#pragma once
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kv_blob.h"
#include "kv_cma.h"
#include "kv_error.h"
#include "weft/kv.h"

namespace weft::kv {

class Agent;

class Request {
 public:
  ~Request();
  int post();
  int test();
  int wait(int timeout_ms);
  // Frees the request now or, while UCX still holds it, once UCX lets go of it.
  void release();

 private:
  friend class Agent;
  struct Op {
    void* local;
    uint64_t remote;   // address in the remote process (host) or mapped pointer (device)
    void* rkey;        // ucp_rkey_h; null for a device-memory copy
    uint64_t length;
    bool cma;          // copied with cross-memory attach (kv_cma.h)
  };
  // data: blocks issued, not all landed; flushed: landed, the notification waits its turn;
  // notify: the notification is being sent.
  enum class State : uint8_t { idle, data, flushed, notify, done, failed };
  Request(Agent& agent, uint32_t peer) : agent_(agent), peer_(peer) {}
  void on_flushed(int status);
  void on_notified(int status);
  void advance();
  void send_notification();
  void fail(int status);
  bool ucx_busy() const { return flush_pending_ || notify_pending_; }

  Agent& agent_;
  uint32_t peer_;
  weft_kv_op_t op_ = WEFT_KV_WRITE;
  std::vector<Op> ops_;
  std::vector<unsigned char> notification_;
  State state_ = State::idle;
  int status_ = WEFT_KV_SUCCESS;
  std::vector<uint32_t> local_regions_;  // the local regions its blocks use
  bool flush_pending_ = false, notify_pending_ = false, released_ = false;
  bool flushed_ = false;  // the UCX flush of the current post has completed
  bool queued_ = false;   // in the agent's notification queue
  void* device_batch_ = nullptr;  // its device-memory copies (kv_device.h)
  void* device_token_ = nullptr;  // the device-memory copies of the current post
  std::shared_ptr<CmaEngine::Job> cma_job_;  // the blocks copied with cross-memory attach
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

 private:
  friend class Request;
  struct Region {
    void* base;
    size_t length;
    RegionKind kind;
    void* memh;  // ucp_mem_h (host)
    std::vector<unsigned char> rkey, ipc;
  };
  struct RemoteRegion {
    RegionInfo info;
    void* rkey = nullptr;        // ucp_rkey_h (host)
    void* mapped = nullptr;      // the region mapped through CUDA IPC (device), on first use
  };
  struct Peer {
    Agent* agent = nullptr;
    uint32_t id = 0;
    AgentInfo info;
    void* ep = nullptr;  // ucp_ep_h
    std::map<uint32_t, RemoteRegion> regions;
    int failed = WEFT_KV_SUCCESS;
    bool cma = false;  // on this host and reachable with cross-memory attach
    double next_liveness_check = 0;
  };
  struct Notification {
    std::string from;
    std::vector<unsigned char> message;
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
  void close_endpoint(Peer& p);
  // Requests released while UCX still held them, freed once it lets go.
  void reap();
  static void on_endpoint_error(void* arg, void* ep, int status);
  static int on_notification(void* arg, const void* header, size_t header_length, void* data, size_t length,
                             const void* param);

  std::string name_;
  void* context_ = nullptr;  // ucp_context_h
  void* worker_ = nullptr;   // ucp_worker_h
  std::vector<unsigned char> address_;
  std::map<uint32_t, Region> regions_;
  uint32_t next_region_ = 1;
  std::map<uint32_t, std::unique_ptr<Peer>> peers_;
  uint32_t next_peer_ = 1;
  std::deque<Notification> notifications_;
  std::deque<Request*> notify_queue_;  // posted WRITEs with a notification, in posting order
  std::vector<std::unique_ptr<Request>> requests_;
  std::string host_;
  uint64_t start_time_ = 0;
  std::recursive_mutex mu_;
  std::thread progress_thread_;
  std::atomic<bool> stop_{false};
  int efd_ = -1;  // the worker's event descriptor, for the progress thread
  CmaEngine cma_;  // last: its thread finishes queued copies before anything else goes
};

// The start time of a process (clock ticks since boot), 0 when it cannot be read; with the
// pid it names one process even after the pid is reused.
uint64_t process_start_time(int pid);

}  // namespace weft::kv
