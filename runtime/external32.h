// The "external32" data representation (MPI_Pack_external): every basic element big-endian, in
// the standard's fixed sizes (long 4 bytes, wchar_t 2, long double a 16-byte IEEE quad). The
// data goes through the native packed form (typemap.h), converted element by element along the
// type's signature.
#pragma once
#include <cstddef>

#include "runtime/datatype.h"

namespace weft {

// Bytes of `count` elements of t in external32; false when t holds a basic type external32 has
// no form for here (the (value, index) pairs with padding).
bool external32_size(const Datatype* t, size_t count, size_t* bytes);
// `count` elements at src (t's layout) into dst in external32 (external32_size(t, count) bytes).
void external32_pack(const Datatype* t, const void* src, size_t count, void* dst);
// The reverse: external32 bytes at src into `count` elements at dst.
void external32_unpack(const Datatype* t, const void* src, size_t count, void* dst);

}  // namespace weft
