// Collective bindings: validate, pick the reduction, call coll/.
#include "datatype_api.h"
#include "runtime/core/staging.h"
#include "state.h"

namespace weft::mpi {

namespace {

int check_comm(const char* fn, MPI_Comm comm, Comm** c) {
  *c = lookup_comm(comm);
  if (!*c) return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  return MPI_SUCCESS;
}

int check_reduction(const char* fn, MPI_Comm comm, int count, MPI_Datatype dt, MPI_Op op,
                    const void* sendbuf, const void* recvbuf, bool need_recv, UserOpCall* call,
                    coll::Reduction* red, ReductionLayout* layout) {
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %d (argument 'count')", count);
  int rc = make_reduction(fn, comm, op, dt, size_t(count), call, red, layout);
  if (rc != MPI_SUCCESS) return rc;
  if (count > 0 && layout->type->predefined && ((!sendbuf) || (need_recv && !recvbuf)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d", count);
  return MPI_SUCCESS;
}

// The reduction input as contiguous bytes: the buffer itself, or its packed form in *staging.
const void* reduction_input(const ReductionLayout& l, const void* buf, StagingBuffer* staging) {
  if (l.contiguous) return static_cast<const char*>(buf) + l.offset;
  *staging = staging_buffer(packed_size(l.type, l.count));
  pack(l.type, buf, l.count, staging->get());
  return staging->get();
}

// Starts a schedule as request r; it completes through progress_collectives.
int start_schedule(const char* fn, MPI_Comm comm, const Comm& c,
                   const std::shared_ptr<const coll::Schedule>& schedule, Request* r) {
  auto run = std::make_shared<coll::ScheduleRun>(coll_context(c), schedule);
  r->complete = false;
  r->status = RequestStatus{};
  Status s = run->start();
  if (s != Status::ok) return raise_status(comm, s, fn);
  if (run->test()) {
    r->status.error = run->status();
    r->complete = true;
  } else {
    g_state->active_colls.emplace_back(r, std::move(run));
  }
  return MPI_SUCCESS;
}

// Returns the request for a non-blocking collective, or sets up a persistent one whose every
// MPI_Start runs the same schedule again.
int issue(const char* fn, MPI_Comm comm, const Comm& c, std::shared_ptr<const coll::Schedule> schedule,
          bool persistent, MPI_Request* request) {
  Request* r = g_state->requests.alloc(RequestKind::coll);
  r->owner = comm;
  if (persistent) {
    r->persistent = true;
    r->complete = true;  // inactive until started
    const Comm* cp = &c;
    r->start = [fn, comm, cp, schedule](Request& q) {
      int rc = start_schedule(fn, comm, *cp, schedule, &q);
      return rc == MPI_SUCCESS ? Status::ok : Status::internal;
    };
  } else {
    int rc = start_schedule(fn, comm, c, schedule, r);
    if (rc != MPI_SUCCESS) {
      g_state->requests.release(r);
      return rc;
    }
  }
  *request = request_handle(r);
  return MPI_SUCCESS;
}

int contiguous_only(const char* fn, MPI_Comm comm, const ReductionLayout& lay) {
  if (lay.contiguous) return MPI_SUCCESS;
  return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
               "non-contiguous datatypes in non-blocking and persistent collectives are not supported yet");
}

// The user reduction's arguments must outlive the call for a schedule that runs later.
std::shared_ptr<UserOpCall> lasting_call(const UserOpCall& call, coll::Reduction* red) {
  auto lasting = std::make_shared<UserOpCall>(call);
  if (red->user) red->user_ctx = lasting.get();
  return lasting;
}

int plan_allreduce_call(const char* fn, const void* sendbuf, void* recvbuf, int count,
                        MPI_Datatype dt, MPI_Op op, MPI_Comm comm, Comm** c,
                        std::shared_ptr<coll::Schedule>* out) {
  int rc = check_comm(fn, comm, c);
  if (rc != MPI_SUCCESS) return rc;
  const void* send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  coll::Reduction red;
  UserOpCall call;
  ReductionLayout lay;
  rc = check_reduction(fn, comm, count, dt, op, send, recvbuf, true, &call, &red, &lay);
  if (rc != MPI_SUCCESS) return rc;
  rc = contiguous_only(fn, comm, lay);
  if (rc != MPI_SUCCESS) return rc;
  auto lasting = lasting_call(call, &red);
  coll::CollContext ctx = coll_context(**c);
  *out = coll::plan_allreduce(ctx, static_cast<const char*>(send) + lay.offset,
                              static_cast<char*>(recvbuf) + lay.offset, lay.reduce_count, red);
  (*out)->keep(lasting);
  return MPI_SUCCESS;
}

int plan_reduce_call(const char* fn, const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt,
                     MPI_Op op, int root, MPI_Comm comm, Comm** c,
                     std::shared_ptr<coll::Schedule>* out) {
  int rc = check_comm(fn, comm, c);
  if (rc != MPI_SUCCESS) return rc;
  if (root < 0 || root >= (*c)->size)
    return raise(comm, MPI_ERR_ROOT, fn, "invalid root %d (argument 'root'; %s has %d ranks)", root, (*c)->name.c_str(), (*c)->size);
  const bool is_root = (*c)->rank == root;
  if (sendbuf == MPI_IN_PLACE && !is_root)
    return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only valid at the root");
  const void* send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  coll::Reduction red;
  UserOpCall call;
  ReductionLayout lay;
  rc = check_reduction(fn, comm, count, dt, op, send, recvbuf, is_root, &call, &red, &lay);
  if (rc != MPI_SUCCESS) return rc;
  rc = contiguous_only(fn, comm, lay);
  if (rc != MPI_SUCCESS) return rc;
  auto lasting = lasting_call(call, &red);
  coll::CollContext ctx = coll_context(**c);
  const char* in = static_cast<const char*>(send) + lay.offset;
  char* out_buf = is_root ? static_cast<char*>(recvbuf) + lay.offset : const_cast<char*>(in);
  *out = coll::plan_reduce(ctx, in, out_buf, lay.reduce_count, red, root);
  (*out)->keep(lasting);
  return MPI_SUCCESS;
}

int plan_bcast_call(const char* fn, void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                    Comm** c, std::shared_ptr<coll::Schedule>* out) {
  int rc = check_comm(fn, comm, c);
  if (rc != MPI_SUCCESS) return rc;
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %d (argument 'count')", count);
  const Datatype* d;
  rc = check_datatype(comm, fn, dt, &d);
  if (rc != MPI_SUCCESS) return rc;
  if (root < 0 || root >= (*c)->size)
    return raise(comm, MPI_ERR_ROOT, fn, "invalid root %d (argument 'root'; %s has %d ranks)", root, (*c)->name.c_str(), (*c)->size);
  ptrdiff_t offset = 0;
  if (!contiguous_span(d, size_t(count), &offset))
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                 "non-contiguous datatypes in non-blocking and persistent collectives are not supported yet");
  coll::CollContext ctx = coll_context(**c);
  *out = coll::plan_bcast(ctx, static_cast<char*>(buffer) + offset, packed_size(d, size_t(count)), root);
  return MPI_SUCCESS;
}

}  // namespace

int progress_collectives(void* state) {
  auto* st = static_cast<State*>(state);
  if (st->active_colls.empty()) [[likely]] return 0;
  int done = 0;
  for (size_t i = 0; i < st->active_colls.size();) {
    auto& [r, run] = st->active_colls[i];
    if (run->test()) {
      r->status.error = run->status();
      r->complete = true;
      st->active_colls[i] = std::move(st->active_colls.back());
      st->active_colls.pop_back();
      ++done;
    } else {
      ++i;
    }
  }
  return done;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Barrier");
  Comm* c;
  int rc = check_comm("MPI_Barrier", comm, &c);
  if (rc != MPI_SUCCESS) return rc;
  coll::CollContext ctx = coll_context(*c);
  Status s = coll::barrier(ctx);
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, "MPI_Barrier");
}

int PMPI_Bcast(void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Bcast");
  Comm* c;
  int rc = check_comm("MPI_Bcast", comm, &c);
  if (rc != MPI_SUCCESS) return rc;
  if (count < 0) return raise(comm, MPI_ERR_COUNT, "MPI_Bcast", "negative count %d (argument 'count')", count);
  const Datatype* d = lookup_datatype(dt);
  if (!d) return raise(comm, MPI_ERR_TYPE, "MPI_Bcast", "invalid datatype 0x%x (argument 'datatype')", unsigned(dt));
  if (root < 0 || root >= c->size)
    return raise(comm, MPI_ERR_ROOT, "MPI_Bcast", "invalid root %d (argument 'root'; %s has %d ranks)", root, c->name.c_str(), c->size);
  if (!d->committed) return raise(comm, MPI_ERR_TYPE, "MPI_Bcast", "datatype 0x%x is not committed", unsigned(dt));
  size_t bytes = packed_size(d, size_t(count));
  if (!buffer && bytes && d->predefined) return raise(comm, MPI_ERR_BUFFER, "MPI_Bcast", "NULL buffer with count %d", count);
  coll::CollContext ctx = coll_context(*c);
  ptrdiff_t offset = 0;
  Status s;
  if (contiguous_span(d, size_t(count), &offset)) {
    s = coll::bcast(ctx, static_cast<char*>(buffer) + offset, bytes, root);
  } else {  // non-contiguous: the packed form travels
    StagingBuffer staging = staging_buffer(bytes);
    if (c->rank == root) pack(d, buffer, size_t(count), staging.get());
    s = coll::bcast(ctx, staging.get(), bytes, root);
    if (s == Status::ok && c->rank != root) unpack(d, staging.get(), bytes, buffer, size_t(count));
  }
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, "MPI_Bcast");
}

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Reduce");
  Comm* c;
  int rc = check_comm("MPI_Reduce", comm, &c);
  if (rc != MPI_SUCCESS) return rc;
  if (root < 0 || root >= c->size)
    return raise(comm, MPI_ERR_ROOT, "MPI_Reduce", "invalid root %d (argument 'root'; %s has %d ranks)", root, c->name.c_str(), c->size);
  const bool is_root = c->rank == root;
  if (sendbuf == MPI_IN_PLACE && !is_root)
    return raise(comm, MPI_ERR_BUFFER, "MPI_Reduce", "MPI_IN_PLACE is only valid at the root");
  const void* send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  coll::Reduction red;
  UserOpCall call;
  ReductionLayout lay;
  rc = check_reduction("MPI_Reduce", comm, count, dt, op, send, recvbuf, is_root, &call, &red, &lay);
  if (rc != MPI_SUCCESS) return rc;
  if (count == 0) return MPI_SUCCESS;
  coll::CollContext ctx = coll_context(*c);
  StagingBuffer in_staging, out_staging;
  const void* in = reduction_input(lay, send, &in_staging);
  void* out = nullptr;
  if (is_root) {
    if (lay.contiguous) out = static_cast<char*>(recvbuf) + lay.offset;
    else out = (out_staging = staging_buffer(packed_size(lay.type, lay.count))).get();
  }
  Status s = coll::reduce(ctx, in, is_root ? out : const_cast<void*>(in), lay.reduce_count, red, root);
  if (s == Status::ok && is_root && !lay.contiguous)
    unpack(lay.type, out, packed_size(lay.type, lay.count), recvbuf, lay.count);
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, "MPI_Reduce");
}

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Allreduce");
  Comm* c;
  int rc = check_comm("MPI_Allreduce", comm, &c);
  if (rc != MPI_SUCCESS) return rc;
  const void* send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  coll::Reduction red;
  UserOpCall call;
  ReductionLayout lay;
  rc = check_reduction("MPI_Allreduce", comm, count, dt, op, send, recvbuf, true, &call, &red, &lay);
  if (rc != MPI_SUCCESS) return rc;
  if (count == 0) return MPI_SUCCESS;
  coll::CollContext ctx = coll_context(*c);
  Status s;
  if (lay.contiguous) {
    s = coll::allreduce(ctx, static_cast<const char*>(send) + lay.offset,
                        static_cast<char*>(recvbuf) + lay.offset, lay.reduce_count, red);
  } else {  // reduce the packed form, then unpack the result
    StagingBuffer staging;
    void* packed = const_cast<void*>(reduction_input(lay, send, &staging));
    s = coll::allreduce(ctx, packed, packed, lay.reduce_count, red);
    if (s == Status::ok) unpack(lay.type, packed, packed_size(lay.type, lay.count), recvbuf, lay.count);
  }
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, "MPI_Allreduce");
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Ibarrier");
  Comm* c;
  int rc = check_comm("MPI_Ibarrier", comm, &c);
  if (rc != MPI_SUCCESS) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, "MPI_Ibarrier", "request is NULL");
  return issue("MPI_Ibarrier", comm, *c, coll::plan_barrier(coll_context(*c)), false, request);
}

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Barrier_init");
  Comm* c;
  int rc = check_comm("MPI_Barrier_init", comm, &c);
  if (rc != MPI_SUCCESS) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, "MPI_Barrier_init", "request is NULL");
  return issue("MPI_Barrier_init", comm, *c, coll::plan_barrier(coll_context(*c)), true, request);
}

int PMPI_Ibcast(void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Ibcast");
  if (!request) return raise(comm, MPI_ERR_ARG, "MPI_Ibcast", "request is NULL");
  Comm* c;
  std::shared_ptr<coll::Schedule> s;
  int rc = plan_bcast_call("MPI_Ibcast", buffer, count, dt, root, comm, &c, &s);
  return rc != MPI_SUCCESS ? rc : issue("MPI_Ibcast", comm, *c, s, false, request);
}

int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Info,
                    MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Bcast_init");
  if (!request) return raise(comm, MPI_ERR_ARG, "MPI_Bcast_init", "request is NULL");
  Comm* c;
  std::shared_ptr<coll::Schedule> s;
  int rc = plan_bcast_call("MPI_Bcast_init", buffer, count, dt, root, comm, &c, &s);
  return rc != MPI_SUCCESS ? rc : issue("MPI_Bcast_init", comm, *c, s, true, request);
}

int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Ireduce");
  if (!request) return raise(comm, MPI_ERR_ARG, "MPI_Ireduce", "request is NULL");
  Comm* c;
  std::shared_ptr<coll::Schedule> s;
  int rc = plan_reduce_call("MPI_Ireduce", sendbuf, recvbuf, count, dt, op, root, comm, &c, &s);
  return rc != MPI_SUCCESS ? rc : issue("MPI_Ireduce", comm, *c, s, false, request);
}

int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                     int root, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Reduce_init");
  if (!request) return raise(comm, MPI_ERR_ARG, "MPI_Reduce_init", "request is NULL");
  Comm* c;
  std::shared_ptr<coll::Schedule> s;
  int rc = plan_reduce_call("MPI_Reduce_init", sendbuf, recvbuf, count, dt, op, root, comm, &c, &s);
  return rc != MPI_SUCCESS ? rc : issue("MPI_Reduce_init", comm, *c, s, true, request);
}

int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Iallreduce");
  if (!request) return raise(comm, MPI_ERR_ARG, "MPI_Iallreduce", "request is NULL");
  Comm* c;
  std::shared_ptr<coll::Schedule> s;
  int rc = plan_allreduce_call("MPI_Iallreduce", sendbuf, recvbuf, count, dt, op, comm, &c, &s);
  return rc != MPI_SUCCESS ? rc : issue("MPI_Iallreduce", comm, *c, s, false, request);
}

int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm, MPI_Info, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Allreduce_init");
  if (!request) return raise(comm, MPI_ERR_ARG, "MPI_Allreduce_init", "request is NULL");
  Comm* c;
  std::shared_ptr<coll::Schedule> s;
  int rc = plan_allreduce_call("MPI_Allreduce_init", sendbuf, recvbuf, count, dt, op, comm, &c, &s);
  return rc != MPI_SUCCESS ? rc : issue("MPI_Allreduce_init", comm, *c, s, true, request);
}

}  // extern "C"

WEFT_PMPI_ALIAS(Ibarrier)
WEFT_PMPI_ALIAS(Barrier_init)
WEFT_PMPI_ALIAS(Ibcast)
WEFT_PMPI_ALIAS(Bcast_init)
WEFT_PMPI_ALIAS(Ireduce)
WEFT_PMPI_ALIAS(Reduce_init)
WEFT_PMPI_ALIAS(Iallreduce)
WEFT_PMPI_ALIAS(Allreduce_init)
WEFT_PMPI_ALIAS(Barrier)
WEFT_PMPI_ALIAS(Bcast)
WEFT_PMPI_ALIAS(Reduce)
WEFT_PMPI_ALIAS(Allreduce)
