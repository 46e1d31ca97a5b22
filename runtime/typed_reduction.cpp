#include "runtime/typed_reduction.h"

#include <algorithm>

#include "runtime/staging.h"
#include "runtime/typemap.h"

namespace weft {

ReductionLayout reduction_layout(const Datatype* d, size_t count) {
  ReductionLayout lay;
  lay.type = d;
  lay.count = count;
  lay.contiguous = type_is_contiguous(d, count, &lay.offset);
  return lay;
}

ReductionFit fit_reduction(ReduceOp op, Reduction* red, ReductionLayout* lay) {
  const Datatype* d = lay->type;
  const size_t count = lay->count;
  if (d->predefined) {
    red->type = d->basic;
    red->elem_size = size_t(d->extent);
  } else {
    red->type = d->elem_basic;
    red->elem_size = basic_type_size(d->elem_basic);
    if (red->elem_size == 0 && count > 0) return ReductionFit::mixed_type;
  }
  if (count > 0 && !reduce_op_supports(op, red->type)) return ReductionFit::undefined;
  red->op = op;
  if (d->predefined) lay->reduce_count = count;
  else lay->reduce_count = red->elem_size ? d->packed * count / red->elem_size : 0;
  return ReductionFit::ok;
}

void fit_user_reduction(UserReduceFn fn, UserReduceFn packed_fn, const void* ctx, bool commutative,
                        Reduction* red, ReductionLayout* lay) {
  red->user = lay->contiguous ? fn : packed_fn;
  red->user_ctx = ctx;
  red->commutative = commutative;
  red->elem_size = lay->contiguous ? size_t(lay->type->extent) : lay->type->packed;
  lay->reduce_count = lay->count;
}

Status reduce_unpacked(UserReduceFn fn, const void* ctx, const Datatype* t, const void* in, void* inout,
                       size_t count) {
  if (count == 0) return Status::ok;
  // The bytes `count` elements touch, relative to their buffer (a negative extent runs down).
  const ptrdiff_t last = ptrdiff_t(count - 1) * t->extent;
  const ptrdiff_t low = t->true_lb + std::min<ptrdiff_t>(0, last);
  const ptrdiff_t high = t->true_lb + t->true_extent + std::max<ptrdiff_t>(0, last);
  const size_t span = size_t(high - low), bytes = t->packed * count;
  StagingBuffer a = staging_buffer(span), b = staging_buffer(span);
  char* in_base = a.get() - low;
  char* inout_base = b.get() - low;
  type_unpack(t, in, bytes, in_base, count, 0);
  type_unpack(t, inout, bytes, inout_base, count, 0);
  Status s = fn(ctx, in_base, inout_base, count);
  if (s == Status::ok) type_pack(t, inout_base, count, inout, 0, bytes);
  return s;
}

Status reduce_typed(const Reduction& red, const ReductionLayout& lay, const void* in, void* inout) {
  if (lay.contiguous)
    return red.apply(static_cast<const char*>(in) + lay.offset, static_cast<char*>(inout) + lay.offset,
                     lay.reduce_count);
  const size_t bytes = lay.type->packed * lay.count;
  StagingBuffer a = staging_buffer(bytes), b = staging_buffer(bytes);
  type_pack(lay.type, in, lay.count, a.get(), 0, SIZE_MAX);
  type_pack(lay.type, inout, lay.count, b.get(), 0, SIZE_MAX);
  Status s = red.apply(a.get(), b.get(), lay.reduce_count);
  if (s == Status::ok) type_unpack(lay.type, b.get(), bytes, inout, lay.count, 0);
  return s;
}

}  // namespace weft
