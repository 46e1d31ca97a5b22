// Host reduction operators: out[i] = op(in[i], out[i]) over elements of a basic type.
#pragma once
#include <cstddef>

#include "datatype.h"
#include "status.h"

namespace weft {

enum class ReduceOp : uint8_t {
  max, min, sum, prod, land, band, lor, bor, lxor, bxor, minloc, maxloc, replace, no_op,
};

const char* reduce_op_name(ReduceOp op);

// True when op is defined on the type (MPI's table: arithmetic on numbers, logical on
// integers and bool, bitwise on integers and bytes, MINLOC/MAXLOC on pair types).
bool reduce_op_supports(ReduceOp op, BasicType type);

// inout[i] = in[i] op inout[i]. Order matters for non-commutative user ops only; predefined
// ops are all commutative. Loops are written so the compiler vectorises them.
Status reduce_local(ReduceOp op, BasicType type, const void* in, void* inout, size_t count);

// What a reduction combines and how: a predefined op on a basic type, or a user function.
// apply() computes inout = in (op) inout; for a non-commutative op, `in` must hold the
// contribution of the lower ranks.
struct Reduction {
  ReduceOp op = ReduceOp::sum;
  BasicType type = BasicType::none;
  size_t elem_size = 0;                 // bytes between consecutive elements
  bool commutative = true;
  Status (*user)(const void* ctx, const void* in, void* inout, size_t count) = nullptr;
  const void* user_ctx = nullptr;

  Status apply(const void* in, void* inout, size_t count) const {
    if (user) return user(user_ctx, in, inout, count);
    return reduce_local(op, type, in, inout, count);
  }
};

}  // namespace weft
