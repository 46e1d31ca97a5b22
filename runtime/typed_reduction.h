// Reductions over the elements of a datatype (runtime/datatype.h) in the user's layout: which
// loop a reduction runs on which bytes, and MPI_Reduce_local's pack, reduce and unpack.
#pragma once
#include <cstddef>
#include <cstdint>

#include "runtime/datatype.h"
#include "runtime/op.h"
#include "runtime/status.h"

namespace weft {

// How reduction buffers of `count` elements of a datatype are laid out for the collectives:
// contiguous ones are reduced in place at buf + offset, others on their packed form.
struct ReductionLayout {
  const Datatype* type = nullptr;
  size_t count = 0;
  bool contiguous = true;
  ptrdiff_t offset = 0;
  size_t reduce_count = 0;  // elements the reduction loop works on
};

// The layout of `count` elements of d (reduce_count left for the reduction to set).
ReductionLayout reduction_layout(const Datatype* d, size_t count);

// Whether a predefined op fits a datatype: a predefined type reduces on its basic type; a
// derived one on its packed form, basic element by basic element, so it must be made of one
// basic type (mixed_type otherwise). undefined: the op is not defined on that basic type.
enum class ReductionFit : uint8_t { ok, mixed_type, undefined };
// Sets red->type and red->elem_size (even when refused: red->type names the type refused) and,
// on ok, red->op and lay->reduce_count, for lay->count elements of lay->type.
ReductionFit fit_reduction(ReduceOp op, Reduction* red, ReductionLayout* lay);

// A user reduction function: inout = in (op) inout over `count` elements, called with ctx.
using UserReduceFn = Status (*)(const void* ctx, const void* in, void* inout, size_t count);

// A user function on lay->count elements of lay->type: sets red's function, commutativity and
// elem_size and lay->reduce_count. A contiguous layout is reduced in the type's own layout, an
// extent apart (fn); a non-contiguous one on its packed form, a packed element apart, through
// packed_fn, which must see its elements in the type's layout again (reduce_unpacked).
void fit_user_reduction(UserReduceFn fn, UserReduceFn packed_fn, const void* ctx, bool commutative,
                        Reduction* red, ReductionLayout* lay);

// fn (called with ctx) on `count` packed elements of t: `in` and `inout` are unpacked into
// scratch in the type's own layout, fn reduces there, and the result is packed into inout.
Status reduce_unpacked(UserReduceFn fn, const void* ctx, const Datatype* t, const void* in, void* inout,
                       size_t count);

// inout = in (op) inout over the layout's elements in the user's buffers: in place for a
// contiguous layout, else on packed copies whose result is unpacked into inout.
Status reduce_typed(const Reduction& red, const ReductionLayout& lay, const void* in, void* inout);

}  // namespace weft
