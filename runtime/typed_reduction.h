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

// A user function (fn, called with ctx) on lay->count elements of lay->type in the type's own
// layout, an extent apart: sets red's function, commutativity and elem_size and
// lay->reduce_count. false, nothing set, for a non-contiguous layout of a non-zero count.
bool fit_user_reduction(Status (*fn)(const void* ctx, const void* in, void* inout, size_t count), const void* ctx,
                        bool commutative, Reduction* red, ReductionLayout* lay);

// inout = in (op) inout over the layout's elements in the user's buffers: in place for a
// contiguous layout, else on packed copies whose result is unpacked into inout.
Status reduce_typed(const Reduction& red, const ReductionLayout& lay, const void* in, void* inout);

}  // namespace weft
