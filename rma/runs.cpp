// Flattening a datatype's layout (runtime/typemap.h) into contiguous runs.
#include "runs.h"

#include <algorithm>

#include "runtime/typemap.h"

namespace weft::rma {

namespace {

void add(std::vector<Run>* out, ptrdiff_t disp, size_t bytes) {
  if (bytes == 0) return;
  if (!out->empty() && out->back().disp + ptrdiff_t(out->back().bytes) == disp) out->back().bytes += bytes;
  else out->push_back({disp, bytes});
}

void walk(const TypeLoop& loop, ptrdiff_t origin, std::vector<Run>* out) {
  for (const LoopEntry& e : loop.entries)
    for (size_t i = 0; i < e.count; ++i) {
      const ptrdiff_t at = origin + e.disp + ptrdiff_t(i) * e.stride;
      if (e.child) walk(*e.child, at, out);
      else add(out, at, e.bytes);
    }
}

}  // namespace

std::vector<Run> runs_of(const Datatype* d, size_t count, ptrdiff_t* lo, ptrdiff_t* hi) {
  std::vector<Run> out;
  if (!d->loop) {
    add(&out, 0, d->extent > 0 ? size_t(d->extent) * count : d->size * count);
  } else {
    for (size_t k = 0; k < count; ++k) walk(*d->loop, ptrdiff_t(k) * d->extent, &out);
  }
  *lo = 0;
  *hi = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    *lo = i ? std::min(*lo, out[i].disp) : out[i].disp;
    *hi = i ? std::max(*hi, out[i].disp + ptrdiff_t(out[i].bytes)) : out[i].disp + ptrdiff_t(out[i].bytes);
  }
  return out;
}

}  // namespace weft::rma
