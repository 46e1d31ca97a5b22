// The derived-datatype engine: constructors, layout ("dataloop") and pack/unpack.
//
// A layout is a small tree. A TypeLoop is a list of entries in typemap order; each entry is
// `count` instances, `stride` bytes apart, starting `disp` bytes from the element's origin, of
// either a contiguous run of `bytes` bytes (leaf: child == nullptr) or one instance of a child
// loop. Regular types stay small: a vector of 1M doubles is one entry {0, 1M, stride, 8}.
// Constructors fold single-entry children into their parent and merge adjacent runs, so a
// dense struct or a vector with stride == blocklength becomes a single run.
//
// Packed form: the elements' data in typemap order, no gaps. Predefined types pack as their
// extent (the (value, index) pairs keep their padding), the same bytes they travel as.
// Communication sends `count` elements as type_packed_size(t, count) bytes: straight from
// buf + offset when type_is_contiguous, else through a staging buffer (type_pack on send,
// type_unpack on completion of a receive); an operation holds type_retain from posting to
// completion, so MPI_Type_free meanwhile is safe.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "runtime/datatype.h"

namespace weft {

struct LoopEntry {
  ptrdiff_t disp = 0;
  size_t count = 1;
  ptrdiff_t stride = 0;
  size_t bytes = 0;                       // packed bytes of one instance
  std::shared_ptr<const TypeLoop> child;  // null: one instance is `bytes` contiguous bytes
};

struct TypeLoop {
  std::vector<LoopEntry> entries;
  std::vector<size_t> prefix;  // prefix[i]: packed offset of entries[i]; prefix.back() == size
  size_t size = 0;             // packed bytes of one instance
  ptrdiff_t true_lb = 0, true_ub = 0;  // bytes touched, relative to the origin
};

// Constructors. Each returns a new derived type (refs 1, not committed) that retains its
// children; byte displacements/strides (the MPI layer converts element units). The combiner
// and MPI argument record (ints/aints) are filled by the caller.
Datatype* type_contiguous(size_t count, const Datatype* old);
Datatype* type_hvector(size_t count, size_t blocklen, ptrdiff_t stride, const Datatype* old);
Datatype* type_hindexed(size_t n, const size_t* blocklens, const ptrdiff_t* disps, const Datatype* old);
Datatype* type_hindexed_block(size_t n, size_t blocklen, const ptrdiff_t* disps, const Datatype* old);
Datatype* type_struct(size_t n, const size_t* blocklens, const ptrdiff_t* disps,
                      const Datatype* const* types);
Datatype* type_resized(const Datatype* old, ptrdiff_t lb, ptrdiff_t extent);
// Sizes, subsizes, starts in elements of old; fortran_order: dimension 0 varies fastest.
Datatype* type_subarray(size_t ndims, const size_t* sizes, const size_t* subsizes, const size_t* starts,
                        bool fortran_order, const Datatype* old);
Datatype* type_dup(const Datatype* old);

// Reference counting of derived types; no-ops for predefined ones. The last release frees
// the type and releases its children.
void type_retain(const Datatype* t);
void type_release(const Datatype* t);

// Packed bytes of `count` elements.
inline size_t type_packed_size(const Datatype* t, size_t count) { return t->packed * count; }

// Whether `count` elements are one contiguous run; if so *offset is its start relative to buf.
inline bool type_is_contiguous(const Datatype* t, size_t count, ptrdiff_t* offset) {
  if (!(t->contiguous || (count <= 1 && t->dense))) return false;
  if (offset) *offset = t->true_lb;
  return true;
}

// Packs bytes [offset, offset + len) of the packed form of `count` elements at `src` into
// dst (len bytes); returns the bytes written (less than len where the packed form ends).
size_t type_pack(const Datatype* t, const void* src, size_t count, void* dst, size_t offset, size_t len);
// Unpacks `len` bytes from src into bytes [offset, offset + len) of the packed form of
// `count` elements at `dst`: a short message fills the whole elements it holds and the leading
// part of the next one. Returns the bytes consumed.
size_t type_unpack(const Datatype* t, const void* src, size_t len, void* dst, size_t count, size_t offset);

// Whole elements in `bytes` packed bytes (MPI_Get_count), or -1 (MPI_UNDEFINED) if the bytes
// end inside an element.
inline long long type_count_elements(const Datatype* t, size_t bytes) {
  if (t->packed == 0) return 0;
  return bytes % t->packed ? -1 : (long long)(bytes / t->packed);
}
// Basic elements in the first `bytes` packed bytes of a sequence of elements (MPI_Get_elements):
// a partly received element counts the basic elements it fully holds. *exact (if given) tells
// whether `bytes` ends on a basic element's boundary (MPI_Get_elements answers MPI_UNDEFINED if not).
size_t count_basic_elements(const Datatype* t, size_t bytes, bool* exact = nullptr);
// Packed bytes of the first n basic elements of a sequence of elements (MPI_Status_set_elements).
size_t bytes_of_basic_elements(const Datatype* t, size_t n);

}  // namespace weft
