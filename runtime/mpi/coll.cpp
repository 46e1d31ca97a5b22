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

}  // namespace
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

}  // extern "C"

WEFT_PMPI_ALIAS(Barrier)
WEFT_PMPI_ALIAS(Bcast)
WEFT_PMPI_ALIAS(Reduce)
WEFT_PMPI_ALIAS(Allreduce)
