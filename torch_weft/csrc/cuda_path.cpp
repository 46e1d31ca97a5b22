// The CUDA path (cuda_path.h), built where PyTorch has CUDA.
#include "cuda_path.h"

#include <ATen/core/ivalue.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "mpi_types.h"
#include "worker.h"

namespace torch_weft {

namespace {

using Clock = std::chrono::steady_clock;
// The watchdog looks every kWatchEvery; an operation pending longer than kProbeAfter makes it
// ask weft whether a member failed.
constexpr auto kWatchEvery = std::chrono::milliseconds(100);
constexpr auto kProbeAfter = std::chrono::seconds(1);
// weft lets at most 15 stream sends to one peer wait without their wait enqueued.
constexpr size_t kMaxDeferredSends = 14;
constexpr uint64_t kNotBroken = UINT64_MAX;

const at::Tensor* first_cuda(const std::vector<at::Tensor>& tensors) {
  for (const at::Tensor& t : tensors)
    if (t.is_cuda()) return &t;
  return nullptr;
}

// Whether `stream` is being captured into a CUDA graph, and the capture's id. A failed query
// counts as no capture and leaves no error for PyTorch's next check.
std::pair<bool, unsigned long long> stream_capture(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  if (cudaStreamGetCaptureInfo(stream, &status, &id) != cudaSuccess) {
    (void)cudaGetLastError();
    return {false, 0};
  }
  return {status != cudaStreamCaptureStatusNone, id};
}

int element_count(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.numel() <= INT_MAX, "weft backend: ", name, ": a message of ", t.numel(),
              " elements is more than one call moves");
  return int(t.numel());
}

}  // namespace

bool cuda_path_built() { return true; }

class CudaWork;

struct CudaPath::State {
  MPI_Comm base = MPI_COMM_NULL;
  int rank = 0;
  std::chrono::milliseconds timeout{0};
  // Calls may come from several threads (autograd's, the caller's); a Work settling its send
  // may do so while its path is in a call (recursive).
  std::recursive_mutex mutex;
  // Made with the stream communicator:
  c10::DeviceIndex device = -1;
  cudaStream_t raw = nullptr;
  std::optional<c10::cuda::CUDAStream> stream;
  MPIX_Stream mpix = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // the stream communicator
  int reserved_tag = 0;
  std::map<int, std::deque<CudaWork*>> deferred;  // lone sends by peer, oldest first

  // The watchdog's (watch_mutex): operations on the stream, oldest first.
  struct Watched {
    uint64_t seq;
    std::shared_ptr<at::cuda::CUDAEvent> done;
    std::string name;
    Clock::time_point since;
  };
  std::mutex watch_mutex;
  std::condition_variable watch_wake;
  bool watch_stop = false;
  std::deque<Watched> watched;
  uint64_t next_seq = 0;
  std::atomic<uint64_t> broken_from{kNotBroken};  // operations from this one on failed
  std::string broken;                             // why (set once, before broken_from)
  std::thread watchdog;

  bool streaming() const { return comm != MPI_COMM_NULL; }
  bool failed(uint64_t seq) const { return seq >= broken_from.load(std::memory_order_acquire); }
  std::string broken_text() {
    std::lock_guard<std::mutex> lock(watch_mutex);
    return broken;
  }
  void check_usable() {
    TORCH_CHECK(broken_from.load(std::memory_order_acquire) == kNotBroken, broken_text());
  }

  // Collective over base: every rank makes its stream communicator at the same point.
  void ensure(c10::DeviceIndex d) {
    if (comm != MPI_COMM_NULL) {
      TORCH_CHECK(d == device, "weft backend: the CUDA tensors of a process group must be on one device; this one "
                  "runs on cuda:", int(device), ", got a tensor on cuda:", int(d));
      return;
    }
    TORCH_CHECK(base != MPI_COMM_NULL, "weft backend: the process group was shut down");
    c10::cuda::CUDAGuard guard(d);
    TORCH_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking) == cudaSuccess,
                "weft backend: could not create the communication stream on cuda:", int(d));
    device = d;
    stream = c10::cuda::getStreamFromExternal(raw, d);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "cudaStream_t");
    MPIX_Info_set_hex(info, "value", &raw, int(sizeof(raw)));
    int rc = MPIX_Stream_create(info, &mpix);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) rc = MPIX_Stream_comm_create(base, mpix, &comm);
    TORCH_CHECK(rc == MPI_SUCCESS, "weft backend: making the stream communicator failed on rank ", rank, ": ",
                mpi_error_text(rc));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    void* ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &found);
    reserved_tag = found ? *static_cast<int*>(ub) : 32767;
    watchdog = std::thread([this] { watch_loop(); });
  }

  // With the mutex held, the start of every operation: the group usable, the stream
  // communicator there (made here only where may_create: a collective, which every rank
  // calls), the communication stream after the caller's.
  void begin(const char* name, const std::vector<at::Tensor>& touched, bool may_create) {
    const at::Tensor* like = first_cuda(touched);
    TORCH_CHECK(like, "weft backend: ", name, ": no CUDA tensor");
    check_usable();
    TORCH_CHECK(may_create || streaming(), "weft backend: ", name, ": the group has no stream communicator yet");
    ensure(like->device().index());
    for (const at::Tensor& t : touched)
      TORCH_CHECK(!t.defined() || !t.is_cuda() || t.device().index() == device, "weft backend: ", name,
                  ": the CUDA tensors of a process group must be on one device; this one runs on cuda:", int(device),
                  ", got a tensor on cuda:", int(t.device().index()));
    // A capture beginning on the caller's stream: lone sends deferred before it have their
    // waits enqueued now, outside the graph, before the communication stream joins it (in
    // relaxed mode, so that weft's calls on the uncaptured stream do not break the capture).
    if (stream_capture(c10::cuda::getCurrentCUDAStream(device)).first && !capturing()) {
      c10::cuda::CUDAStreamCaptureModeGuard relaxed(cudaStreamCaptureModeRelaxed);
      settle_deferred();
    }
    order_after_caller(touched);
  }
  void check_call(int rc, const char* name) const {
    TORCH_CHECK(rc == MPI_SUCCESS, "weft backend: ", name, " on CUDA tensors failed on rank ", rank, ": ",
                mpi_error_text(rc));
  }

  // The caller's current stream, then the touched tensors, handed to the communication stream.
  void order_after_caller(const std::vector<at::Tensor>& touched) {
    at::cuda::CUDAEvent ready;
    ready.record(c10::cuda::getCurrentCUDAStream(device));
    ready.block(*stream);
    for (const at::Tensor& t : touched)
      if (t.defined() && t.is_cuda()) c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), *stream);
  }

  // Whether the communication stream is being captured into a CUDA graph (it joins the
  // caller's capture through order_after_caller's event).
  bool capturing() const { return capture().first; }
  std::pair<bool, unsigned long long> capture() const { return stream_capture(raw); }

  // An event after what was enqueued so far, watched until the stream is past it. During a
  // capture the event is a node of the graph, not a point the stream reaches: not watched.
  std::pair<uint64_t, std::shared_ptr<at::cuda::CUDAEvent>> mark(const char* name) {
    auto done = std::make_shared<at::cuda::CUDAEvent>();
    done->record(*stream);
    const bool captured = capturing();
    std::lock_guard<std::mutex> lock(watch_mutex);
    const uint64_t seq = next_seq++;
    if (!captured) watched.push_back({seq, done, name, Clock::now()});
    return {seq, done};
  }

  // The group ranks weft knows to have failed, as text ("" when none).
  std::string failed_members() {
    MPI_Group failed = MPI_GROUP_NULL, all = MPI_GROUP_NULL;
    if (MPIX_Comm_get_failed(base, &failed) != MPI_SUCCESS) return "";
    int n = 0;
    MPI_Group_size(failed, &n);
    std::string text;
    if (n > 0) {
      std::vector<int> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) in[size_t(i)] = i;
      MPI_Comm_group(base, &all);
      MPI_Group_translate_ranks(failed, n, in.data(), all, out.data());
      MPI_Group_free(&all);
      text = n == 1 ? "rank " : "ranks ";
      for (int i = 0; i < n; ++i) text += (i ? ", " : "") + std::to_string(out[size_t(i)]);
    }
    MPI_Group_free(&failed);
    return text;
  }

  void watch_loop() {
    // Thread-local capture mode: this thread's event queries must not invalidate a global-mode
    // capture (torch.cuda.graph's default) that another thread runs meanwhile.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal;
    cudaThreadExchangeStreamCaptureMode(&mode);
    std::unique_lock<std::mutex> lock(watch_mutex);
    while (!watch_stop) {
      watch_wake.wait_for(lock, kWatchEvery);
      if (watch_stop) break;
      while (!watched.empty() && watched.front().done->query()) watched.pop_front();
      if (watched.empty() || broken_from.load() != kNotBroken) continue;
      const Watched oldest = watched.front();
      const auto age = Clock::now() - oldest.since;
      if (age < kProbeAfter) continue;
      lock.unlock();  // MPI calls without the watch lock: the Works' checks take it
      const std::string dead = failed_members();
      lock.lock();
      std::string why;
      if (!dead.empty())
        why = oldest.name + " on CUDA tensors cannot complete: " + dead + " of the group failed";
      else if (timeout.count() > 0 && age > timeout)
        why = oldest.name + " on CUDA tensors did not complete within " + std::to_string(timeout.count()) + " ms";
      if (why.empty()) continue;
      broken = "weft backend, rank " + std::to_string(rank) + ": " + why + " (the process group can no longer be used)";
      broken_from.store(oldest.seq, std::memory_order_release);
      lock.unlock();
      // Ends weft's kernels that wait for the dead (or late) peer, and the stream behind them.
      MPIX_Comm_revoke(comm);
      lock.lock();
    }
  }

  void stop_watchdog() {
    {
      std::lock_guard<std::mutex> lock(watch_mutex);
      watch_stop = true;
    }
    watch_wake.notify_all();
    if (watchdog.joinable()) watchdog.join();
  }

  void settle(CudaWork& work);
  void make_room(int peer);
  void settle_deferred();
};

// A Work of the communication stream: complete once the stream is past `done_`. A lone send's
// event is recorded when it settles (its request's wait enqueued first).
class CudaWork : public c10d::Work {
 public:
  CudaWork(std::shared_ptr<CudaPath::State> state, c10d::OpType type, std::vector<at::Tensor> outputs)
      : c10d::Work(state->rank, type), state_(std::move(state)), outputs_(std::move(outputs)),
        future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                         std::vector<c10::Device>{state_->stream->device()})) {}
  ~CudaWork() override {
    try {
      settle();
      if (captured_ && !error_.empty()) TORCH_WARN(error_);
    } catch (...) {
    }
  }

  // With the path's mutex held: the event after what the stream has so far; the future
  // completes now, with the communication stream current, so that whoever waits on it waits
  // on the device.
  void record(const char* name) {
    std::tie(seq_, done_) = state_->mark(name);
    c10::cuda::CUDAStreamGuard guard(*state_->stream);
    future_->markCompleted(c10::IValue(outputs_));
  }
  void defer(MPI_Request request, int peer, const char* name, std::pair<bool, unsigned long long> capture) {
    request_ = request;
    peer_ = peer;
    name_ = name;
    std::tie(captured_, capture_id_) = capture;
  }

  bool isCompleted() override {
    settle();
    return failed() || done_->query();
  }
  // Stream semantics: the caller's current stream waits; the host does not.
  bool wait(std::chrono::milliseconds) override {
    settle();
    raise_if_failed();
    synchronize();
    return true;
  }
  void synchronize() override {
    settle();
    if (done_) done_->block(c10::cuda::getCurrentCUDAStream(state_->device));
  }
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    settle();
    return future_;
  }

  void settle() {
    if (request_ == MPI_REQUEST_NULL) return;
    state_->settle(*this);
  }

 private:
  friend struct CudaPath::State;
  bool failed() const { return !error_.empty() || (done_ && state_->failed(seq_)); }
  void raise_if_failed() {
    TORCH_CHECK(error_.empty(), error_);
    if (done_ && state_->failed(seq_)) TORCH_CHECK(false, state_->broken_text());
  }

  std::shared_ptr<CudaPath::State> state_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  uint64_t seq_ = 0;
  std::shared_ptr<at::cuda::CUDAEvent> done_;
  std::string error_;
  // A lone send not yet settled:
  MPI_Request request_ = MPI_REQUEST_NULL;
  int peer_ = -1;
  const char* name_ = "";
  bool captured_ = false;  // issued during a CUDA graph capture, the one of capture_id_
  unsigned long long capture_id_ = 0;
};

void CudaPath::State::settle(CudaWork& work) {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  if (work.request_ == MPI_REQUEST_NULL) return;
  std::deque<CudaWork*>& q = deferred[work.peer_];
  for (auto it = q.begin(); it != q.end(); ++it)
    if (*it == &work) {
      q.erase(it);
      break;
    }
  int rc = MPI_ERR_OTHER;
  // A send captured into a graph has its wait captured too, in the same capture. Outside any
  // capture weft refuses the wait (and frees the request); inside another capture it is not
  // asked (it would name the wrong message).
  const auto now = capture();
  const bool capture_over = work.captured_ && (!now.first || now.second != work.capture_id_);
  if (broken_from.load() == kNotBroken && comm != MPI_COMM_NULL && !(capture_over && now.first)) {
    c10::cuda::CUDAStreamGuard guard(*stream);
    rc = MPIX_Wait_enqueue(&work.request_, MPI_STATUS_IGNORE);
  }
  work.request_ = MPI_REQUEST_NULL;
  if (rc == MPI_SUCCESS && !capture_over) {
    work.record(work.name_);
    return;
  }
  work.error_ = capture_over ? "weft backend, rank " + std::to_string(rank) + ": " + work.name_ +
                                   " on CUDA tensors was captured into a CUDA graph and not waited for before the "
                                   "capture ended (wait for its Work inside the capture)"
                : broken_from.load() != kNotBroken ? broken_text()
                : comm == MPI_COMM_NULL
                    ? std::string("weft backend: the process group was shut down before the send completed")
                    : "weft backend, rank " + std::to_string(rank) + ": " + work.name_ +
                          " on CUDA tensors failed: " + mpi_error_text(rc);
  work.future_->setError(std::make_exception_ptr(std::runtime_error(work.error_)));
}

void CudaPath::State::make_room(int peer) {
  std::deque<CudaWork*>& q = deferred[peer];
  while (q.size() >= kMaxDeferredSends) q.front()->settle();
}

void CudaPath::State::settle_deferred() {
  for (auto& [peer, q] : deferred)
    while (!q.empty()) q.front()->settle();
}

CudaPath::CudaPath(MPI_Comm base, int rank, int eager_device, std::chrono::milliseconds timeout)
    : state_(std::make_shared<State>()) {
  state_->base = base;
  state_->rank = rank;
  state_->timeout = timeout;
  if (base == MPI_COMM_NULL) return;
  // The stream communicator now, where every rank has CUDA set up (the agreement keeps the
  // collective creation alike on every rank).
  int here = eager_device >= 0 ? 1 : 0, everywhere = 0;
  const int rc = MPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, base);
  TORCH_CHECK(rc == MPI_SUCCESS, "weft backend: the group's CUDA agreement failed on rank ", rank, ": ",
              mpi_error_text(rc));
  if (everywhere) {
    std::lock_guard<std::recursive_mutex> lock(state_->mutex);
    state_->ensure(c10::DeviceIndex(eager_device));
  }
}

CudaPath::~CudaPath() { shutdown(); }

bool CudaPath::streaming() const {
  std::lock_guard<std::recursive_mutex> lock(state_->mutex);
  return state_->streaming();
}

int CudaPath::reserved_tag() const {
  std::lock_guard<std::recursive_mutex> lock(state_->mutex);
  return state_->reserved_tag;
}

c10::intrusive_ptr<c10d::Work> CudaPath::run(c10d::OpType type, const char* name,
                                             const std::vector<at::Tensor>& touched, std::vector<at::Tensor> outputs,
                                             const std::function<int(MPI_Comm)>& enqueue,
                                             const std::function<void()>& after) {
  std::lock_guard<std::recursive_mutex> lock(state_->mutex);
  State& s = *state_;
  s.begin(name, touched, true);
  c10::cuda::CUDAStreamGuard guard(*s.stream);
  s.check_call(enqueue(s.comm), name);
  if (after) after();
  auto work = c10::make_intrusive<CudaWork>(state_, type, std::move(outputs));
  work->record(name);
  return work;
}

c10::intrusive_ptr<c10d::Work> CudaPath::exchange(c10d::OpType type, const char* name,
                                                  const std::vector<at::Tensor>& touched,
                                                  std::vector<at::Tensor> outputs, std::vector<P2pMessage> messages, bool collective,
                                                  const std::function<void()>& local) {
  std::lock_guard<std::recursive_mutex> lock(state_->mutex);
  State& s = *state_;
  s.begin(name, touched, collective);
  c10::cuda::CUDAStreamGuard guard(*s.stream);
  const bool lone_send = !collective && messages.size() == 1 && messages[0].send;
  std::vector<MPI_Request> requests;
  for (const bool sends : {false, true})
    for (const P2pMessage& m : messages) {
      if (m.send != sends) continue;
      const MPI_Datatype dt = mpi_datatype(m.tensor.scalar_type());
      const int n = element_count(m.tensor, name);
      MPI_Request r = MPI_REQUEST_NULL;
      if (lone_send) s.make_room(m.peer);
      const int rc = sends ? MPIX_Isend_enqueue(m.tensor.data_ptr(), n, dt, m.peer, m.tag, s.comm, &r)
                           : MPIX_Irecv_enqueue(m.tensor.data_ptr(), n, dt, m.peer, m.tag, s.comm, &r);
      s.check_call(rc, name);
      requests.push_back(r);
    }
  auto work = c10::make_intrusive<CudaWork>(state_, type, std::move(outputs));
  if (lone_send) {
    work->defer(requests[0], messages[0].peer, name, s.capture());
    s.deferred[messages[0].peer].push_back(work.get());
    return work;
  }
  if (local) local();
  if (!requests.empty()) {
    s.check_call(MPIX_Waitall_enqueue(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), name);
  }
  work->record(name);
  return work;
}

void CudaPath::shutdown() {
  if (!state_) return;
  State& s = *state_;
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  int finalized = 0;
  MPI_Finalized(&finalized);
  s.settle_deferred();
  // The watchdog still runs here: a wait for a dead peer ends once it revokes.
  if (s.raw) cudaStreamSynchronize(s.raw);
  s.stop_watchdog();
  if (!finalized) {
    if (s.comm != MPI_COMM_NULL) MPI_Comm_free(&s.comm);
    if (s.mpix != MPIX_STREAM_NULL) MPIX_Stream_free(&s.mpix);
    if (s.base != MPI_COMM_NULL) MPI_Comm_free(&s.base);
  }
  s.comm = s.base = MPI_COMM_NULL;
  s.mpix = MPIX_STREAM_NULL;
  // The stream itself is left to the process's end: Works and futures may still name it.
}

std::function<void()> cuda_ready(const std::vector<at::Tensor>& tensors) {
  const at::Tensor* like = first_cuda(tensors);
  if (!like) return nullptr;
  auto ready = std::make_shared<at::cuda::CUDAEvent>();
  ready->record(c10::cuda::getCurrentCUDAStream(like->device().index()));
  return [ready] { ready->synchronize(); };
}

std::function<void()> cuda_drain(const std::vector<at::Tensor>& tensors) {
  const at::Tensor* like = first_cuda(tensors);
  if (!like) return nullptr;
  const c10::DeviceIndex d = like->device().index();
  return [d] { c10::cuda::getCurrentCUDAStream(d).synchronize(); };
}

}  // namespace torch_weft
