// The "weft" process group (process_group.h).
#include "process_group.h"

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>

#include <climits>
#include <exception>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "mpi_types.h"

namespace torch_weft {

namespace {

int count_of(int64_t n, const char* what) {
  TORCH_CHECK(n >= 0 && n <= INT_MAX, "weft backend: ", what, " has ", n, " elements, more than one call moves");
  return int(n);
}

// A contiguous buffer holding `tensors` back to back (copied in), for calls that take one.
at::Tensor flatten(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

// The group's communicator for the CUDA path: its own, so that the path's collective calls
// never interleave with the communication thread's.
MPI_Comm cuda_base(MPI_Comm comm, int rank) {
  MPI_Comm base = MPI_COMM_NULL;
  if (!cuda_path_built()) return base;
  const int rc = MPI_Comm_dup(comm, &base);
  TORCH_CHECK(rc == MPI_SUCCESS, "weft backend: making the group's CUDA communicator failed on rank ", rank, ": ",
              mpi_error_text(rc));
  MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN);
  return base;
}

// Copies consecutive pieces of `flat` out into `tensors`.
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& tensors) {
  int64_t at = 0;
  for (at::Tensor& t : tensors) {
    t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
    at += t.numel();
  }
}

size_t bytes_of(const at::Tensor& t) { return size_t(t.numel()) * t.element_size(); }

// Whether two (contiguous) tensors share memory.
bool overlaps(const at::Tensor& a, const at::Tensor& b) {
  const char* pa = static_cast<const char*>(a.data_ptr());
  const char* pb = static_cast<const char*>(b.data_ptr());
  return bytes_of(a) && bytes_of(b) && pa < pb + bytes_of(b) && pb < pa + bytes_of(a);
}

void check_same(const at::Tensor& t, const at::Tensor& like, const char* what) {
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "weft backend: ", what, " has type ",
              at::toString(t.scalar_type()), ", expected ", at::toString(like.scalar_type()));
  TORCH_CHECK(t.numel() == like.numel(), "weft backend: ", what, " has ", t.numel(), " elements, expected ",
              like.numel());
}

}  // namespace

WeftWork::WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type), outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

void WeftWork::complete(std::exception_ptr error) {
  finish(error);
  if (error) future_->setError(error);
  else future_->markCompleted(c10::IValue(outputs_));
}

ProcessGroupWeft::ProcessGroupWeft(MPI_Comm comm, int rank, int size, std::chrono::milliseconds timeout,
                                   int cuda_device)
    : BackendBase(rank, size), comm_(comm), timeout_(timeout), worker_(std::make_unique<Worker>(comm, rank)),
      cuda_(std::make_unique<CudaPath>(cuda_base(comm, rank), rank, cuda_device, timeout)) {}

ProcessGroupWeft::~ProcessGroupWeft() { shutdown(); }

void ProcessGroupWeft::shutdown() {
  if (cuda_) cuda_->shutdown();
  if (!worker_) return;
  worker_.reset();  // completes what was submitted
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

std::chrono::milliseconds ProcessGroupWeft::timeout_of(std::chrono::milliseconds requested) const {
  return requested == c10d::kUnsetTimeout ? timeout_ : requested;
}

const at::Tensor& ProcessGroupWeft::single(std::vector<at::Tensor>& tensors, const char* what) const {
  TORCH_CHECK(tensors.size() == 1, "weft backend: ", what, " takes one tensor per process, got ", tensors.size());
  check_tensor(tensors[0], what);
  return tensors[0];
}

c10::intrusive_ptr<WeftWork> ProcessGroupWeft::submit(c10d::OpType type, const char* name,
                                                      std::vector<at::Tensor> outputs,
                                                      std::chrono::milliseconds timeout, Start start, Finish finish,
                                                      std::shared_ptr<std::atomic<int>> source,
                                                      const std::vector<at::Tensor>& inputs) {
  TORCH_CHECK(worker_, "weft backend: the process group was shut down");
  issue_held_batch();
  std::vector<at::Tensor> touched = outputs;
  touched.insert(touched.end(), inputs.begin(), inputs.end());
  // CUDA tensors here: the thread waits for the caller's stream before its MPI calls, and for
  // its own stream after the finish step (copies out, the average's division).
  std::function<void()> ready = cuda_ready(touched), drain = cuda_drain(touched);
  if (ready) {
    start = [ready, start = std::move(start)](std::vector<MPI_Request>* r) {
      ready();
      return start(r);
    };
    finish = [drain, finish = std::move(finish)](const std::vector<MPI_Status>& st) {
      if (finish) finish(st);
      drain();
    };
  }
  auto work = c10::make_intrusive<WeftWork>(getRank(), type, std::move(outputs));
  if (source) work->source_ = std::move(source);
  Operation op;
  op.name = name;
  op.start = std::move(start);
  op.finish = std::move(finish);
  op.timeout = timeout;
  op.done = [work](std::exception_ptr e) { work->complete(e); };
  worker_->submit(std::move(op));
  keep(work);
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::run_cuda(c10d::OpType type, const char* name,
                                                          const std::vector<at::Tensor>& touched,
                                                          std::vector<at::Tensor> outputs,
                                                          const std::function<int(MPI_Comm)>& enqueue,
                                                          const std::function<void()>& after) {
  issue_held_batch();
  c10::intrusive_ptr<c10d::Work> work = cuda_->run(type, name, touched, std::move(outputs), enqueue, after);
  keep(work);
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::exchange_cuda(c10d::OpType type, const char* name,
                                                               const std::vector<at::Tensor>& touched,
                                                               std::vector<at::Tensor> outputs,
                                                               std::vector<P2pMessage> messages, bool collective,
                                                               const std::function<void()>& local) {
  issue_held_batch();
  c10::intrusive_ptr<c10d::Work> work =
      cuda_->exchange(type, name, touched, std::move(outputs), std::move(messages), collective, local);
  keep(work);
  return work;
}

bool ProcessGroupWeft::stream_p2p(const at::Tensor& t, const char* what) {
  if (!t.is_cuda()) return false;
  if (cuda_->streaming()) return true;
  TORCH_WARN_ONCE("weft backend: ", what, " on CUDA tensors before the group's first collective on them runs on the "
                  "communication thread, which waits for the caller's stream (not stream-ordered); call "
                  "torch.cuda.set_device on every rank before init_process_group to have it stream-ordered from "
                  "the start");
  return false;
}

void ProcessGroupWeft::keep(const c10::intrusive_ptr<c10d::Work>& work) {
  std::lock_guard<std::mutex> lock(coalesce_mutex_);
  if (coalescing_) coalesced_.push_back(work);
}

void ProcessGroupWeft::begin_coalescing() {
  std::vector<c10::intrusive_ptr<c10d::Work>> abandoned;
  std::lock_guard<std::mutex> lock(coalesce_mutex_);
  if (coalescing_) {
    // The last block never ended (an exception inside it): its held sends and receives are
    // dropped, never issued, and their Works say so.
    TORCH_WARN("weft backend: a coalescing block began before the last one ended; the last one's ",
               held_.messages.size(), " held sends and receives are dropped");
    if (held_.slot) {
      std::lock_guard<std::mutex> slot_lock(held_.slot->mutex);
      held_.slot->error = std::make_exception_ptr(std::runtime_error(
          "weft backend: a send or receive of a coalescing block that never ended was dropped, not issued"));
    }
    held_ = {};
  }
  coalescing_ = true;
  abandoned.swap(coalesced_);  // released after the lock
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::end_coalescing() {
  std::unique_lock<std::mutex> lock(coalesce_mutex_);
  TORCH_CHECK(coalescing_, "weft backend: endCoalescing without startCoalescing");
  coalescing_ = false;
  std::vector<c10::intrusive_ptr<c10d::Work>> works = std::exchange(coalesced_, {});
  HeldBatch held = std::exchange(held_, {});
  lock.unlock();
  if (!held.messages.empty()) works.push_back(issue_batch(std::move(held)));
  return c10::make_intrusive<CoalescedWork>(getRank(), std::move(works));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::batch(c10d::OpType type, const P2pMessage& message) {
  std::lock_guard<std::mutex> lock(coalesce_mutex_);
  if (!coalescing_) return {};
  std::vector<P2pMessage>& held = held_.messages;
  TORCH_CHECK(held.empty() || held[0].tensor.device() == message.tensor.device(), "weft backend: the ",
              message.send ? "send" : "recv", "s of one coalescing block must be on one device (",
              held[0].tensor.device().str(), " and ", message.tensor.device().str(), ")");
  if (!held_.slot) held_.slot = std::make_shared<BatchSlot>();
  held.push_back(message);
  std::vector<at::Tensor> outputs;
  if (!message.send) outputs.push_back(message.tensor);
  return c10::make_intrusive<BatchedWork>(getRank(), type, std::move(outputs), held_.slot);
}

void ProcessGroupWeft::issue_held_batch() {
  std::unique_lock<std::mutex> lock(coalesce_mutex_);
  if (held_.messages.empty()) return;
  HeldBatch held = std::exchange(held_, {});
  lock.unlock();
  keep(issue_batch(std::move(held)));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::issue_batch(HeldBatch held) {
  const std::shared_ptr<BatchSlot>& slot = held.slot;
  std::vector<at::Tensor> touched, outputs;
  for (const P2pMessage& m : held.messages) {
    touched.push_back(m.tensor);
    if (!m.send) outputs.push_back(m.tensor);
  }
  c10::intrusive_ptr<c10d::Work> work;
  try {
    work = cuda_->exchange(c10d::OpType::UNKNOWN, "batched send/recv", touched, std::move(outputs),
                           std::move(held.messages), false);
  } catch (...) {
    std::lock_guard<std::mutex> slot_lock(slot->mutex);
    slot->error = std::current_exception();
    throw;
  }
  std::lock_guard<std::mutex> slot_lock(slot->mutex);
  slot->work = work;
  return work;
}

BatchedWork::BatchedWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
                         std::shared_ptr<BatchSlot> slot)
    : c10d::Work(rank, type), outputs_(std::move(outputs)), slot_(std::move(slot)) {}

c10::intrusive_ptr<c10d::Work> BatchedWork::issued() {
  std::lock_guard<std::mutex> lock(slot_->mutex);
  if (slot_->error) std::rethrow_exception(slot_->error);
  return slot_->work;
}

c10::intrusive_ptr<c10d::Work> BatchedWork::exchange() {
  c10::intrusive_ptr<c10d::Work> work = issued();
  TORCH_CHECK(work, "weft backend: a send or receive on CUDA tensors issued inside a coalescing block "
              "(batch_isend_irecv) runs when the block ends; it cannot be waited for inside the block");
  return work;
}

bool BatchedWork::isCompleted() {
  c10::intrusive_ptr<c10d::Work> work = issued();
  return work && work->isCompleted();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::each_pair(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const char* what,
    const std::function<c10::intrusive_ptr<c10d::Work>(at::Tensor&, at::Tensor&)>& one) {
  TORCH_CHECK(outputs.size() == inputs.size(), "weft backend: ", what, " takes as many outputs as inputs, got ",
              outputs.size(), " and ", inputs.size());
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  for (size_t i = 0; i < outputs.size(); ++i) works.push_back(one(outputs[i], inputs[i]));
  return c10::make_intrusive<CoalescedWork>(getRank(), std::move(works));
}

CoalescedWork::CoalescedWork(int rank, std::vector<c10::intrusive_ptr<c10d::Work>> works)
    : c10d::Work(rank, c10d::OpType::UNKNOWN), works_(std::move(works)) {}

bool CoalescedWork::isCompleted() {
  for (auto& w : works_)
    if (!w->isCompleted()) return false;
  return true;
}

bool CoalescedWork::wait(std::chrono::milliseconds timeout) {
  for (auto& w : works_) w->wait(timeout);
  return true;
}

void CoalescedWork::synchronize() {
  for (auto& w : works_) w->synchronize();
}

c10::intrusive_ptr<c10::ivalue::Future> CoalescedWork::getFuture() {
  TORCH_CHECK(works_.size() == 1, "weft backend: a Work over ", works_.size(),
              " coalesced operations has no single future; wait() for it");
  return works_[0]->getFuture();
}

std::vector<at::Tensor> CoalescedWork::result() {
  std::vector<at::Tensor> all;
  for (auto& w : works_) {
    std::vector<at::Tensor> r = w->result();
    all.insert(all.end(), r.begin(), r.end());
  }
  return all;
}

#if TORCH_VERSION_MAJOR >= 2
c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  return each_pair(outputs, inputs, "allgather_into_tensor_coalesced",
                   [&](at::Tensor& out, at::Tensor& in) { return _allgather_base(out, in, opts); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
  return each_pair(outputs, inputs, "reduce_scatter_tensor_coalesced",
                   [&](at::Tensor& out, at::Tensor& in) { return _reduce_scatter_base(out, in, opts); });
}
#endif

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  at::Tensor t = single(tensors, "broadcast");
  const MPI_Datatype type = mpi_datatype(t.scalar_type());
  const int n = count_of(t.numel(), "broadcast");
  const int root = int(opts.rootRank);
  if (t.is_cuda())
    return run_cuda(c10d::OpType::BROADCAST, "broadcast", {t}, tensors,
                      [=](MPI_Comm sc) { return MPIX_Bcast_enqueue(t.data_ptr(), n, type, root, sc); });
  return submit(c10d::OpType::BROADCAST, "broadcast", tensors, timeout_of(opts.timeout),
                [=, this](std::vector<MPI_Request>* r) {
                  r->emplace_back();
                  return MPI_Ibcast(t.data_ptr(), n, type, root, comm_, &r->back());
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  at::Tensor t = single(tensors, "allreduce");
  const MPI_Datatype type = mpi_datatype(t.scalar_type());
  const MPI_Op op = mpi_op(opts.reduceOp, t.scalar_type());
  const int n = count_of(t.numel(), "allreduce");
  const bool average = opts.reduceOp == c10d::ReduceOp::AVG;
  const int size = getSize();
  if (t.is_cuda())
    return run_cuda(
        c10d::OpType::ALLREDUCE, "allreduce", {t}, tensors,
        [=](MPI_Comm sc) { return MPIX_Allreduce_enqueue(MPI_IN_PLACE, t.data_ptr(), n, type, op, sc); },
        [=] {
          if (average) t.div_(size);
        });
  return submit(
      c10d::OpType::ALLREDUCE, "allreduce", tensors, timeout_of(opts.timeout),
      [=, this](std::vector<MPI_Request>* r) {
        r->emplace_back();
        return MPI_Iallreduce(MPI_IN_PLACE, t.data_ptr(), n, type, op, comm_, &r->back());
      },
      [=](const std::vector<MPI_Status>&) mutable {
        if (average) t.div_(size);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                     const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "weft backend: allreduce_coalesced of no tensors");
  for (const at::Tensor& t : tensors) {
    check_tensor(t, "allreduce_coalesced");
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(), "weft backend: allreduce_coalesced needs one type");
  }
  at::Tensor flat = flatten(tensors);
  const MPI_Datatype type = mpi_datatype(flat.scalar_type());
  const MPI_Op op = mpi_op(opts.reduceOp, flat.scalar_type());
  const int n = count_of(flat.numel(), "allreduce_coalesced");
  const bool average = opts.reduceOp == c10d::ReduceOp::AVG;
  const int size = getSize();
  std::vector<at::Tensor> outs = tensors;
  if (flat.is_cuda()) {
    std::vector<at::Tensor> touched = tensors;
    touched.push_back(flat);
    return run_cuda(
        c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", touched, tensors,
        [=](MPI_Comm sc) { return MPIX_Allreduce_enqueue(MPI_IN_PLACE, flat.data_ptr(), n, type, op, sc); },
        [=]() mutable {
          if (average) flat.div_(size);
          unflatten(flat, outs);
        });
  }
  return submit(
      c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors, timeout_of(opts.timeout),
      [=, this](std::vector<MPI_Request>* r) {
        r->emplace_back();
        return MPI_Iallreduce(MPI_IN_PLACE, flat.data_ptr(), n, type, op, comm_, &r->back());
      },
      [=](const std::vector<MPI_Status>&) mutable {
        if (average) flat.div_(size);
        unflatten(flat, outs);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  at::Tensor t = single(tensors, "reduce");
  const MPI_Datatype type = mpi_datatype(t.scalar_type());
  const MPI_Op op = mpi_op(opts.reduceOp, t.scalar_type());
  const int n = count_of(t.numel(), "reduce");
  const int root = int(opts.rootRank);
  const bool at_root = getRank() == root, average = opts.reduceOp == c10d::ReduceOp::AVG;
  const int size = getSize();
  if (t.is_cuda())
    return run_cuda(
        c10d::OpType::REDUCE, "reduce", {t}, tensors,
        [=](MPI_Comm sc) {
          return MPIX_Reduce_enqueue(at_root ? MPI_IN_PLACE : t.data_ptr(), at_root ? t.data_ptr() : nullptr, n,
                                     type, op, root, sc);
        },
        [=] {
          if (average && at_root) t.div_(size);
        });
  return submit(
      c10d::OpType::REDUCE, "reduce", tensors, timeout_of(opts.timeout),
      [=, this](std::vector<MPI_Request>* r) {
        r->emplace_back();
        return MPI_Ireduce(at_root ? MPI_IN_PLACE : t.data_ptr(), at_root ? t.data_ptr() : nullptr, n, type, op,
                           root, comm_, &r->back());
      },
      [=](const std::vector<MPI_Status>&) mutable {
        if (average && at_root) t.div_(size);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions& opts) {
  at::Tensor in = single(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == size_t(getSize()),
              "weft backend: allgather needs one list of ", getSize(), " output tensors");
  for (const at::Tensor& o : outputs[0]) check_same(o, in, "an allgather output");
  at::Tensor flat = at::empty({int64_t(getSize()) * in.numel()}, in.options());
  const MPI_Datatype type = mpi_datatype(in.scalar_type());
  const int n = count_of(in.numel(), "allgather");
  std::vector<at::Tensor> outs = outputs[0];
  if (in.is_cuda()) {
    std::vector<at::Tensor> touched = outs;
    touched.push_back(in);
    touched.push_back(flat);
    return run_cuda(
        c10d::OpType::ALLGATHER, "allgather", touched, outs,
        [=](MPI_Comm sc) { return MPIX_Allgather_enqueue(in.data_ptr(), n, type, flat.data_ptr(), n, type, sc); },
        [=]() mutable { unflatten(flat, outs); });
  }
  return submit(
      c10d::OpType::ALLGATHER, "allgather", outs, timeout_of(opts.timeout),
      [=, this](std::vector<MPI_Request>* r) {
        r->emplace_back();
        return MPI_Iallgather(in.data_ptr(), n, type, flat.data_ptr(), n, type, comm_, &r->back());
      },
      [=](const std::vector<MPI_Status>&) mutable { unflatten(flat, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                 const c10d::AllgatherOptions& opts) {
  check_tensor(input, "allgather input");
  check_tensor(output, "allgather output");
  TORCH_CHECK(output.scalar_type() == input.scalar_type() && output.numel() == input.numel() * getSize(),
              "weft backend: allgather_into_tensor's output must hold ", getSize(), " inputs");
  const MPI_Datatype type = mpi_datatype(input.scalar_type());
  const int n = count_of(input.numel(), "allgather");
  at::Tensor in = input, out = output;
  // The input as this rank's own chunk of the output (FSDP's all-gather): MPI's in-place form.
  // Any other overlap: from a copy (MPI refuses aliased buffers).
  const bool in_place = in.data_ptr() == static_cast<char*>(out.data_ptr()) + size_t(getRank()) * bytes_of(in);
  if (!in_place && overlaps(in, out)) in = in.clone();
  const void* send = in_place ? MPI_IN_PLACE : in.data_ptr();
  if (in.is_cuda())
    return run_cuda(c10d::OpType::_ALLGATHER_BASE, "allgather_into_tensor", {in, out}, {output}, [=](MPI_Comm sc) {
      return MPIX_Allgather_enqueue(send, n, type, out.data_ptr(), n, type, sc);
    });
  return submit(c10d::OpType::_ALLGATHER_BASE, "allgather_into_tensor", {output}, timeout_of(opts.timeout),
                [=, this](std::vector<MPI_Request>* r) {
                  r->emplace_back();
                  return MPI_Iallgather(send, n, type, out.data_ptr(), n, type, comm_, &r->back());
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::GatherOptions& opts) {
  at::Tensor in = single(inputs, "gather");
  const int root = int(opts.rootRank);
  const bool at_root = getRank() == root;
  std::vector<at::Tensor> outs;
  at::Tensor flat;
  if (at_root) {
    TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == size_t(getSize()),
                "weft backend: gather's root needs one list of ", getSize(), " output tensors");
    for (const at::Tensor& o : outputs[0]) {
      check_same(o, in, "a gather output");
      check_tensor(o, "a gather output");
    }
    outs = outputs[0];
    if (!in.is_cuda()) flat = at::empty({int64_t(getSize()) * in.numel()}, in.options());
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "weft backend: gather takes output tensors at the root only");
  }
  const MPI_Datatype type = mpi_datatype(in.scalar_type());
  const int n = count_of(in.numel(), "gather");
  if (in.is_cuda()) {
    std::vector<P2pMessage> messages;
    if (at_root) {
      for (int q = 0; q < getSize(); ++q)
        if (q != root) messages.push_back({false, outs[size_t(q)], q, cuda_->reserved_tag()});
    } else {
      messages.push_back({true, in, root, cuda_->reserved_tag()});
    }
    std::vector<at::Tensor> touched = outs;
    touched.push_back(in);
    return exchange_cuda(c10d::OpType::GATHER, "gather", touched, outs, std::move(messages), true, [=]() mutable {
      if (at_root) outs[size_t(root)].copy_(in);
    });
  }
  return submit(
      c10d::OpType::GATHER, "gather", outs, timeout_of(opts.timeout),
      [=, this](std::vector<MPI_Request>* r) {
        r->emplace_back();
        return MPI_Igather(in.data_ptr(), n, type, at_root ? flat.data_ptr() : nullptr, n, type, root, comm_,
                           &r->back());
      },
      [=](const std::vector<MPI_Status>&) mutable {
        if (at_root) unflatten(flat, outs);
      },
      nullptr, {in});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::scatter(std::vector<at::Tensor>& outputs,
                                                         std::vector<std::vector<at::Tensor>>& inputs,
                                                         const c10d::ScatterOptions& opts) {
  at::Tensor out = single(outputs, "scatter");
  const int root = int(opts.rootRank);
  const bool at_root = getRank() == root;
  at::Tensor flat;
  if (at_root) {
    TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == size_t(getSize()),
                "weft backend: scatter's root needs one list of ", getSize(), " input tensors");
    for (const at::Tensor& i : inputs[0]) {
      check_same(i, out, "a scatter input");
      check_tensor(i, "a scatter input");
    }
    if (!out.is_cuda()) flat = flatten(inputs[0]);
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "weft backend: scatter takes input tensors at the root only");
  }
  const MPI_Datatype type = mpi_datatype(out.scalar_type());
  const int n = count_of(out.numel(), "scatter");
  if (out.is_cuda()) {
    std::vector<P2pMessage> messages;
    std::vector<at::Tensor> touched{out};
    if (at_root) {
      const std::vector<at::Tensor>& pieces = inputs[0];
      touched.insert(touched.end(), pieces.begin(), pieces.end());
      for (int q = 0; q < getSize(); ++q)
        if (q != root) messages.push_back({true, pieces[size_t(q)], q, cuda_->reserved_tag()});
    } else {
      messages.push_back({false, out, root, cuda_->reserved_tag()});
    }
    at::Tensor own = at_root ? inputs[0][size_t(root)] : at::Tensor();
    return exchange_cuda(c10d::OpType::SCATTER, "scatter", touched, outputs, std::move(messages), true,
                         [=]() mutable {
                           if (at_root) out.copy_(own);
                         });
  }
  return submit(c10d::OpType::SCATTER, "scatter", outputs, timeout_of(opts.timeout),
                [=, this](std::vector<MPI_Request>* r) {
                  r->emplace_back();
                  return MPI_Iscatter(at_root ? flat.data_ptr() : nullptr, n, type, out.data_ptr(), n, type, root,
                                      comm_, &r->back());
                },
                nullptr, nullptr, {flat});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                                const c10d::ReduceScatterOptions& opts) {
  at::Tensor out = single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == size_t(getSize()),
              "weft backend: reduce_scatter needs one list of ", getSize(), " input tensors");
  for (const at::Tensor& i : inputs[0]) check_same(i, out, "a reduce_scatter input");
  return reduce_scatter_block(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", outputs, flatten(inputs[0]), out,
                              opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                      const c10d::ReduceScatterOptions& opts) {
  check_tensor(input, "reduce_scatter input");
  check_tensor(output, "reduce_scatter output");
  TORCH_CHECK(output.scalar_type() == input.scalar_type() && input.numel() == output.numel() * getSize(),
              "weft backend: reduce_scatter_tensor's input must hold ", getSize(), " outputs");
  return reduce_scatter_block(c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor", {output}, input, output,
                              opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::reduce_scatter_block(c10d::OpType type_of_op, const char* name,
                                                                    std::vector<at::Tensor> outputs, at::Tensor in,
                                                                    at::Tensor out,
                                                                    const c10d::ReduceScatterOptions& opts) {
  const MPI_Datatype type = mpi_datatype(out.scalar_type());
  const MPI_Op op = mpi_op(opts.reduceOp, out.scalar_type());
  const int n = count_of(out.numel(), name);
  const bool average = opts.reduceOp == c10d::ReduceOp::AVG;
  if (overlaps(in, out)) in = in.clone();  // the output inside the input: MPI refuses aliased buffers
  const int size = getSize();
  if (out.is_cuda())
    return run_cuda(
        type_of_op, name, {in, out}, std::move(outputs),
        [=](MPI_Comm sc) { return MPIX_Reduce_scatter_block_enqueue(in.data_ptr(), out.data_ptr(), n, type, op, sc); },
        [=] {
          if (average) out.div_(size);
        });
  return submit(
      type_of_op, name, std::move(outputs), timeout_of(opts.timeout),
      [=, this](std::vector<MPI_Request>* r) {
        r->emplace_back();
        return MPI_Ireduce_scatter_block(in.data_ptr(), out.data_ptr(), n, type, op, comm_, &r->back());
      },
      [=](const std::vector<MPI_Status>&) mutable {
        if (average) out.div_(size);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                               std::vector<int64_t>& output_splits,
                                                               std::vector<int64_t>& input_splits,
                                                               const c10d::AllToAllOptions& opts) {
  check_tensor(input, "alltoall input");
  check_tensor(output, "alltoall output");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "weft backend: alltoall's tensors differ in type");
  const int p = getSize();
  const MPI_Datatype type = mpi_datatype(input.scalar_type());
  at::Tensor in = input, out = output;
  if (output_splits.empty() && input_splits.empty()) {
    TORCH_CHECK(input.numel() % p == 0 && output.numel() == input.numel(),
                "weft backend: alltoall_single without splits needs equal tensors divisible by the group size");
    const int n = count_of(input.numel() / p, "alltoall");
    if (in.is_cuda()) {
      std::vector<int> counts(static_cast<size_t>(p), n), displs(static_cast<size_t>(p));
      for (int q = 0; q < p; ++q) displs[size_t(q)] = count_of(int64_t(q) * n, "an alltoall displacement");
      return alltoall_cuda(c10d::OpType::ALLTOALL_BASE, "alltoall_single", in, out, counts, displs, counts, displs);
    }
    return submit(c10d::OpType::ALLTOALL_BASE, "alltoall_single", {output}, timeout_of(opts.timeout),
                  [=, this](std::vector<MPI_Request>* r) {
                    r->emplace_back();
                    return MPI_Ialltoall(in.data_ptr(), n, type, out.data_ptr(), n, type, comm_, &r->back());
                  },
                  nullptr, nullptr, {in});
  }
  // Splits count rows of the first dimension.
  auto counts = [&](const at::Tensor& t, const std::vector<int64_t>& splits, const char* what) {
    const int64_t row = t.dim() > 0 && t.size(0) > 0 ? t.numel() / t.size(0) : 1;
    std::vector<int> c(static_cast<size_t>(p)), d(static_cast<size_t>(p));
    if (splits.empty()) {
      TORCH_CHECK(t.dim() > 0 && t.size(0) % p == 0, "weft backend: alltoall ", what,
                  " without splits needs a first dimension divisible by the group size");
      for (int q = 0; q < p; ++q) c[size_t(q)] = count_of(t.size(0) / p * row, "an alltoall piece");
    } else {
      TORCH_CHECK(splits.size() == size_t(p), "weft backend: alltoall ", what, " splits need ", p, " entries");
      int64_t rows = 0;
      for (int q = 0; q < p; ++q) {
        TORCH_CHECK(splits[size_t(q)] >= 0, "weft backend: a negative alltoall split");
        c[size_t(q)] = count_of(splits[size_t(q)] * row, "an alltoall piece");
        rows += splits[size_t(q)];
      }
      TORCH_CHECK(t.dim() > 0 && rows == t.size(0), "weft backend: alltoall ", what, " splits sum to ", rows,
                  " rows, the tensor has ", t.dim() > 0 ? t.size(0) : 0);
    }
    int64_t at = 0;
    for (int q = 0; q < p; ++q) {
      d[size_t(q)] = count_of(at, "an alltoall displacement");
      at += c[size_t(q)];
    }
    return std::make_pair(c, d);
  };
  auto [send_counts, send_displs] = counts(input, input_splits, "input");
  auto [recv_counts, recv_displs] = counts(output, output_splits, "output");
  if (in.is_cuda())
    return alltoall_cuda(c10d::OpType::ALLTOALL_BASE, "alltoall_single", in, out, send_counts, send_displs,
                         recv_counts, recv_displs);
  return submit(c10d::OpType::ALLTOALL_BASE, "alltoall_single", {output}, timeout_of(opts.timeout),
                [=, this](std::vector<MPI_Request>* r) {
                  r->emplace_back();
                  return MPI_Ialltoallv(in.data_ptr(), send_counts.data(), send_displs.data(), type, out.data_ptr(),
                                        recv_counts.data(), recv_displs.data(), type, comm_, &r->back());
                },
                nullptr, nullptr, {in});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::alltoall_cuda(c10d::OpType type, const char* name, at::Tensor in,
                                                               at::Tensor out, const std::vector<int>& send_counts,
                                                               const std::vector<int>& send_displs,
                                                               const std::vector<int>& recv_counts,
                                                               const std::vector<int>& recv_displs) {
  const int me = getRank(), p = getSize();
  at::Tensor in_flat = in.reshape({-1}), out_flat = out.reshape({-1});
  auto piece = [](const at::Tensor& flat, const std::vector<int>& counts, const std::vector<int>& displs, int q) {
    return flat.narrow(0, displs[size_t(q)], counts[size_t(q)]);
  };
  std::vector<P2pMessage> messages;
  for (int q = 0; q < p; ++q) {
    if (q == me) continue;
    messages.push_back({false, piece(out_flat, recv_counts, recv_displs, q), q, cuda_->reserved_tag()});
    messages.push_back({true, piece(in_flat, send_counts, send_displs, q), q, cuda_->reserved_tag()});
  }
  TORCH_CHECK(send_counts[size_t(me)] == recv_counts[size_t(me)], "weft backend: ", name, " sends ",
              send_counts[size_t(me)], " elements to its own rank and receives ", recv_counts[size_t(me)]);
  at::Tensor own_in = piece(in_flat, send_counts, send_displs, me), own_out = piece(out_flat, recv_counts, recv_displs, me);
  return exchange_cuda(type, name, {in, out}, {out}, std::move(messages), true,
                       [=]() mutable { own_out.copy_(own_in); });
}

void ProcessGroupWeft::check_user_tag(int tag) const {
  TORCH_CHECK(tag != cuda_->reserved_tag(), "weft backend: tag ", tag,
              " is reserved for the group's gather, scatter and alltoall on CUDA tensors");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions& opts) {
  const int p = getSize();
  TORCH_CHECK(outputs.size() == size_t(p) && inputs.size() == size_t(p), "weft backend: alltoall needs ", p,
              " input and ", p, " output tensors");
  std::vector<int> send_counts(static_cast<size_t>(p)), send_displs(static_cast<size_t>(p)), recv_counts(static_cast<size_t>(p)), recv_displs(static_cast<size_t>(p));
  int64_t s_at = 0, r_at = 0;
  for (int q = 0; q < p; ++q) {
    check_tensor(inputs[size_t(q)], "an alltoall input");
    check_tensor(outputs[size_t(q)], "an alltoall output");
    TORCH_CHECK(inputs[size_t(q)].scalar_type() == inputs[0].scalar_type() &&
                    outputs[size_t(q)].scalar_type() == inputs[0].scalar_type(),
                "weft backend: alltoall's tensors differ in type");
    send_counts[size_t(q)] = count_of(inputs[size_t(q)].numel(), "an alltoall input");
    recv_counts[size_t(q)] = count_of(outputs[size_t(q)].numel(), "an alltoall output");
    send_displs[size_t(q)] = count_of(s_at, "alltoall");
    recv_displs[size_t(q)] = count_of(r_at, "alltoall");
    s_at += send_counts[size_t(q)];
    r_at += recv_counts[size_t(q)];
  }
  if (inputs[0].is_cuda()) {
    std::vector<P2pMessage> messages;
    const int me = getRank();
    for (int q = 0; q < p; ++q) {
      if (q == me) continue;
      messages.push_back({false, outputs[size_t(q)], q, cuda_->reserved_tag()});
      messages.push_back({true, inputs[size_t(q)], q, cuda_->reserved_tag()});
    }
    std::vector<at::Tensor> touched = outputs;
    touched.insert(touched.end(), inputs.begin(), inputs.end());
    at::Tensor own_in = inputs[size_t(me)], own_out = outputs[size_t(me)];
    return exchange_cuda(c10d::OpType::ALLTOALL, "alltoall", touched, outputs, std::move(messages), true,
                         [=]() mutable { own_out.copy_(own_in); });
  }
  at::Tensor send_flat = flatten(inputs);
  at::Tensor recv_flat = at::empty({r_at}, inputs[0].options());
  const MPI_Datatype type = mpi_datatype(inputs[0].scalar_type());
  std::vector<at::Tensor> outs = outputs;
  return submit(
      c10d::OpType::ALLTOALL, "alltoall", outputs, timeout_of(opts.timeout),
      [=, this](std::vector<MPI_Request>* r) {
        r->emplace_back();
        return MPI_Ialltoallv(send_flat.data_ptr(), send_counts.data(), send_displs.data(), type,
                              recv_flat.data_ptr(), recv_counts.data(), recv_displs.data(), type, comm_, &r->back());
      },
      [=](const std::vector<MPI_Status>&) mutable { unflatten(recv_flat, outs); }, nullptr, {send_flat, recv_flat});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  at::Tensor t = single(tensors, "send");
  const MPI_Datatype type = mpi_datatype(t.scalar_type());
  const int n = count_of(t.numel(), "send");
  if (stream_p2p(t, "send")) {
    check_user_tag(tag);
    const P2pMessage message{true, t, dst, tag};
    if (auto batched = batch(c10d::OpType::SEND, message)) return batched;
    return exchange_cuda(c10d::OpType::SEND, "send", {t}, {}, {message}, false);
  }
  return submit(c10d::OpType::SEND, "send", {}, timeout_,
                [=, this](std::vector<MPI_Request>* r) {
                  r->emplace_back();
                  return MPI_Isend(t.data_ptr(), n, type, dst, tag, comm_, &r->back());
                },
                nullptr, nullptr, {t});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  at::Tensor t = single(tensors, "recv");
  const MPI_Datatype type = mpi_datatype(t.scalar_type());
  const int n = count_of(t.numel(), "recv");
  if (stream_p2p(t, "recv")) {
    check_user_tag(tag);
    const P2pMessage message{false, t, src, tag};
    if (auto batched = batch(c10d::OpType::RECV, message)) return batched;
    return exchange_cuda(c10d::OpType::RECV, "recv", {t}, tensors, {message}, false);
  }
  return submit(
      c10d::OpType::RECV, "recv", tensors, timeout_,
      [=, this](std::vector<MPI_Request>* r) {
        r->emplace_back();
        return MPI_Irecv(t.data_ptr(), n, type, src, tag, comm_, &r->back());
      },
      nullptr, std::make_shared<std::atomic<int>>(src));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  at::Tensor t = single(tensors, "recv");
  const MPI_Datatype type = mpi_datatype(t.scalar_type());
  const int n = count_of(t.numel(), "recv");
  // A stream-ordered send is matched by a receive that names its source (weft's stream-native
  // point-to-point has no wildcard), so there is none to match it from the host.
  TORCH_CHECK(!(t.is_cuda() && cuda_->streaming()),
              "weft backend: recv from any source is not supported on CUDA tensors (their sends are "
              "stream-ordered and matched by source); name the source");
  // The sender is known once the receive completed: the finish step records it in the Work.
  auto source = std::make_shared<std::atomic<int>>(-1);
  return submit(
      c10d::OpType::RECVANYSOURCE, "recv from any source", tensors, timeout_,
      [=, this](std::vector<MPI_Request>* r) {
        r->emplace_back();
        return MPI_Irecv(t.data_ptr(), n, type, MPI_ANY_SOURCE, tag, comm_, &r->back());
      },
      [source](const std::vector<MPI_Status>& st) { *source = st.at(0).MPI_SOURCE; }, source);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::barrier(const c10d::BarrierOptions& opts) {
  return submit(c10d::OpType::BARRIER, "barrier", {}, timeout_of(opts.timeout),
                [this](std::vector<MPI_Request>* r) {
                  r->emplace_back();
                  return MPI_Ibarrier(comm_, &r->back());
                });
}

}  // namespace torch_weft
