#include "typemap.h"

#include <algorithm>
#include <cstring>

namespace weft {

namespace {

// ---- Building layouts ----------------------------------------------------------------------

using LoopPtr = std::shared_ptr<TypeLoop>;

// One element of t, as an entry (its single entry, or its whole loop as a child).
LoopEntry piece_of(const Datatype* t) {
  if (!t->loop) return LoopEntry{0, 1, 0, t->packed, nullptr};
  const TypeLoop& L = *t->loop;
  if (L.entries.size() == 1) return L.entries[0];
  if (L.entries.empty()) return LoopEntry{0, 1, 0, 0, nullptr};
  return LoopEntry{0, 1, 0, L.size, t->loop};
}

void normalize(LoopEntry& e) {
  if (e.count == 1) e.stride = 0;
  if (!e.child && e.count > 1 && e.stride == ptrdiff_t(e.bytes)) {
    e.bytes *= e.count;
    e.count = 1;
    e.stride = 0;
  }
}

void finish(TypeLoop& L);

// `count` instances of piece p, `stride` bytes apart, shifted by disp.
LoopEntry repeat(const LoopEntry& p, ptrdiff_t disp, size_t count, ptrdiff_t stride) {
  LoopEntry e = p;
  e.disp += disp;
  if (count == 1) return e;
  if (count == 0 || p.count == 0 || p.bytes == 0) {
    e.count = 0;
    return e;
  }
  if (p.count == 1) {
    e.count = count;
    e.stride = stride;
    normalize(e);
    return e;
  }
  if (ptrdiff_t(p.count) * p.stride == stride) {  // continues p's own progression
    e.count = p.count * count;
    normalize(e);
    return e;
  }
  auto L = std::make_shared<TypeLoop>();
  L->entries.push_back(p);
  finish(*L);
  return LoopEntry{disp, count, stride, L->size, L};
}

void add(TypeLoop& L, const LoopEntry& e) {
  if (e.count == 0 || e.bytes == 0) return;
  if (!L.entries.empty()) {
    LoopEntry& last = L.entries.back();
    if (!last.child && !e.child && last.count == 1 && e.count == 1 &&
        e.disp == last.disp + ptrdiff_t(last.bytes)) {
      last.bytes += e.bytes;
      return;
    }
  }
  L.entries.push_back(e);
}

void finish(TypeLoop& L) {
  L.prefix.resize(L.entries.size() + 1);
  size_t off = 0;
  bool any = false;
  ptrdiff_t lo = 0, hi = 0;
  for (size_t i = 0; i < L.entries.size(); ++i) {
    const LoopEntry& e = L.entries[i];
    L.prefix[i] = off;
    off += e.count * e.bytes;
    ptrdiff_t ilo = e.child ? e.child->true_lb : 0, ihi = e.child ? e.child->true_ub : ptrdiff_t(e.bytes);
    ptrdiff_t span = ptrdiff_t(e.count - 1) * e.stride;
    ptrdiff_t elo = e.disp + ilo + std::min<ptrdiff_t>(0, span), ehi = e.disp + ihi + std::max<ptrdiff_t>(0, span);
    if (!any || elo < lo) lo = elo;
    if (!any || ehi > hi) hi = ehi;
    any = true;
  }
  L.prefix.back() = off;
  L.size = off;
  L.true_lb = lo;
  L.true_ub = hi;
}

struct Bounds {
  bool any = false;
  ptrdiff_t lo = 0, hi = 0;
  void add(ptrdiff_t l, ptrdiff_t h) {
    if (!any || l < lo) lo = l;
    if (!any || h > hi) hi = h;
    any = true;
  }
  // blen consecutive elements of t at disp
  void block(ptrdiff_t disp, size_t blen, const Datatype* t) {
    if (blen == 0) return;
    ptrdiff_t span = ptrdiff_t(blen - 1) * t->extent;
    add(disp + t->lb + std::min<ptrdiff_t>(0, span), disp + t->lb + t->extent + std::max<ptrdiff_t>(0, span));
  }
};

// A derived type under construction.
struct Builder {
  Datatype* d = new Datatype;
  TypeLoop loop;
  Bounds bounds;
  bool first = true;

  explicit Builder(Combiner c) {
    d->predefined = false;
    d->committed = false;
    d->contiguous = false;
    d->basic = BasicType::none;
    d->combiner = c;
    d->n_basic = 0;
    d->size = 0;
    d->align = 1;
  }
  void child(const Datatype* t) {
    type_retain(t);
    d->types.push_back(t);
  }
  // k elements of t in the signature
  void sig(const Datatype* t, size_t k) {
    if (k == 0) return;
    d->size += k * t->size;
    d->n_basic += k * t->n_basic;
    d->align = std::max(d->align, t->align);
    if (first) d->elem_basic = t->elem_basic;
    else if (d->elem_basic != t->elem_basic) d->elem_basic = BasicType::none;
    first = false;
    if (!d->signature.empty() && d->signature.back().first == t) d->signature.back().second += k;
    else d->signature.emplace_back(t, k);
  }
  Datatype* done() {
    finish(loop);
    d->packed = loop.size;
    d->true_lb = loop.true_lb;
    d->true_extent = loop.true_ub - loop.true_lb;
    if (bounds.any) {
      d->lb = bounds.lo;
      d->extent = bounds.hi - bounds.lo;
    } else {
      d->lb = 0;
      d->extent = 0;
    }
    set_contiguity(d, loop);
    d->loop = std::make_shared<const TypeLoop>(std::move(loop));
    return d;
  }
  static void set_contiguity(Datatype* d, const TypeLoop& L) {
    d->dense = L.entries.empty() || (L.entries.size() == 1 && !L.entries[0].child && L.entries[0].count == 1);
    if (L.entries.empty()) d->true_lb = 0, d->true_extent = 0;
    d->contiguous = d->dense && (d->packed == 0 || ptrdiff_t(d->packed) == d->extent);
  }
};

// ---- Pack / unpack ---------------------------------------------------------------------------

template <bool U>
inline void copy_bytes(char* data, char*& s, size_t n) {
  if (U) memcpy(data, s, n);
  else memcpy(s, data, n);
  s += n;
}

struct B16 { uint64_t a, b; };

template <bool U, class T>
inline void strided_typed(char* p, ptrdiff_t stride, size_t n, char*& s) {
  char* q = s;
  size_t i = 0;
  constexpr size_t w = sizeof(T);
  for (; i + 4 <= n; i += 4, p += 4 * stride, q += 4 * w) {
    if (U) {
      T a, b, c, e;
      memcpy(&a, q, w); memcpy(&b, q + w, w); memcpy(&c, q + 2 * w, w); memcpy(&e, q + 3 * w, w);
      memcpy(p, &a, w); memcpy(p + stride, &b, w); memcpy(p + 2 * stride, &c, w); memcpy(p + 3 * stride, &e, w);
    } else {
      T a, b, c, e;
      memcpy(&a, p, w); memcpy(&b, p + stride, w); memcpy(&c, p + 2 * stride, w); memcpy(&e, p + 3 * stride, w);
      memcpy(q, &a, w); memcpy(q + w, &b, w); memcpy(q + 2 * w, &c, w); memcpy(q + 3 * w, &e, w);
    }
  }
  for (; i < n; ++i, p += stride, q += w) {
    T a;
    if (U) { memcpy(&a, q, w); memcpy(p, &a, w); }
    else { memcpy(&a, p, w); memcpy(q, &a, w); }
  }
  s = q;
}

// n runs of b bytes, stride apart, starting at p.
template <bool U>
void strided(char* p, ptrdiff_t stride, size_t n, size_t b, char*& s) {
  if (n == 1 || stride == ptrdiff_t(b)) {
    copy_bytes<U>(p, s, n * b);
    return;
  }
  switch (b) {
    case 1: strided_typed<U, uint8_t>(p, stride, n, s); return;
    case 2: strided_typed<U, uint16_t>(p, stride, n, s); return;
    case 4: strided_typed<U, uint32_t>(p, stride, n, s); return;
    case 8: strided_typed<U, uint64_t>(p, stride, n, s); return;
    case 16: strided_typed<U, B16>(p, stride, n, s); return;
    default:
      for (size_t i = 0; i < n; ++i, p += stride) copy_bytes<U>(p, s, b);
  }
}

template <bool U>
void walk_full(const TypeLoop& L, char* base, char*& s);

// n full instances (child loop or leaf runs) at p, stride apart.
template <bool U>
inline void run_full(const TypeLoop* child, size_t bytes, ptrdiff_t stride, char* p, size_t n, char*& s) {
  if (!child) {
    strided<U>(p, stride, n, bytes, s);
    return;
  }
  for (size_t i = 0; i < n; ++i, p += stride) walk_full<U>(*child, p, s);
}

template <bool U>
void walk_full(const TypeLoop& L, char* base, char*& s) {
  for (const LoopEntry& e : L.entries) run_full<U>(e.child.get(), e.bytes, e.stride, base + e.disp, e.count, s);
}

template <bool U>
void walk_range(const TypeLoop& L, char* base, size_t off, size_t len, char*& s);

// Bytes [in, in + len) of one instance at p.
template <bool U>
inline void unit_range(const TypeLoop* child, char* p, size_t in, size_t len, char*& s) {
  if (!child) copy_bytes<U>(p + in, s, len);
  else walk_range<U>(*child, p, in, len, s);
}

// Bytes [off, off + len) of the packed stream of instances (each `bytes`) at p, stride apart.
template <bool U>
void run_range(const TypeLoop* child, size_t bytes, ptrdiff_t stride, char* p, size_t off, size_t len, char*& s) {
  size_t j = off / bytes, in = off % bytes;
  p += ptrdiff_t(j) * stride;
  if (in) {
    size_t take = std::min(bytes - in, len);
    unit_range<U>(child, p, in, take, s);
    len -= take;
    p += stride;
  }
  size_t full = len / bytes;
  if (full) {
    run_full<U>(child, bytes, stride, p, full, s);
    p += ptrdiff_t(full) * stride;
    len -= full * bytes;
  }
  if (len) unit_range<U>(child, p, 0, len, s);
}

template <bool U>
void walk_range(const TypeLoop& L, char* base, size_t off, size_t len, char*& s) {
  if (off == 0 && len == L.size) {
    walk_full<U>(L, base, s);
    return;
  }
  size_t n = L.entries.size();
  size_t i = size_t(std::upper_bound(L.prefix.begin(), L.prefix.begin() + n, off) - L.prefix.begin()) - 1;
  while (len > 0 && i < n) {
    const LoopEntry& e = L.entries[i];
    size_t eoff = off - L.prefix[i], esz = L.prefix[i + 1] - L.prefix[i];
    size_t take = std::min(esz - eoff, len);
    run_range<U>(e.child.get(), e.bytes, e.stride, base + e.disp, eoff, take, s);
    len -= take;
    off = L.prefix[i + 1];
    ++i;
  }
}

template <bool U>
size_t transfer(const Datatype* t, char* data, size_t count, char* stream, size_t offset, size_t len) {
  size_t total = t->packed * count;
  if (offset >= total) return 0;
  len = std::min(len, total - offset);
  if (len == 0) return 0;
  char* s = stream;
  if (t->contiguous || (count == 1 && t->dense)) {
    copy_bytes<U>(data + t->true_lb + offset, s, len);
  } else if (t->dense) {  // one run per element, extent apart
    run_range<U>(nullptr, t->packed, t->extent, data + t->true_lb, offset, len, s);
  } else {
    const TypeLoop& L = *t->loop;
    if (L.entries.size() == 1 && L.entries[0].count == 1 && L.entries[0].child) {
      // one nested loop: skip a level
      run_range<U>(L.entries[0].child.get(), t->packed, t->extent, data + L.entries[0].disp, offset, len, s);
    } else {
      run_range<U>(&L, t->packed, t->extent, data, offset, len, s);
    }
  }
  return size_t(s - stream);
}

// Layout of a two-part predefined type: end of the first part, end of the second.
void pair_parts(const Datatype* t, size_t* first, size_t* end) {
  switch (t->basic) {
    case BasicType::float_int: *first = sizeof(float); *end = 8; break;
    case BasicType::double_int: *first = sizeof(double); *end = 12; break;
    case BasicType::long_int: *first = sizeof(long); *end = 12; break;
    case BasicType::short_int: *first = sizeof(short); *end = 8; break;
    case BasicType::int_int: *first = sizeof(int); *end = 8; break;
    case BasicType::long_double_int: *first = sizeof(long double); *end = sizeof(long double) + 4; break;
    default: *first = t->size / 2; *end = t->size; break;
  }
}

// Converts `rem` units of one measure of t's elements (From: packed bytes or basic elements) into
// the other (To), along t's signature: the runs wholly inside `rem` count whole, and the run it
// ends in gives part(child, what is left).
template <size_t Datatype::*From, size_t Datatype::*To, class Part>
size_t walk_signature(const Datatype* t, size_t rem, Part part) {
  size_t sum = 0;
  for (const auto& [c, k] : t->signature) {
    const size_t run = k * (c->*From);
    if (rem < run) return sum + part(c, rem);
    sum += k * (c->*To);
    rem -= run;
  }
  return sum;
}

// Basic elements fully held in the first rem (< t->packed) packed bytes of one element.
size_t partial_elements(const Datatype* t, size_t rem, bool* exact) {
  if (rem == 0) return 0;
  if (t->signature.empty()) {  // predefined
    if (t->n_basic != 2) {
      *exact = false;
      return 0;
    }
    size_t first, end;
    pair_parts(t, &first, &end);
    if (rem != first && rem < end) *exact = false;
    return (rem >= first ? 1 : 0) + (rem >= end ? 1 : 0);
  }
  return walk_signature<&Datatype::packed, &Datatype::n_basic>(
      t, rem, [exact](const Datatype* c, size_t left) { return count_basic_elements(c, left, exact); });
}

}  // namespace

// ---- Constructors ----------------------------------------------------------------------------

Datatype* type_contiguous(size_t count, const Datatype* old) {
  Builder b(Combiner::contiguous);
  b.child(old);
  add(b.loop, repeat(piece_of(old), 0, count, old->extent));
  b.bounds.block(0, count, old);
  b.sig(old, count);
  return b.done();
}

Datatype* type_hvector(size_t count, size_t blocklen, ptrdiff_t stride, const Datatype* old) {
  Builder b(Combiner::hvector);
  b.child(old);
  LoopEntry block = repeat(piece_of(old), 0, blocklen, old->extent);
  add(b.loop, repeat(block, 0, count, stride));
  if (count > 0 && blocklen > 0) {
    Bounds one;
    one.block(0, blocklen, old);
    ptrdiff_t span = ptrdiff_t(count - 1) * stride;
    b.bounds.add(one.lo + std::min<ptrdiff_t>(0, span), one.hi + std::max<ptrdiff_t>(0, span));
  }
  b.sig(old, count * blocklen);
  return b.done();
}

Datatype* type_hindexed(size_t n, const size_t* blocklens, const ptrdiff_t* disps, const Datatype* old) {
  Builder b(Combiner::hindexed);
  b.child(old);
  LoopEntry p = piece_of(old);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    add(b.loop, repeat(p, disps[i], blocklens[i], old->extent));
    b.bounds.block(disps[i], blocklens[i], old);
    total += blocklens[i];
  }
  b.sig(old, total);
  return b.done();
}

Datatype* type_hindexed_block(size_t n, size_t blocklen, const ptrdiff_t* disps, const Datatype* old) {
  Builder b(Combiner::hindexed_block);
  b.child(old);
  LoopEntry block = repeat(piece_of(old), 0, blocklen, old->extent);
  for (size_t i = 0; i < n; ++i) {
    add(b.loop, repeat(block, disps[i], 1, 0));
    b.bounds.block(disps[i], blocklen, old);
  }
  b.sig(old, n * blocklen);
  return b.done();
}

Datatype* type_struct(size_t n, const size_t* blocklens, const ptrdiff_t* disps, const Datatype* const* types) {
  Builder b(Combiner::struct_);
  for (size_t i = 0; i < n; ++i) {
    const Datatype* t = types[i];
    b.child(t);
    add(b.loop, repeat(piece_of(t), disps[i], blocklens[i], t->extent));
    b.bounds.block(disps[i], blocklens[i], t);
    b.sig(t, blocklens[i]);
  }
  // Pad the extent to the strictest alignment of the members, as C pads a struct (MPICH and
  // Open MPI do the same), so arrays of the struct type match arrays of the C struct.
  if (b.bounds.any && b.d->align > 1) {
    ptrdiff_t a = ptrdiff_t(b.d->align), ext = b.bounds.hi - b.bounds.lo;
    if (ext % a) b.bounds.hi += a - ext % a;
  }
  return b.done();
}

Datatype* type_resized(const Datatype* old, ptrdiff_t lb, ptrdiff_t extent) {
  Builder b(Combiner::resized);
  b.child(old);
  add(b.loop, piece_of(old));
  b.bounds.add(lb, lb + extent);
  b.sig(old, 1);
  b.d->align = old->align;
  return b.done();
}

Datatype* type_subarray(size_t ndims, const size_t* sizes, const size_t* subsizes, const size_t* starts,
                        bool fortran_order, const Datatype* old) {
  Builder b(Combiner::subarray);
  b.child(old);
  LoopEntry p = piece_of(old);
  ptrdiff_t stride = old->extent, disp = 0;
  size_t elems = 1, total = 1;
  for (size_t k = 0; k < ndims; ++k) {
    size_t d = fortran_order ? k : ndims - 1 - k;  // fastest-varying first
    p = repeat(p, 0, subsizes[d], stride);
    disp += ptrdiff_t(starts[d]) * stride;
    stride *= ptrdiff_t(sizes[d]);
    elems *= subsizes[d];
    total *= sizes[d];
  }
  add(b.loop, repeat(p, disp, 1, 0));
  b.bounds.add(0, ptrdiff_t(total) * old->extent);
  b.sig(old, elems);
  return b.done();
}

Datatype* type_dup(const Datatype* old) {
  Builder b(Combiner::dup);
  b.child(old);
  add(b.loop, piece_of(old));
  b.bounds.add(old->lb, old->lb + old->extent);
  b.sig(old, 1);
  Datatype* d = b.done();
  d->align = old->align;
  d->basic = old->basic;  // a duplicate of a predefined type reduces like it
  return d;
}

void type_retain(const Datatype* t) {
  if (t && !t->predefined) ++t->refs;
}

void type_release(const Datatype* t) {
  if (!t || t->predefined) return;
  if (--t->refs > 0) return;
  for (const Datatype* c : t->types) type_release(c);
  delete t;
}

size_t type_pack(const Datatype* t, const void* src, size_t count, void* dst, size_t offset, size_t len) {
  return transfer<false>(t, const_cast<char*>(static_cast<const char*>(src)), count, static_cast<char*>(dst),
                         offset, len);
}

size_t type_unpack(const Datatype* t, const void* src, size_t len, void* dst, size_t count, size_t offset) {
  return transfer<true>(t, static_cast<char*>(dst), count, const_cast<char*>(static_cast<const char*>(src)),
                        offset, len);
}

size_t count_basic_elements(const Datatype* t, size_t bytes, bool* exact) {
  bool ok = true;
  size_t n = 0;
  if (t->packed == 0) ok = bytes == 0;
  else n = bytes / t->packed * t->n_basic + partial_elements(t, bytes % t->packed, &ok);
  if (exact && !ok) *exact = false;
  return n;
}

size_t bytes_of_basic_elements(const Datatype* t, size_t n) {
  if (t->n_basic == 0) return 0;
  size_t bytes = n / t->n_basic * t->packed, rem = n % t->n_basic;
  if (rem == 0) return bytes;
  if (t->signature.empty()) {  // a pair type: rem == 1
    size_t first, end;
    pair_parts(t, &first, &end);
    return bytes + first;
  }
  return bytes + walk_signature<&Datatype::n_basic, &Datatype::packed>(t, rem, bytes_of_basic_elements);
}

}  // namespace weft
