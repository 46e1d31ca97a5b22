// Collective bindings: validate, pick the reduction, call coll/.
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
                    coll::Reduction* red) {
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %d (argument 'count')", count);
  int rc = make_reduction(fn, comm, op, dt, size_t(count), call, red);
  if (rc != MPI_SUCCESS) return rc;
  if (count > 0 && ((!sendbuf) || (need_recv && !recvbuf)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d", count);
  return MPI_SUCCESS;
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
  size_t bytes = size_t(count) * size_t(d->extent);
  if (!buffer && bytes) return raise(comm, MPI_ERR_BUFFER, "MPI_Bcast", "NULL buffer with count %d", count);
  coll::CollContext ctx = coll_context(*c);
  Status s = coll::bcast(ctx, buffer, bytes, root);
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
  rc = check_reduction("MPI_Reduce", comm, count, dt, op, send, recvbuf, is_root, &call, &red);
  if (rc != MPI_SUCCESS) return rc;
  if (count == 0) return MPI_SUCCESS;
  coll::CollContext ctx = coll_context(*c);
  Status s = coll::reduce(ctx, send, recvbuf, size_t(count), red, root);
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
  rc = check_reduction("MPI_Allreduce", comm, count, dt, op, send, recvbuf, true, &call, &red);
  if (rc != MPI_SUCCESS) return rc;
  if (count == 0) return MPI_SUCCESS;
  coll::CollContext ctx = coll_context(*c);
  Status s = coll::allreduce(ctx, send, recvbuf, size_t(count), red);
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, "MPI_Allreduce");
}

}  // extern "C"

WEFT_PMPI_ALIAS(Barrier)
WEFT_PMPI_ALIAS(Bcast)
WEFT_PMPI_ALIAS(Reduce)
WEFT_PMPI_ALIAS(Allreduce)
