// MPI type constructors: argument conversion to byte units and the envelope record.
#include "runtime/type_constructors.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "runtime/typemap.h"

namespace weft {

namespace {

Datatype* record(Datatype* d, Combiner c, std::vector<int64_t> ints, std::vector<int64_t> aints = {}) {
  d->combiner = c;
  d->ints = std::move(ints);
  d->aints = std::move(aints);
  return d;
}

// `count` first, then each array of n values, in MPI_Type_get_contents order.
template <class... Arrays>
std::vector<int64_t> ints_of(std::initializer_list<int64_t> head, int64_t n, const Arrays*... arrays) {
  std::vector<int64_t> ints(head);
  (ints.insert(ints.end(), arrays, arrays + n), ...);
  return ints;
}

std::vector<ptrdiff_t> in_bytes(int n, const int* displacements, const Datatype* old) {
  std::vector<ptrdiff_t> disp(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) disp[size_t(i)] = ptrdiff_t(displacements[i]) * old->extent;
  return disp;
}

}  // namespace

Datatype* make_contiguous(int64_t count, const Datatype* old) {
  return record(type_contiguous(size_t(count), old), Combiner::contiguous, {count});
}

Datatype* make_vector(int count, int blocklength, int stride, const Datatype* old) {
  Datatype* d = type_hvector(size_t(count), size_t(blocklength), ptrdiff_t(stride) * old->extent, old);
  return record(d, Combiner::vector, {count, blocklength, stride});
}

Datatype* make_hvector(int count, int blocklength, ptrdiff_t stride, const Datatype* old) {
  Datatype* d = type_hvector(size_t(count), size_t(blocklength), stride, old);
  return record(d, Combiner::hvector, {count, blocklength}, {stride});
}

Datatype* make_indexed(int count, const int* blocklengths, const int* displacements, const Datatype* old) {
  std::vector<size_t> b(blocklengths, blocklengths + count);
  Datatype* d = type_hindexed(size_t(count), b.data(), in_bytes(count, displacements, old).data(), old);
  return record(d, Combiner::indexed, ints_of({count}, count, blocklengths, displacements));
}

template <class Length>
Datatype* hindexed(int64_t count, const Length* blocklengths, const ptrdiff_t* displacements, const Datatype* old) {
  std::vector<size_t> b(blocklengths, blocklengths + count);
  Datatype* d = type_hindexed(size_t(count), b.data(), displacements, old);
  return record(d, Combiner::hindexed, ints_of({count}, count, blocklengths),
                std::vector<int64_t>(displacements, displacements + count));
}

Datatype* make_hindexed(int count, const int* blocklengths, const ptrdiff_t* displacements,
                        const Datatype* old) {
  return hindexed(count, blocklengths, displacements, old);
}

Datatype* make_hindexed(int64_t count, const int64_t* blocklengths, const ptrdiff_t* displacements,
                        const Datatype* old) {
  return hindexed(count, blocklengths, displacements, old);
}

Datatype* make_indexed_block(int count, int blocklength, const int* displacements, const Datatype* old) {
  Datatype* d = type_hindexed_block(size_t(count), size_t(blocklength),
                                    in_bytes(count, displacements, old).data(), old);
  return record(d, Combiner::indexed_block, ints_of({count, blocklength}, count, displacements));
}

Datatype* make_hindexed_block(int count, int blocklength, const ptrdiff_t* displacements,
                              const Datatype* old) {
  Datatype* d = type_hindexed_block(size_t(count), size_t(blocklength), displacements, old);
  return record(d, Combiner::hindexed_block, {count, blocklength},
                std::vector<int64_t>(displacements, displacements + count));
}

Datatype* make_struct(int count, const int* blocklengths, const ptrdiff_t* displacements,
                      const Datatype* const* types) {
  std::vector<size_t> b(blocklengths, blocklengths + count);
  Datatype* d = type_struct(size_t(count), b.data(), displacements, types);
  return record(d, Combiner::struct_, ints_of({count}, count, blocklengths),
                std::vector<int64_t>(displacements, displacements + count));
}

Datatype* make_resized(const Datatype* old, ptrdiff_t lb, ptrdiff_t extent) {
  return record(type_resized(old, lb, extent), Combiner::resized, {}, {lb, extent});
}

Datatype* make_struct_marked(int count, const int* blocklengths, const ptrdiff_t* displacements,
                             const Datatype* const* types, const ptrdiff_t* lb, const ptrdiff_t* ub) {
  Datatype* inner = make_struct(count, blocklengths, displacements, types);
  const ptrdiff_t low = lb ? *lb : inner->lb, high = ub ? *ub : inner->lb + inner->extent;
  Datatype* d = make_resized(inner, low, high - low);
  type_release(inner);  // d holds its own reference
  return d;
}

Datatype* make_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts,
                        int order_value, bool fortran_order, const Datatype* old) {
  std::vector<size_t> sz(sizes, sizes + ndims), sub(subsizes, subsizes + ndims), st(starts, starts + ndims);
  Datatype* d = type_subarray(size_t(ndims), sz.data(), sub.data(), st.data(), fortran_order, old);
  std::vector<int64_t> ints = ints_of({ndims}, ndims, sizes, subsizes, starts);
  ints.push_back(order_value);
  return record(d, Combiner::subarray, std::move(ints));
}

Datatype* make_dup(const Datatype* old) {
  Datatype* d = type_dup(old);
  d->committed = old->committed;
  return record(d, Combiner::dup, {});
}

void init_predefined(Datatype& d, const char* name, BasicType basic, size_t size, size_t part) {
  const bool none = basic == BasicType::none;
  const size_t n_basic = none ? size / part : basic_type_is_pair(basic) ? 2 : 1;
  const size_t align = none ? std::min<size_t>(part, 16) : basic_type_align(basic);
  // Size counts data bytes only; the extent of a (value, index) pair includes its padding.
  const size_t extent = basic == BasicType::none ? size : std::max(size, basic_type_size(basic));
  d.name = name;
  d.size = size;
  d.extent = ptrdiff_t(extent);
  d.lb = 0;
  d.contiguous = true;  // travels as count * extent bytes, padding included
  d.predefined = true;
  d.committed = true;
  d.basic = d.elem_basic = basic;
  d.packed = extent;
  d.true_lb = 0;
  d.true_extent = ptrdiff_t(extent);
  d.dense = true;
  d.n_basic = n_basic;
  d.align = align;
}

uint32_t TypeSlots::add(Datatype* d) {
  if (free_.empty()) {
    slots_.push_back(d);
    return uint32_t(slots_.size() - 1);
  }
  const uint32_t slot = free_.back();
  free_.pop_back();
  slots_[slot] = d;
  return slot;
}

void TypeSlots::release(uint32_t slot) {
  Datatype* d = slots_[slot];
  slots_[slot] = nullptr;
  free_.push_back(slot);
  type_release(d);
}

void type_contents(const Datatype& d, int* ints, ptrdiff_t* aints, const Datatype** types) {
  for (size_t i = 0; i < d.ints.size(); ++i) ints[i] = int(d.ints[i]);
  for (size_t i = 0; i < d.aints.size(); ++i) aints[i] = ptrdiff_t(d.aints[i]);
  for (size_t i = 0; i < d.types.size(); ++i) {
    type_retain(d.types[i]);  // a no-op for predefined types
    types[i] = d.types[i];
  }
}

}  // namespace weft
