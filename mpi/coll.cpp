// Collective bindings, part 1: argument checks, the MPI side of a call (coll_call.h: errors
// raised, requests made) and the collectives that reduce (Reduce, Allreduce,
// Reduce_scatter(_block), Scan, Exscan) plus Barrier and Bcast, each blocking, non-blocking
// (MPI_I*) and persistent (MPI_*_init) from one planning function.
#include "coll_call.h"

#include <climits>
#include <initializer_list>

#include "coll/gpu/gpu_coll.h"
#include "datatype_api.h"
#include "runtime/log.h"
#include "runtime/memkind.h"

namespace weft::mpi {

// --------------------------------------------------------------------- checks and the call

int check_coll_comm(const char* fn, MPI_Comm comm, Comm** c) {
  *c = lookup_comm(comm);
  if (!*c) return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  return MPI_SUCCESS;
}

int check_coll_request(const char* fn, MPI_Comm comm, CollMode mode, MPI_Request* request) {
  if (mode != CollMode::blocking && !request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  return MPI_SUCCESS;
}

int check_root(const char* fn, MPI_Comm comm, const Comm& c, int root) {
  if (root < 0 || root >= c.size)
    return raise(comm, MPI_ERR_ROOT, fn, "invalid root %d (argument 'root'; %s has %d ranks)", root, c.label().c_str(), c.size);
  return MPI_SUCCESS;
}

int check_count(const char* fn, MPI_Comm comm, int count, const char* arg) {
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %d (argument '%s')", count, arg);
  return MPI_SUCCESS;
}

int CollCall::plan(const coll::CollArgs& args, const CollPlanKey* key) {
  Status s = call_.plan(args, key);
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm_, s, fn_);
}

int CollCall::execute(MPI_Request* request) {
  if (mode_ == CollMode::blocking) {
    Status s = call_.run();
    return s == Status::ok ? MPI_SUCCESS : raise_status(comm_, s, fn_);
  }
  if (Status s = call_.error(); s != Status::ok) return raise_status(comm_, s, fn_);
  Request* r = g_state->requests.alloc(RequestKind::coll);
  r->owner = comm_;
  if (mode_ == CollMode::persistent) {
    r->persistent = true;
    r->complete = true;  // inactive until started
    const Comm* cp = c_;
    r->start = [fn = fn_, comm = comm_, cp, schedule = call_.schedule()](Request& q) {
      Status s = g_state->coll_calls.start(coll_context(*cp), schedule, &q);
      if (s != Status::ok) (void)raise_status(comm, s, fn);
      return s == Status::ok ? Status::ok : Status::internal;
    };
  } else if (Status s = call_.start(r); s != Status::ok) {
    g_state->requests.release(r);
    return raise_status(comm_, s, fn_);
  }
  *request = request_handle(r);
  return MPI_SUCCESS;
}

// ------------------------------------------------------------------------- the collectives

namespace {

int barrier_call(const char* fn, CollMode mode, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc != MPI_SUCCESS) return rc;
  CollCall call(fn, comm, c, mode);
  const CollPlanKey key{int(coll::Collective::barrier)};
  if (call.reused(key, request, &rc)) return rc;
  return call.run(coll::CollArgs{coll::Collective::barrier}, request, &key);
}

int bcast_call(const char* fn, CollMode mode, void* buffer, int count, MPI_Datatype dt, int root,
               MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  const Datatype* d;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc == MPI_SUCCESS) rc = check_count(fn, comm, count, "count");
  if (rc == MPI_SUCCESS) rc = check_datatype(comm, fn, dt, &d, "datatype");
  if (rc == MPI_SUCCESS) rc = check_root(fn, comm, *c, root);
  if (rc != MPI_SUCCESS) return rc;
  if (!buffer && count && d->predefined) return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d", count);
  CollCall call(fn, comm, c, mode);
  const CollPlanKey key{int(coll::Collective::bcast), buffer, buffer, count, count, d, d, MPI_OP_NULL, root};
  if (call.reused(key, request, &rc)) return rc;
  ptrdiff_t offset = 0;
  if (c->size > 1 && count > 0 && packed_size(d, size_t(count)) &&
      contiguous_span(d, size_t(count), &offset)) {
    char* at = static_cast<char*>(buffer) + offset;
    const size_t bytes = packed_size(d, size_t(count));
    if (call.device({at}, nullptr, bytes)) {
      coll::CollArgs a{coll::Collective::bcast};
      a.recv = at;
      a.bytes = bytes;
      a.root = root;
      a.blocking = mode == CollMode::blocking;
      return call.run(a, request, &key);
    }
  }
  std::vector<coll::Block> blocks;
  const std::vector<Piece> piece{{buffer, size_t(count), d}};
  char* base = c->rank == root ? call.input(piece, &blocks) : call.output(piece, &blocks);
  coll::CollArgs a{coll::Collective::bcast};
  a.recv = base + blocks[0].offset;
  a.bytes = blocks[0].bytes;
  a.root = root;
  if (c->size == 1 || a.bytes == 0) return call.run_nothing(request, &key);
  return call.run(a, request, &key);
}

// What the reducing collectives share: the reduction for (op, datatype) over `count` elements,
// with a user function's arguments kept alive as long as the schedule.
struct ReductionSetup {
  coll::Reduction red;
  ReductionLayout lay;
  size_t per_element = 0;  // elements the reduction loop sees per datatype element
};

int setup_reduction(const char* fn, MPI_Comm comm, CollCall& call, size_t count, MPI_Datatype dt,
                    MPI_Op op, ReductionSetup* out) {
  UserOpCall user;
  int rc = make_reduction(fn, comm, op, dt, count, &user, &out->red, &out->lay);
  if (rc != MPI_SUCCESS) return rc;
  if (out->red.user) {
    auto lasting = std::make_shared<UserOpCall>(user);
    out->red.user_ctx = lasting.get();
    call.keep(lasting);
  }
  out->per_element = count ? out->lay.reduce_count / count : 0;
  return MPI_SUCCESS;
}

// The arguments of reducing r's elements from `in` into `out` (both contiguous).
coll::CollArgs reduction_args(coll::Collective kind, const void* in, void* out, const ReductionSetup& r) {
  coll::CollArgs a{kind};
  a.send = in;
  a.recv = out;
  a.count = r.lay.reduce_count;
  a.bytes = a.count * r.red.elem_size;
  a.red = r.red;
  return a;
}

int check_buffers(const char* fn, MPI_Comm comm, const ReductionSetup& r, size_t count,
                  const void* send, const void* recv, bool need_recv) {
  if (count > 0 && r.lay.type->predefined && (!send || (need_recv && !recv)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %zu", count);
  return MPI_SUCCESS;
}

// What Reduce, Allreduce, Scan and Exscan do first, from their key (buffers, count, datatype
// and op; an identical earlier call was valid: its datatype object and built-in op are the
// same): the reuse of such a call, the reduction of (op, datatype), the buffer check (send: the
// input's buffer; recv needed where the result lands) and a zero count. True when that ended the
// call, *rc its result.
bool reduction_done(CollCall& call, const CollPlanKey& key, MPI_Datatype dt, const void* send, bool need_recv,
                    MPI_Request* request, ReductionSetup* r, int* rc) {
  const char* fn = call.fn();
  const MPI_Comm comm = call.handle();
  const size_t count = size_t(key.send_count);
  if (count > 0 && call.reused(key, request, rc)) return true;
  if ((*rc = setup_reduction(fn, comm, call, count, dt, key.op, r)) == MPI_SUCCESS)
    *rc = check_buffers(fn, comm, *r, count, send, key.recv, need_recv);
  if (*rc != MPI_SUCCESS) return true;
  if (count == 0) *rc = call.run_nothing(request);
  return count == 0;
}

int reduce_call(const char* fn, CollMode mode, const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc == MPI_SUCCESS) rc = check_count(fn, comm, count, "count");
  if (rc == MPI_SUCCESS) rc = check_root(fn, comm, *c, root);
  if (rc != MPI_SUCCESS) return rc;
  const bool is_root = c->rank == root, in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !is_root) return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only valid at the root");
  CollCall call(fn, comm, c, mode);
  const Datatype* d = lookup_datatype(dt);
  const CollPlanKey key{int(coll::Collective::reduce), sendbuf, recvbuf, count, count, d, d, op, root};
  ReductionSetup r;
  if (reduction_done(call, key, dt, in_place ? recvbuf : sendbuf, is_root, request, &r, &rc)) return rc;
  const bool cacheable = !r.red.user;
  ptrdiff_t offset = 0;
  if (c->size > 1 && !r.red.user && r.lay.type->predefined && contiguous_span(r.lay.type, size_t(count), &offset)) {
    const char* gin = static_cast<const char*>(in_place ? recvbuf : sendbuf) + offset;
    char* gout = is_root ? static_cast<char*>(recvbuf) + offset : nullptr;
    const size_t bytes = r.lay.reduce_count * r.red.elem_size;
    if (is_root ? call.device({gin, gout}, &r.red, bytes) : call.device({gin}, &r.red, bytes)) {
      coll::CollArgs a = reduction_args(coll::Collective::reduce, gin, is_root ? gout : const_cast<char*>(gin), r);
      a.root = root;
      a.blocking = mode == CollMode::blocking;
      return call.run(a, request, &key);
    }
  }
  std::vector<coll::Block> in_blocks, out_blocks;
  const Piece result{recvbuf, size_t(count), r.lay.type};
  const char* in;
  char* out = nullptr;
  if (in_place) {
    out = call.output({result}, &out_blocks, 0) + out_blocks[0].offset;
    in = out;
  } else {
    in = call.input({Piece{sendbuf, size_t(count), r.lay.type}}, &in_blocks) + in_blocks[0].offset;
    if (is_root) out = call.output({result}, &out_blocks) + out_blocks[0].offset;
  }
  coll::CollArgs a = reduction_args(coll::Collective::reduce, in, is_root ? out : const_cast<char*>(in), r);
  a.root = root;
  return call.run(a, request, cacheable ? &key : nullptr);
}

// Allreduce, Scan, Exscan: `count` elements in, `count` elements out at every rank.
int vector_reduction_call(const char* fn, CollMode mode, coll::Collective kind, const void* sendbuf,
                          void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          MPI_Request* request) {
  Comm* c;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc == MPI_SUCCESS) rc = check_count(fn, comm, count, "count");
  if (rc != MPI_SUCCESS) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  CollCall call(fn, comm, c, mode);
  const Datatype* d = lookup_datatype(dt);
  const CollPlanKey key{int(kind), sendbuf, recvbuf, count, count, d, d, op, 0};
  ReductionSetup r;
  if (reduction_done(call, key, dt, in_place ? recvbuf : sendbuf, true, request, &r, &rc)) return rc;
  const bool cacheable = !r.red.user;
  ptrdiff_t offset = 0;
  if (kind == coll::Collective::allreduce && c->size > 1 && !r.red.user && r.lay.type->predefined &&
      contiguous_span(r.lay.type, size_t(count), &offset)) {
    const char* gin = static_cast<const char*>(in_place ? recvbuf : sendbuf) + offset;
    char* gout = static_cast<char*>(recvbuf) + offset;
    if (call.device({gin, gout}, &r.red, r.lay.reduce_count * r.red.elem_size)) {
      coll::CollArgs a = reduction_args(kind, gin, gout, r);
      a.blocking = mode == CollMode::blocking;
      return call.run(a, request, cacheable ? &key : nullptr);
    }
  }
  std::vector<coll::Block> in_blocks, out_blocks;
  const Piece result{recvbuf, size_t(count), r.lay.type};
  char* out = call.output({result}, &out_blocks, in_place ? 0 : -1) + out_blocks[0].offset;
  const char* in = in_place ? out : call.input({Piece{sendbuf, size_t(count), r.lay.type}}, &in_blocks) + in_blocks[0].offset;
  const coll::CollArgs a = reduction_args(kind, in, out, r);
  return call.run(a, request, cacheable ? &key : nullptr);
}

// Reduce_scatter (recvcounts) and Reduce_scatter_block (`block`: recvcount for every rank).
int reduce_scatter_call(const char* fn, CollMode mode, bool block, const void* sendbuf, void* recvbuf,
                        const int* recvcounts, int recvcount, MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc != MPI_SUCCESS) return rc;
  const int p = c->size;
  if (!block && !recvcounts) return raise(comm, MPI_ERR_ARG, fn, "recvcounts is NULL");
  if (block && recvcount < 0) return check_count(fn, comm, recvcount, "recvcount");
  std::vector<size_t> counts(static_cast<size_t>(p));
  size_t total = 0;
  for (int q = 0; q < p; ++q) {
    const int n = block ? recvcount : recvcounts[q];
    if (n < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %d for rank %d (argument 'recvcounts')", n, q);
    counts[size_t(q)] = size_t(n);
    total += size_t(n);
  }
  const bool in_place = sendbuf == MPI_IN_PLACE;
  CollCall call(fn, comm, c, mode);
  ReductionSetup r;
  if ((rc = setup_reduction(fn, comm, call, total, dt, op, &r)) != MPI_SUCCESS) return rc;
  const size_t mine = counts[size_t(c->rank)];
  if (r.lay.type->predefined && ((total && !(in_place ? recvbuf : sendbuf)) || (mine && !recvbuf)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer");
  if (total == 0) return call.run_nothing(request);
  ptrdiff_t in_offset = 0, out_offset = 0;
  if (p > 1 && !r.red.user && r.lay.type->predefined &&
      contiguous_span(r.lay.type, total, &in_offset) && contiguous_span(r.lay.type, mine, &out_offset)) {
    const char* gin = static_cast<const char*>(in_place ? recvbuf : sendbuf) + in_offset;
    // A rank with no share may pass any receive buffer (NULL too): it decides on its input alone,
    // so that every rank decides alike.
    char* gout = mine ? static_cast<char*>(recvbuf) + out_offset : const_cast<char*>(gin);
    const size_t unit = r.per_element * r.red.elem_size;  // bytes of one dt
    if (mine ? call.device({gin, gout}, &r.red, total * unit) : call.device({gin}, &r.red, total * unit)) {
      coll::CollArgs a = reduction_args(coll::Collective::reduce_scatter, gin, gout, r);
      a.uniform = block;
      a.blocking = mode == CollMode::blocking;
      for (size_t& n : counts) n *= r.per_element;
      a.counts = std::move(counts);
      return call.run(a, request);
    }
  }
  std::vector<coll::Block> in_blocks, out_blocks;
  const char* in = call.input({Piece{in_place ? recvbuf : sendbuf, total, r.lay.type}}, &in_blocks) + in_blocks[0].offset;
  char* out = call.output({Piece{recvbuf, mine, r.lay.type}}, &out_blocks) + out_blocks[0].offset;
  coll::CollArgs a = reduction_args(coll::Collective::reduce_scatter, in, out, r);
  a.uniform = block;
  for (size_t& n : counts) n *= r.per_element;
  a.counts = std::move(counts);
  return call.run(a, request);
}

}  // namespace

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;
using weft::coll::Collective;

#define WEFT_REDUCTION_PARAMS \
  (const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
#define WEFT_REDUCTION_ARGS(kind) (kind, sendbuf, recvbuf, count, dt, op, comm)

WEFT_COLL_FORMS(Barrier, Ibarrier, (MPI_Comm comm), barrier_call, (comm))
WEFT_COLL_FORMS(Bcast, Ibcast, (void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm), bcast_call,
                (buffer, count, dt, root, comm))
WEFT_COLL_FORMS(Reduce, Ireduce,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm),
                reduce_call, (sendbuf, recvbuf, count, dt, op, root, comm))
WEFT_COLL_FORMS(Allreduce, Iallreduce, WEFT_REDUCTION_PARAMS, vector_reduction_call,
                WEFT_REDUCTION_ARGS(Collective::allreduce))
WEFT_COLL_FORMS(Scan, Iscan, WEFT_REDUCTION_PARAMS, vector_reduction_call, WEFT_REDUCTION_ARGS(Collective::scan))
WEFT_COLL_FORMS(Exscan, Iexscan, WEFT_REDUCTION_PARAMS, vector_reduction_call,
                WEFT_REDUCTION_ARGS(Collective::exscan))
WEFT_COLL_FORMS(Reduce_scatter, Ireduce_scatter,
                (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
                reduce_scatter_call, (false, sendbuf, recvbuf, recvcounts, 0, dt, op, comm))
WEFT_COLL_FORMS(Reduce_scatter_block, Ireduce_scatter_block,
                (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
                reduce_scatter_call, (true, sendbuf, recvbuf, nullptr, recvcount, dt, op, comm))

#undef WEFT_REDUCTION_PARAMS
#undef WEFT_REDUCTION_ARGS
