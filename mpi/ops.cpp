// User-defined reduction operations and the lookup of every op for the collectives.
#include <climits>

#include "state.h"

namespace weft::mpi {

const UserOp* lookup_user_op(MPI_Op h) {
  return lookup_direct(&State::ops, h, handle::op, 0);
}

bool lookup_builtin_op(MPI_Op op, ReduceOp* out) {
  uint32_t v = uint32_t(op);
  if ((v & 0xffffff00u) != 0x58000000u) return false;
  uint32_t idx = v & 0xff;
  if (idx < 1 || idx > uint32_t(ReduceOp::no_op) + 1) return false;
  *out = ReduceOp(idx - 1);
  return true;
}

namespace {

// Calls the user's function in chunks its int count can hold.
Status call_user_op(const void* ctx, const void* in, void* inout, size_t count) {
  const auto* call = static_cast<const UserOpCall*>(ctx);
  const size_t extent = size_t(call->type->extent);
  if (call->op.fn_c) {
    MPI_Count n = MPI_Count(count);
    MPI_Datatype dt = call->datatype;
    if (n > 0) call->op.fn_c(const_cast<void*>(in), inout, &n, &dt);
    return Status::ok;
  }
  while (count > 0) {
    int n = count > size_t(INT_MAX) ? INT_MAX : int(count);
    MPI_Datatype dt = call->datatype;
    call->op.fn(const_cast<void*>(in), inout, &n, &dt);
    in = static_cast<const char*>(in) + size_t(n) * extent;
    inout = static_cast<char*>(inout) + size_t(n) * extent;
    count -= size_t(n);
  }
  return Status::ok;
}

// The same on packed elements of a non-contiguous datatype, which the function sees unpacked.
Status call_user_op_packed(const void* ctx, const void* in, void* inout, size_t count) {
  return reduce_unpacked(call_user_op, ctx, static_cast<const UserOpCall*>(ctx)->type, in, inout, count);
}

}  // namespace

int make_reduction(const char* fn, MPI_Comm comm, MPI_Op op, MPI_Datatype dt, size_t count,
                   UserOpCall* call, coll::Reduction* out, ReductionLayout* layout) {
  const Datatype* d = lookup_datatype(dt);
  if (!d) return raise(comm, MPI_ERR_TYPE, fn, "invalid datatype 0x%x (argument 'datatype')", unsigned(dt));
  if (!d->committed) return raise(comm, MPI_ERR_TYPE, fn, "datatype 0x%x is not committed", unsigned(dt));
  ReductionLayout lay = reduction_layout(d, count);
  coll::Reduction red;
  if (const UserOp* u = lookup_user_op(op)) {
    // The user's function sees elements in the datatype's own layout.
    fit_user_reduction(call_user_op, call_user_op_packed, call, u->commute, &red, &lay);
    *call = UserOpCall{*u, dt, d};
  } else {
    ReduceOp rop;
    if (!lookup_builtin_op(op, &rop))
      return raise(comm, MPI_ERR_OP, fn, "invalid operation 0x%x (argument 'op')", unsigned(op));
    switch (fit_reduction(rop, &red, &lay)) {
      case ReductionFit::ok: break;
      case ReductionFit::mixed_type:
        return raise(comm, MPI_ERR_OP, fn, "operation %s needs a datatype made of one basic type", reduce_op_name(rop));
      case ReductionFit::undefined:
        return raise(comm, MPI_ERR_OP, fn, "operation %s is not defined on %s", reduce_op_name(rop),
                     d->name.empty() ? basic_type_name(red.type) : d->name.c_str());
    }
  }
  *out = red;
  if (layout) *layout = lay;
  return MPI_SUCCESS;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

namespace {

int op_create(const char* fn, MPI_User_function* user_fn, MPI_User_function_c* user_fn_c, int commute, MPI_Op* op) {
  WEFT_REQUIRE_INIT(fn);
  if ((!user_fn && !user_fn_c) || !op) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "user_fn or op is NULL");
  auto u = std::make_unique<UserOp>();
  u->fn = user_fn;
  u->fn_c = user_fn_c;
  u->commute = commute != 0;
  *op = handle::make(handle::direct, handle::op, g_state->ops.add(std::move(u)));
  return MPI_SUCCESS;
}

int reduce_local(const char* fn, const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op) {
  WEFT_REQUIRE_INIT(fn);
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %ld", long(count));
  if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
    return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed (argument '%s')",
                 inbuf == MPI_IN_PLACE ? "inbuf" : "inoutbuf");
  if (count > 0 && inbuf == inoutbuf)
    return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, fn, "inbuf and inoutbuf are the same buffer");
  UserOpCall call;
  coll::Reduction red;
  ReductionLayout lay;
  int rc = make_reduction(fn, MPI_COMM_NULL, op, datatype, size_t(count), &call, &red, &lay);
  if (rc != MPI_SUCCESS) return rc;
  if (count > 0 && lay.type->predefined && (!inbuf || !inoutbuf))
    return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, fn, "NULL buffer with count %ld", long(count));
  Status s = reduce_typed(red, lay, inbuf, inoutbuf);
  return s == Status::ok ? MPI_SUCCESS : raise_status(MPI_COMM_NULL, s, fn);
}

}  // namespace

extern "C" {

int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  WEFT_ENTRY;
  return op_create("MPI_Op_create", user_fn, nullptr, commute, op);
}

int PMPI_Op_create_c(MPI_User_function_c* user_fn, int commute, MPI_Op* op) {
  WEFT_ENTRY;
  return op_create("MPI_Op_create_c", nullptr, user_fn, commute, op);
}

int PMPI_Op_free(MPI_Op* op) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Op_free");
  if (!op || !lookup_user_op(*op))
    return raise(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free", "not a user-defined operation (predefined ones cannot be freed)");
  g_state->ops.remove(handle::index_of(*op));
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int* commute) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Op_commutative");
  if (!commute) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Op_commutative", "commute is NULL");
  if (const UserOp* u = lookup_user_op(op)) {
    *commute = u->commute;
    return MPI_SUCCESS;
  }
  if ((uint32_t(op) & 0xffffff00u) == 0x58000000u && (op & 0xff) >= 1 && (op & 0xff) <= 0xe) {
    *commute = 1;  // every predefined operation commutes
    return MPI_SUCCESS;
  }
  return raise(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation 0x%x", unsigned(op));
}

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  WEFT_ENTRY;
  return reduce_local("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op);
}

int PMPI_Reduce_local_c(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op) {
  WEFT_ENTRY;
  return reduce_local("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op);
}

}  // extern "C"

WEFT_PMPI_ALIASES(Op_create, Op_free, Op_commutative, Reduce_local, Op_create_c, Reduce_local_c)
