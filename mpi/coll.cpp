// Collective bindings, part 1: argument checks, the MPI side of a call (coll_call.h: errors
// raised, requests made) and the collectives that reduce (Reduce, Allreduce,
// Reduce_scatter(_block), Scan, Exscan) plus Barrier and Bcast, each blocking, non-blocking
// (MPI_I*) and persistent (MPI_*_init) from one planning function.
#include "coll/call_check.h"
#include "coll/inter/inter.h"
#include "coll/settings.h"
#include "runtime/profiler.h"
#include "coll_call.h"


namespace weft::mpi {

// --------------------------------------------------------------------- checks and the call

int check_coll_comm(const char* fn, MPI_Comm comm, Comm** c) {
  *c = lookup_comm(comm);
  if (!*c) return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  return MPI_SUCCESS;
}

int check_coll_call(const char* fn, MPI_Comm comm, CollMode mode, MPI_Request* request, Comm** c) {
  if (int rc = check_coll_comm(fn, comm, c); rc != MPI_SUCCESS) return rc;
  if (mode != CollMode::blocking && !request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  return MPI_SUCCESS;
}

int check_inter(const char* fn, MPI_Comm comm, const Comm& c) {
  if (!c.inter) [[likely]] return MPI_SUCCESS;
  return raise(comm, MPI_ERR_COMM, fn, "%s is an intercommunicator: not defined on intercommunicators",
               c.label().c_str());
}

int coll_root(const Comm& c, int root) {
  if (!c.inter) [[likely]] return root;
  return root == MPI_ROOT ? coll::kRootHere : root == MPI_PROC_NULL ? coll::kRootElsewhere : root;
}

int check_root(const char* fn, MPI_Comm comm, const Comm& c, int root) {
  if (c.inter) {
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c.peer_count())) return MPI_SUCCESS;
    return raise(comm, MPI_ERR_ROOT, fn,
                 "invalid root %d (argument 'root'; MPI_ROOT, MPI_PROC_NULL or a rank of the %d of the remote group)",
                 root, c.peer_count());
  }
  if (root < 0 || root >= c.size)
    return raise(comm, MPI_ERR_ROOT, fn, "invalid root %d (argument 'root'; %s has %d ranks)", root, c.label().c_str(), c.size);
  return MPI_SUCCESS;
}

int check_count(const char* fn, MPI_Comm comm, MPI_Count count, const char* arg) {
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %ld (argument '%s')", long(count), arg);
  if (count > INT32_MAX)
    return raise(comm, MPI_ERR_COUNT, fn, "count %ld (argument '%s') exceeds the largest a collective takes (%d)",
                 long(count), arg, INT32_MAX);
  return MPI_SUCCESS;
}

namespace {

bool rooted(coll::Collective k) {
  using coll::Collective;
  return k == Collective::bcast || k == Collective::reduce || k == Collective::gather || k == Collective::scatter;
}

bool reduces(coll::Collective k) {
  using coll::Collective;
  return k == Collective::reduce || k == Collective::allreduce || k == Collective::scan ||
         k == Collective::exscan || k == Collective::reduce_scatter;
}

// Bytes of one rank's block on a side with the same count for every rank; 0 for the v and w
// forms (their counts are not compared) and for an unused side.
uint64_t block_bytes(const coll::Side& s) {
  if (s.per_rank || s.in_place || !s.type) return 0;
  return uint64_t(s.count) * s.type->packed;
}

std::string collective_text(uint64_t k) { return coll::collective_name(coll::Collective(k)); }

}  // namespace

int CollCall::compare_across_members(const coll::Description& d) {
  const coll::CollContext ctx = coll_context(*c_);
  using coll::Collective;
  const Collective k = d.kind;
  // The same five arguments at every member, whatever its collective (0 where one does not
  // apply), so that members in different collectives still compare alike.
  uint64_t root = rooted(k) ? uint64_t(d.root) : 0, op = 0, counts = 0;
  if (reduces(k)) {
    // A user operation's handle may differ from rank to rank: only predefined ones are compared.
    ReduceOp builtin;
    if (lookup_builtin_op(d.op, &builtin)) op = uint32_t(d.op);
    counts = uint64_t(d.send.count);
    if (k == Collective::reduce_scatter) {  // the whole recvcounts array: FNV-1a of it
      counts = 1469598103934665603ull;
      for (size_t n : d.counts) counts = (counts ^ n) * 1099511628211ull;
    }
  }
  // Bytes of a block, where every rank's is the same size: the root's blocks and each other
  // rank's own; a rank that sends and receives a block checks its two sides against each other.
  const bool root_here = rooted(k) && c_->rank == d.root;
  uint64_t block = 0;
  bool own_mismatch = false;
  switch (k) {
    case Collective::bcast: block = block_bytes(d.recv); break;
    case Collective::gather:
      block = root_here ? block_bytes(d.recv) : block_bytes(d.send);
      own_mismatch = root_here && !d.send.in_place && block_bytes(d.send) != block;
      break;
    case Collective::scatter:
      block = root_here ? block_bytes(d.send) : block_bytes(d.recv);
      own_mismatch = root_here && !d.recv.in_place && block_bytes(d.recv) != block;
      break;
    case Collective::allgather:
    case Collective::alltoall:
      block = block_bytes(d.recv);
      own_mismatch = !d.send.in_place && block_bytes(d.send) != block;
      break;
    default: break;
  }
  if (d.send.per_rank || d.recv.per_rank) {  // the v and w forms: every member sees the form
    block = 0;
    own_mismatch = false;
  }
  const std::vector<coll::SameArgument> args{
      {"collectives", uint64_t(k), Status::invalid_arg, collective_text},
      {"roots", root, Status::invalid_root},
      {"operations (predefined handles)", op, Status::invalid_op},
      {k == Collective::reduce_scatter ? "recvcounts (hashed)" : "counts", counts, Status::invalid_count},
      {"bytes per block (count x datatype size)", block, Status::invalid_count}};
  const Status s = coll::check_same_call(ctx, fn_, args, own_mismatch);
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm_, s, fn_);
}

int CollCall::run(const coll::Description& d, MPI_Request* request) {
  if (int rc = check_same(d)) return rc;
  Status s = call_.plan(d);
  return s == Status::ok ? execute(request) : raise_status(comm_, s, fn_);
}

int CollCall::execute(MPI_Request* request) {
  profiler::ApiScope api(fn_);
  StatusBoard& board = *g_state->board;
  board.enter(*c_, fn_);
  if (mode_ == CollMode::blocking) {
    Status s = call_.run();
    board.leave(*c_, s != Status::ok);
    if (s == Status::timed_out) [[unlikely]] set_error_detail(error_detail() + "; " + board.describe_stall(*c_));
    return s == Status::ok ? MPI_SUCCESS : raise_status(comm_, s, fn_);
  }
  board.leave(*c_);  // a non-blocking or persistent call counts as issued
  if (Status s = call_.error(); s != Status::ok) return raise_status(comm_, s, fn_);
  Request* r = g_state->requests.alloc(RequestKind::coll);
  r->owner = comm_;
  if (mode_ == CollMode::persistent) {
    r->persistent = true;
    r->complete = true;  // inactive until started
    const Comm* cp = c_;
    const uint32_t tags = coll::reserve_tags(*cp, *call_.schedule());  // matched in init order
    r->start = [fn = fn_, comm = comm_, cp, schedule = call_.schedule(), tags](Request& q) {
      Status s = g_state->coll_calls.start(coll_context(*cp), schedule, &q, &tags);
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
  int rc = check_coll_call(fn, comm, mode, request, &c);
  if (rc != MPI_SUCCESS) return rc;
  return CollCall(fn, comm, c, mode).run(coll::Description{coll::Collective::barrier}, request);
}

int bcast_call(const char* fn, CollMode mode, void* buffer, MPI_Count count, MPI_Datatype dt, int root,
               MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  const Datatype* d;
  int rc = check_coll_call(fn, comm, mode, request, &c);
  if (rc == MPI_SUCCESS) rc = check_count(fn, comm, count, "count");
  if (rc == MPI_SUCCESS) rc = check_datatype(comm, fn, dt, &d, "datatype");
  if (rc == MPI_SUCCESS) rc = check_root(fn, comm, *c, root);
  if (rc != MPI_SUCCESS) return rc;
  if (!buffer && count && d->predefined && coll_root(*c, root) != coll::kRootElsewhere)
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %ld", long(count));
  coll::Description desc{coll::Collective::bcast};
  desc.send = desc.recv = coll::Side{.buf = buffer, .count = count, .type = d};
  desc.root = coll_root(*c, root);
  return CollCall(fn, comm, c, mode).run(desc, request);
}

// The reduction of (op, datatype) over `count` elements into desc, with a user function's
// arguments kept alive as long as the schedule.
int setup_reduction(const char* fn, MPI_Comm comm, CollCall& call, size_t count, MPI_Datatype dt,
                    MPI_Op op, coll::Description* desc) {
  UserOpCall user;
  ReductionLayout lay;
  int rc = make_reduction(fn, comm, op, dt, count, &user, &desc->red, &lay);
  if (rc != MPI_SUCCESS) return rc;
  if (desc->red.user) {
    auto lasting = std::make_shared<UserOpCall>(user);
    desc->red.user_ctx = lasting.get();
    call.keep(lasting);
    call.keep(coll::hold_type(user.type));  // the function's datatype, which may be freed first
  }
  desc->reduce_count = lay.reduce_count;
  desc->op = op;
  desc->send.type = desc->recv.type = lay.type;
  return MPI_SUCCESS;
}

// Reduce (kind reduce, at root), Allreduce, Scan, Exscan (root 0): `count` elements in, `count`
// elements out (Reduce: at the root).
int reduction_call(const char* fn, CollMode mode, coll::Collective kind, const void* sendbuf, void* recvbuf,
                   MPI_Count count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  const bool rooted = kind == coll::Collective::reduce;
  int rc = check_coll_call(fn, comm, mode, request, &c);
  if (rc == MPI_SUCCESS && (kind == coll::Collective::scan || kind == coll::Collective::exscan))
    rc = check_inter(fn, comm, *c);
  if (rc == MPI_SUCCESS) rc = check_count(fn, comm, count, "count");
  if (rc == MPI_SUCCESS && rooted) rc = check_root(fn, comm, *c, root);
  if (rc != MPI_SUCCESS) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  // On an intercommunicator, a Reduce's root only receives and the rest of its group does nothing.
  const bool need_recv = !rooted || (c->inter ? root == MPI_ROOT : c->rank == root);
  const bool need_send = !rooted || !c->inter || root >= 0;
  if (in_place && (!need_recv || c->inter))
    return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only valid at the root of an intracommunicator");
  if (sendbuf == recvbuf && sendbuf && count > 0 && need_send && need_recv)
    return raise(comm, MPI_ERR_BUFFER, fn, "sendbuf and recvbuf are the same buffer (MPI_IN_PLACE is the way to say so)");
  CollCall call(fn, comm, c, mode);
  coll::Description desc{kind};
  desc.send.buf = sendbuf;
  desc.send.in_place = in_place;
  desc.recv.buf = recvbuf;
  desc.send.count = desc.recv.count = count;
  desc.op = op;
  desc.root = coll_root(*c, root);
  // An identical earlier call was valid (its datatype object and predefined op are the same):
  // its plan again, without setting the reduction up anew.
  desc.send.type = desc.recv.type = lookup_datatype(dt);
  if (count > 0 && desc.send.type && call.reused(desc, request, &rc)) return rc;
  if ((rc = setup_reduction(fn, comm, call, size_t(count), dt, op, &desc)) != MPI_SUCCESS) return rc;
  if (count > 0 && desc.recv.type->predefined &&
      ((need_send && !(in_place ? recvbuf : sendbuf)) || (need_recv && !recvbuf)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %zu", size_t(count));
  return call.run(desc, request);
}

// Reduce_scatter (recvcounts) and Reduce_scatter_block (`block`: recvcount for every rank).
int reduce_scatter_call(const char* fn, CollMode mode, bool block, const void* sendbuf, void* recvbuf,
                        Counts recvcounts, MPI_Count recvcount, MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = check_coll_call(fn, comm, mode, request, &c);
  if (rc != MPI_SUCCESS) return rc;
  const int p = c->size;
  if (!block && !recvcounts) return raise(comm, MPI_ERR_ARG, fn, "recvcounts is NULL");
  if (block && (rc = check_count(fn, comm, recvcount, "recvcount")) != MPI_SUCCESS) return rc;
  coll::Description desc{coll::Collective::reduce_scatter};
  size_t total = 0;
  for (int q = 0; q < p; ++q) {
    const MPI_Count n = block ? recvcount : recvcounts[size_t(q)];
    if (n < 0)
      return raise(comm, MPI_ERR_COUNT, fn, "negative count %ld for rank %d (argument 'recvcounts')", long(n), q);
    desc.counts.push_back(size_t(n));
    total += size_t(n);
  }
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && c->inter)
    return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid on an intercommunicator");
  CollCall call(fn, comm, c, mode);
  if ((rc = setup_reduction(fn, comm, call, total, dt, op, &desc)) != MPI_SUCCESS) return rc;
  const size_t mine = desc.counts[size_t(c->rank)];
  if (desc.recv.type->predefined && ((total && !(in_place ? recvbuf : sendbuf)) || (mine && !recvbuf)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer");
  // recvbuf is sendbuf, or this rank's own share of it, without MPI_IN_PLACE: every rank that
  // aliases so finds it, so none waits for the others.
  if (!in_place && sendbuf && mine) {
    size_t before = 0;
    for (int q = 0; q < c->rank; ++q) before += desc.counts[size_t(q)];
    const void* own = static_cast<const char*>(sendbuf) + ptrdiff_t(before) * lookup_datatype(dt)->extent;
    if (recvbuf == sendbuf || recvbuf == own)
      return raise(comm, MPI_ERR_BUFFER, fn, "recvbuf is sendbuf or this rank's share of it (MPI_IN_PLACE is the way to say so)");
  }
  desc.send.buf = sendbuf;
  desc.send.in_place = in_place;
  desc.recv.buf = recvbuf;
  desc.recv.per_rank = !block;
  return call.run(desc, request);
}

}  // namespace

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;
using weft::coll::Collective;

// Bcast and the reducing collectives with counts of type Count, in the forms FORMS makes
// (WEFT_COLL_FORMS, or WEFT_COLL_FORMS_C for the large-count forms).
#define WEFT_REDUCTION_PARAMS(Count) \
  (const void* sendbuf, void* recvbuf, Count count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
#define WEFT_REDUCTION_ARGS(kind) (kind, sendbuf, recvbuf, count, dt, op, 0, comm)
#define WEFT_COUNTED_COLLECTIVES(FORMS, Count)                                                                   \
  FORMS(Bcast, Ibcast, (void* buffer, Count count, MPI_Datatype dt, int root, MPI_Comm comm), bcast_call,       \
        (buffer, count, dt, root, comm))                                                                         \
  FORMS(Reduce, Ireduce,                                                                                         \
        (const void* sendbuf, void* recvbuf, Count count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm), \
        reduction_call, (Collective::reduce, sendbuf, recvbuf, count, dt, op, root, comm))                       \
  FORMS(Allreduce, Iallreduce, WEFT_REDUCTION_PARAMS(Count), reduction_call,                                    \
        WEFT_REDUCTION_ARGS(Collective::allreduce))                                                              \
  FORMS(Scan, Iscan, WEFT_REDUCTION_PARAMS(Count), reduction_call, WEFT_REDUCTION_ARGS(Collective::scan))       \
  FORMS(Exscan, Iexscan, WEFT_REDUCTION_PARAMS(Count), reduction_call, WEFT_REDUCTION_ARGS(Collective::exscan))  \
  FORMS(Reduce_scatter, Ireduce_scatter,                                                                         \
        (const void* sendbuf, void* recvbuf, const Count recvcounts[], MPI_Datatype dt, MPI_Op op,               \
         MPI_Comm comm),                                                                                         \
        reduce_scatter_call, (false, sendbuf, recvbuf, recvcounts, 0, dt, op, comm))                             \
  FORMS(Reduce_scatter_block, Ireduce_scatter_block,                                                             \
        (const void* sendbuf, void* recvbuf, Count recvcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),        \
        reduce_scatter_call, (true, sendbuf, recvbuf, nullptr, recvcount, dt, op, comm))

WEFT_COLL_FORMS(Barrier, Ibarrier, (MPI_Comm comm), barrier_call, (comm))
WEFT_COUNTED_COLLECTIVES(WEFT_COLL_FORMS, int)
WEFT_COUNTED_COLLECTIVES(WEFT_COLL_FORMS_C, MPI_Count)

#undef WEFT_COUNTED_COLLECTIVES
#undef WEFT_REDUCTION_PARAMS
#undef WEFT_REDUCTION_ARGS
