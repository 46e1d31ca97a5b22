// The darray constructor as a composition of the generic ones: dimension by dimension, fastest
// first, the blocks this process holds of the type built so far, resized to the dimension's whole
// extent; then the record MPI_Type_get_contents returns.
#include "runtime/type_darray.h"

#include <algorithm>
#include <utility>

#include "runtime/typemap.h"

namespace weft {

namespace {

// `count` elements of one type at a byte displacement.
struct Part {
  size_t count;
  ptrdiff_t disp;
  const Datatype* type;
};

// This process's coordinate in each dimension of the grid (row-major rank order).
std::vector<size_t> grid_coords(size_t rank, const std::vector<DarrayDim>& dims) {
  std::vector<size_t> coords(dims.size());
  size_t procs = 1;
  for (const DarrayDim& d : dims) procs *= d.psize;
  for (size_t i = 0; i < dims.size(); ++i) {
    procs /= dims[i].psize;
    coords[i] = rank / procs;
    rank %= procs;
  }
  return coords;
}

// The elements of one dimension that coordinate `coord` holds, each an `inner` (extent `e`):
// the parts of a struct, and a vector of whole cyclic blocks (*vector, which the caller
// releases) when there are some; *held: the indices held.
std::vector<Part> dimension_parts(const DarrayDim& d, size_t coord, const Datatype* inner, const Datatype** vector,
                                  size_t* held) {
  const ptrdiff_t e = inner->extent;
  *vector = nullptr;
  *held = 0;
  if (d.distribution != Distribution::cyclic) {
    const size_t block = d.distribution == Distribution::none ? d.gsize
                         : d.darg ? d.darg : (d.gsize + d.psize - 1) / d.psize;
    const size_t start = d.distribution == Distribution::none ? 0 : coord * block;
    if (start >= d.gsize) return {};
    *held = std::min(block, d.gsize - start);
    return {{*held, ptrdiff_t(start) * e, inner}};
  }
  // cyclic(k): blocks of k at coord * k, coord * k + psize * k, ...; the last one may be short.
  const size_t k = d.darg ? d.darg : 1, start = coord * k, period = d.psize * k;
  if (start >= d.gsize) return {};
  const size_t blocks = (d.gsize - start + period - 1) / period;
  const size_t last_start = start + (blocks - 1) * period, last = std::min(k, d.gsize - last_start);
  const size_t whole = last == k ? blocks : blocks - 1;
  *held = whole * k + (last < k ? last : 0);
  std::vector<Part> parts;
  if (whole > 0) {
    *vector = type_hvector(whole, k, ptrdiff_t(period) * e, inner);
    parts.push_back({1, ptrdiff_t(start) * e, *vector});
  }
  if (last < k) parts.push_back({last, ptrdiff_t(last_start) * e, inner});
  return parts;
}

}  // namespace

Datatype* make_darray(size_t rank, const std::vector<DarrayDim>& dims, bool fortran_order, const Datatype* old,
                      std::vector<int64_t> ints) {
  const std::vector<size_t> coords = grid_coords(rank, dims);
  const Datatype* inner = old;  // the part held of the dimensions done so far
  type_retain(inner);
  size_t elements = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t i = fortran_order ? k : dims.size() - 1 - k;  // fastest-varying first
    const Datatype* vector;
    size_t held;
    const std::vector<Part> parts = dimension_parts(dims[i], coords[i], inner, &vector, &held);
    std::vector<size_t> counts;
    std::vector<ptrdiff_t> disps;
    std::vector<const Datatype*> types;
    for (const Part& p : parts) {
      counts.push_back(p.count);
      disps.push_back(p.disp);
      types.push_back(p.type);
    }
    Datatype* blocks = type_struct(parts.size(), counts.data(), disps.data(), types.data());
    Datatype* dim = type_resized(blocks, 0, ptrdiff_t(dims[i].gsize) * inner->extent);
    type_release(blocks);  // dim holds its own reference
    type_release(vector);
    type_release(inner);
    inner = dim;
    elements *= held;
  }
  // The layout is the composition's; the signature and the envelope are oldtype's alone, so the
  // intermediate types go.
  Datatype* d = const_cast<Datatype*>(inner);
  for (const Datatype* c : d->types) type_release(c);
  type_retain(old);
  d->types = {old};
  d->signature.clear();
  if (elements > 0) d->signature.emplace_back(old, elements);
  d->combiner = Combiner::darray;
  d->ints = std::move(ints);
  d->aints.clear();
  return d;
}

}  // namespace weft
