// What the point-to-point and collective bindings need from the datatype module
// (mpi/datatypes.cpp): handle lookup, validation, and the pack engine of
// runtime/typemap.h.
//
// Wire convention: `count` elements of a type travel as packed_size(d, count) bytes, the
// packed form (typemap order, no gaps). For predefined types that is count * extent, as before
// (the pair types keep their padding); for a contiguous type it is the raw buffer from
// buf + offset (see contiguous_span), so no copy is needed.
//
// Sending:
//   const Datatype* d;
//   if (int rc = check_datatype(comm, "MPI_Send", dt, &d)) return rc;   // valid and committed
//   size_t bytes = packed_size(d, count);
//   ptrdiff_t off;
//   if (contiguous_span(d, count, &off)) send(static_cast<const char*>(buf) + off, bytes);
//   else { tmp = malloc(bytes); pack(d, buf, count, tmp); send(tmp, bytes); /* free at completion */ }
// Receiving:
//   if (contiguous_span(d, count, &off)) recv into (char*)buf + off, capacity bytes;
//   else { tmp = malloc(bytes); recv into tmp; on completion: unpack(d, tmp, received, buf, count); }
//   retain(d) when the operation is posted and release(d) when it completes, so MPI_Type_free
//   during the operation is safe.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "runtime/datatype.h"
#include "runtime/typemap.h"

namespace weft::mpi {

// nullptr for an invalid or freed handle (also declared in state.h).
const Datatype* lookup_datatype(MPI_Datatype h);

// Validates a datatype argument of a communication call: valid handle and committed
// (MPI_ERR_TYPE otherwise, raised on comm with a message naming `arg`). MPI_SUCCESS or the
// error code.
int check_datatype(MPI_Comm comm, const char* fn, MPI_Datatype h, const Datatype** out,
                   const char* arg = "datatype");

inline bool is_committed(const Datatype* d) { return d->committed; }

// Whether `count` elements are one run of packed_size(d, count) bytes starting at buf + *offset.
inline bool contiguous_span(const Datatype* d, size_t count, ptrdiff_t* offset) {
  return type_is_contiguous(d, count, offset);
}

inline size_t packed_size(const Datatype* d, size_t count) { return d->packed * count; }

// Packs bytes [offset, offset + len) of the packed form of `count` elements at buf into out;
// returns the bytes written.
inline size_t pack(const Datatype* d, const void* buf, size_t count, void* out, size_t offset = 0,
                   size_t len = SIZE_MAX) {
  return type_pack(d, buf, count, out, offset, len);
}

// Unpacks `len` received bytes (the packed form from byte `offset` on) into `count` elements at
// buf. A short message fills only what it holds. Returns the bytes consumed.
inline size_t unpack(const Datatype* d, const void* in, size_t len, void* buf, size_t count,
                     size_t offset = 0) {
  return type_unpack(d, in, len, buf, count, offset);
}

// MPI_Get_count: whole elements in `bytes` packed bytes, or -1 (MPI_UNDEFINED) if partial.
inline long long count_elements(const Datatype* d, size_t bytes) {
  if (d->packed == 0) return 0;
  return bytes % d->packed ? -1 : (long long)(bytes / d->packed);
}

// MPI_Get_elements: basic elements in `bytes` packed bytes, or -1 (MPI_UNDEFINED) when the
// bytes end inside a basic element.
inline long long count_basic_elements(const Datatype* d, size_t bytes) {
  bool exact = true;
  size_t n = weft::count_basic_elements(d, bytes, &exact);
  return exact ? (long long)n : -1;
}

// The byte count an MPI_Status carries (count_lo, and count_hi_and_cancelled above its
// cancelled bit).
inline size_t status_bytes(const MPI_Status* st) {
  return size_t(uint32_t(st->count_lo)) | (size_t(uint32_t(st->count_hi_and_cancelled) >> 1) << 32);
}

// Keep a derived type alive while an operation uses it (no-ops for predefined types).
inline void retain(const Datatype* d) { type_retain(d); }
inline void release(const Datatype* d) { type_release(d); }

}  // namespace weft::mpi
