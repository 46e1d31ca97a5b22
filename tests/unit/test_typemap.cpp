// The derived-datatype engine (runtime/typemap.h) against a naive reference: each type is
// also built as an explicit list of (offset, bytes) basic elements, packed one by one.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "runtime/datatype.h"
#include "runtime/typemap.h"

using namespace weft;

namespace {

Datatype make_basic(size_t size, BasicType bt) {
  Datatype d;
  d.name = "basic";
  d.size = size;
  d.extent = ptrdiff_t(size);
  d.packed = size;
  d.true_extent = ptrdiff_t(size);
  d.predefined = true;
  d.basic = d.elem_basic = bt;
  d.align = size;
  return d;
}

const Datatype kDouble = make_basic(8, BasicType::f64);
const Datatype kInt = make_basic(4, BasicType::i32);
const Datatype kChar = make_basic(1, BasicType::i8);

// Reference: the explicit typemap.
struct Ref {
  std::vector<std::pair<ptrdiff_t, size_t>> map;  // (offset, bytes) per basic element, typemap order
  ptrdiff_t lb = 0, extent = 0;
};

Ref ref_basic(const Datatype& d) { return Ref{{{0, d.packed}}, 0, d.extent}; }

void ref_bounds(Ref& r, bool any, ptrdiff_t lo, ptrdiff_t hi) {
  r.lb = any ? lo : 0;
  r.extent = any ? hi - lo : 0;
}

// blocks of (disp, blen) over old
Ref ref_blocks(const std::vector<std::pair<ptrdiff_t, size_t>>& blocks, const Ref& old) {
  Ref r;
  bool any = false;
  ptrdiff_t lo = 0, hi = 0;
  for (auto [disp, blen] : blocks) {
    for (size_t k = 0; k < blen; ++k) {
      ptrdiff_t base = disp + ptrdiff_t(k) * old.extent;
      for (auto [o, b] : old.map) r.map.emplace_back(base + o, b);
      ptrdiff_t l = base + old.lb, h = l + old.extent;
      if (!any || l < lo) lo = l;
      if (!any || h > hi) hi = h;
      any = true;
    }
  }
  ref_bounds(r, any, lo, hi);
  return r;
}

Ref ref_vector(size_t count, size_t blen, ptrdiff_t stride, const Ref& old) {
  std::vector<std::pair<ptrdiff_t, size_t>> b;
  for (size_t i = 0; i < count; ++i) b.emplace_back(ptrdiff_t(i) * stride, blen);
  return ref_blocks(b, old);
}

std::vector<char> ref_pack(const Ref& r, const char* src, size_t count) {
  std::vector<char> out;
  for (size_t i = 0; i < count; ++i)
    for (auto [o, b] : r.map) {
      const char* p = src + ptrdiff_t(i) * r.extent + o;
      out.insert(out.end(), p, p + b);
    }
  return out;
}

void ref_unpack(const Ref& r, const char* in, size_t len, char* dst, size_t count) {
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i)
    for (auto [o, b] : r.map) {
      if (pos >= len) return;
      size_t n = std::min(b, len - pos);
      memcpy(dst + ptrdiff_t(i) * r.extent + o, in + pos, n);
      pos += n;
    }
}

// Packs and unpacks count elements, whole and in random byte ranges, against the reference.
void check(const Datatype* t, const Ref& r, size_t count, unsigned seed = 1) {
  ASSERT_EQ(t->lb, r.lb);
  ASSERT_EQ(t->extent, r.extent);
  size_t per = 0;
  ptrdiff_t tlo = 0, thi = 0;
  bool any = false;
  for (auto [o, b] : r.map) {
    per += b;
    if (b == 0) continue;
    if (!any || o < tlo) tlo = o;
    if (!any || o + ptrdiff_t(b) > thi) thi = o + ptrdiff_t(b);
    any = true;
  }
  ASSERT_EQ(t->packed, per);
  if (any) {
    ASSERT_EQ(t->true_lb, tlo);
    ASSERT_EQ(t->true_extent, thi - tlo);
  }
  // Buffer covering every touched byte of count elements.
  ptrdiff_t lo = 0, hi = 0;
  for (size_t i = 0; i < count; ++i)
    for (auto [o, b] : r.map) {
      lo = std::min(lo, ptrdiff_t(i) * r.extent + o);
      hi = std::max(hi, ptrdiff_t(i) * r.extent + o + ptrdiff_t(b));
    }
  std::vector<char> buf(size_t(hi - lo) + 16);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = char(i * 7 + 3);
  char* origin = buf.data() - lo;
  std::vector<char> want = ref_pack(r, origin, count);
  ASSERT_EQ(want.size(), type_packed_size(t, count));
  std::vector<char> got(want.size() + 8, 0);
  ASSERT_EQ(type_pack(t, origin, count, got.data(), 0, SIZE_MAX), want.size());
  ASSERT_EQ(0, memcmp(got.data(), want.data(), want.size()));

  std::mt19937 rng(seed);
  for (int iter = 0; iter < 40 && !want.empty(); ++iter) {
    size_t off = rng() % want.size(), len = rng() % (want.size() - off + 1);
    std::vector<char> part(len + 1, 0);
    ASSERT_EQ(type_pack(t, origin, count, part.data(), off, len), len);
    ASSERT_EQ(0, memcmp(part.data(), want.data() + off, len)) << "off " << off << " len " << len;
  }
  // Unpack everything, then a prefix (partial receive), in pieces.
  std::vector<char> a(buf.size(), 0), b(buf.size(), 0);
  ASSERT_EQ(type_unpack(t, want.data(), want.size(), a.data() - lo, count, 0), want.size());
  ref_unpack(r, want.data(), want.size(), b.data() - lo, count);
  ASSERT_EQ(a, b);
  if (!want.empty()) {
    size_t recv = rng() % want.size();
    std::fill(a.begin(), a.end(), 0);
    std::fill(b.begin(), b.end(), 0);
    size_t cut = recv / 2;
    ASSERT_EQ(type_unpack(t, want.data(), cut, a.data() - lo, count, 0), cut);
    ASSERT_EQ(type_unpack(t, want.data() + cut, recv - cut, a.data() - lo, count, cut), recv - cut);
    ref_unpack(r, want.data(), recv, b.data() - lo, count);
    ASSERT_EQ(a, b);
  }
}

struct Owned {
  Datatype* t;
  explicit Owned(Datatype* d) : t(d) {}
  ~Owned() { type_release(t); }
  const Datatype* operator->() const { return t; }
  operator const Datatype*() const { return t; }
};

}  // namespace

TEST(Typemap, Contiguous) {
  Owned t(type_contiguous(5, &kDouble));
  EXPECT_TRUE(t->contiguous);
  EXPECT_EQ(t->size, 40u);
  EXPECT_EQ(t->n_basic, 5u);
  EXPECT_EQ(t->elem_basic, BasicType::f64);
  EXPECT_EQ(t->loop->entries.size(), 1u);
  check(t, ref_vector(1, 5, 0, ref_basic(kDouble)), 3);
}

TEST(Typemap, VectorAndHvector) {
  Owned v(type_hvector(4, 2, 3 * 8, &kDouble));
  EXPECT_FALSE(v->contiguous);
  EXPECT_EQ(v->extent, 3 * 8 * 3 + 16);
  check(v, ref_vector(4, 2, 24, ref_basic(kDouble)), 3);
  Owned neg(type_hvector(3, 1, -16, &kInt));
  EXPECT_EQ(neg->lb, -32);
  check(neg, ref_vector(3, 1, -16, ref_basic(kInt)), 2);
  Owned dense(type_hvector(6, 2, 8, &kInt));  // stride == blocklength: one block
  EXPECT_TRUE(dense->contiguous);
  check(dense, ref_vector(6, 2, 8, ref_basic(kInt)), 4);
}

TEST(Typemap, IndexedAndBlock) {
  size_t bl[] = {2, 0, 3, 1};
  ptrdiff_t d[] = {40, 0, 0, 100};
  Owned t(type_hindexed(4, bl, d, &kInt));
  Ref r = ref_blocks({{40, 2}, {0, 0}, {0, 3}, {100, 1}}, ref_basic(kInt));
  check(t, r, 3);
  ptrdiff_t db[] = {8, 0, 64};
  Owned b(type_hindexed_block(3, 2, db, &kDouble));
  check(b, ref_blocks({{8, 2}, {0, 2}, {64, 2}}, ref_basic(kDouble)), 2);
  // adjacent blocks merge into one run
  ptrdiff_t adj[] = {0, 8, 16};
  Owned m(type_hindexed_block(3, 1, adj, &kDouble));
  EXPECT_TRUE(m->contiguous);
  EXPECT_EQ(m->loop->entries.size(), 1u);
}

TEST(Typemap, StructPadsAndDetectsDense) {
  size_t bl[] = {1, 1};
  ptrdiff_t d[] = {0, 8};
  const Datatype* ty[] = {&kDouble, &kChar};
  Owned s(type_struct(2, bl, d, ty));
  EXPECT_EQ(s->extent, 16);  // padded like struct { double; char; }
  EXPECT_EQ(s->size, 9u);
  EXPECT_TRUE(s->dense);
  EXPECT_FALSE(s->contiguous);
  EXPECT_EQ(s->elem_basic, BasicType::none);
  EXPECT_EQ(s->n_basic, 2u);
  Ref r = ref_blocks({{0, 1}}, ref_basic(kDouble));
  r.map.emplace_back(8, 1);
  r.extent = 16;
  check(s, r, 5);
  const Datatype* ty2[] = {&kInt, &kInt};
  ptrdiff_t d2[] = {0, 4};
  Owned dense(type_struct(2, bl, d2, ty2));
  EXPECT_TRUE(dense->contiguous);
}

TEST(Typemap, ResizedNegativeLb) {
  Owned r(type_resized(&kDouble, -8, 24));
  EXPECT_EQ(r->lb, -8);
  EXPECT_EQ(r->extent, 24);
  EXPECT_EQ(r->true_lb, 0);
  EXPECT_EQ(r->true_extent, 8);
  EXPECT_TRUE(r->dense);
  EXPECT_FALSE(r->contiguous);
  Ref ref = ref_basic(kDouble);
  ref.lb = -8;
  ref.extent = 24;
  check(r, ref, 7);
  Owned c(type_contiguous(3, r));
  EXPECT_EQ(c->lb, -8);
  EXPECT_EQ(c->extent, 72);
  check(c, ref_vector(1, 3, 0, ref), 2);
}

TEST(Typemap, SubarrayBothOrders) {
  size_t sizes[] = {5, 6, 7}, sub[] = {2, 3, 4}, starts[] = {1, 2, 3};
  for (bool fortran : {false, true}) {
    Owned t(type_subarray(3, sizes, sub, starts, fortran, &kInt));
    EXPECT_EQ(t->lb, 0);
    EXPECT_EQ(t->extent, 5 * 6 * 7 * 4);
    EXPECT_EQ(t->size, 2u * 3 * 4 * 4);
    Ref r;
    r.extent = 5 * 6 * 7 * 4;
    // typemap order: the fastest-varying dimension innermost
    for (size_t a = 0; a < 4 * 3 * 2; ++a) {
      size_t lin;
      if (!fortran) {  // a = (i * 3 + j) * 4 + k over sub = {2, 3, 4}
        size_t i = a / 12, j = a / 4 % 3, k = a % 4;
        lin = ((starts[0] + i) * 6 + starts[1] + j) * 7 + starts[2] + k;
      } else {  // a = (k * 3 + j) * 2 + i
        size_t i = a % 2, j = a / 2 % 3, k = a / 6;
        lin = (starts[0] + i) + 5 * ((starts[1] + j) + 6 * (starts[2] + k));
      }
      r.map.emplace_back(ptrdiff_t(lin * 4), 4);
    }
    check(t, r, 2);
  }
}

TEST(Typemap, DeepNesting) {
  // struct { vector of indexed of resized doubles, int } , then hvector of that, then dup
  Owned rz(type_resized(&kDouble, 0, 12));
  size_t bl[] = {2, 1, 3};
  ptrdiff_t d[] = {0, 48, 24};
  Owned ix(type_hindexed(3, bl, d, rz));
  Owned v(type_hvector(3, 2, 200, ix));
  size_t sbl[] = {1, 3};
  ptrdiff_t sd[] = {0, 1000};
  const Datatype* st[] = {v, &kInt};
  Owned s(type_struct(2, sbl, sd, st));
  Owned hv(type_hvector(2, 1, 2000, s));
  Owned dup(type_dup(hv));

  Ref rrz = ref_basic(kDouble);
  rrz.extent = 12;
  Ref rix = ref_blocks({{0, 2}, {48, 1}, {24, 3}}, rrz);
  Ref rv = ref_vector(3, 2, 200, rix);
  Ref rs;
  {
    Ref a = ref_blocks({{0, 1}}, rv), b = ref_blocks({{1000, 3}}, ref_basic(kInt));
    rs.map = a.map;
    rs.map.insert(rs.map.end(), b.map.begin(), b.map.end());
    ptrdiff_t lo = std::min(a.lb, b.lb), hi = std::max(a.lb + a.extent, b.lb + b.extent);
    rs.lb = lo;
    rs.extent = (hi - lo + 7) / 8 * 8;
  }
  check(s, rs, 2);
  Ref rhv = ref_vector(2, 1, 2000, rs);
  check(hv, rhv, 2);
  check(dup, rhv, 3, 7);
  EXPECT_EQ(dup->n_basic, hv->n_basic);
  EXPECT_EQ(s->n_basic, 3u * 2 * 6 + 3);
}

TEST(Typemap, LargeVectorStaysSmall) {
  Owned v(type_hvector(1 << 20, 1, 16, &kDouble));
  EXPECT_EQ(v->loop->entries.size(), 1u);
  EXPECT_EQ(v->loop->entries[0].count, size_t(1) << 20);
  EXPECT_EQ(v->packed, size_t(8) << 20);
  Owned vv(type_hvector(1000, 3, 1 << 16, v));  // vector of vectors: nested, still tiny
  EXPECT_LE(vv->loop->entries.size(), 1u);
  std::vector<double> src(2u << 20), dst(1u << 20), back(2u << 20, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = double(i);
  ASSERT_EQ(type_pack(v, src.data(), 1, dst.data(), 0, SIZE_MAX), size_t(8) << 20);
  for (size_t i = 0; i < dst.size(); ++i) ASSERT_EQ(dst[i], double(2 * i));
  ASSERT_EQ(type_unpack(v, dst.data(), size_t(8) << 20, back.data(), 1, 0), size_t(8) << 20);
  for (size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], i % 2 ? 0.0 : double(i));
}

TEST(Typemap, CountBasicElements) {
  size_t bl[] = {1, 2};
  ptrdiff_t d[] = {0, 8};
  const Datatype* ty[] = {&kDouble, &kInt};
  Owned s(type_struct(2, bl, d, ty));  // packed 16: double, int, int
  EXPECT_EQ(count_basic_elements(s, 0), 0u);
  EXPECT_EQ(count_basic_elements(s, 7), 0u);
  EXPECT_EQ(count_basic_elements(s, 8), 1u);
  EXPECT_EQ(count_basic_elements(s, 12), 2u);
  EXPECT_EQ(count_basic_elements(s, 16), 3u);
  EXPECT_EQ(count_basic_elements(s, 16 + 12), 5u);
  Owned c(type_contiguous(4, s));
  EXPECT_EQ(count_basic_elements(c, 64 + 16 + 8), 3u * 5 + 1);
}

TEST(Typemap, EmptyAndZeroCounts) {
  Owned z(type_contiguous(0, &kInt));
  EXPECT_EQ(z->size, 0u);
  EXPECT_EQ(z->extent, 0);
  EXPECT_EQ(type_pack(z, nullptr, 10, nullptr, 0, 100), 0u);
  Owned v(type_hvector(3, 0, 8, &kInt));
  EXPECT_EQ(v->size, 0u);
  EXPECT_EQ(count_basic_elements(v, 0), 0u);
}

TEST(Typemap, RetainRelease) {
  Datatype* v = type_contiguous(2, &kInt);
  Datatype* w = type_contiguous(2, v);
  type_release(v);  // w keeps v alive
  EXPECT_EQ(w->types[0], v);
  EXPECT_EQ(v->refs, 1);
  type_retain(w);
  type_release(w);
  EXPECT_EQ(w->size, 16u);
  type_release(w);
}
