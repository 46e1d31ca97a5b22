// Origin-side buffers of window accesses (access.cpp, accumulate.cpp).
#pragma once
#include <vector>

#include "mpi_window.h"
#include "runs.h"

namespace weft::rma {

// The bytes of a buffer in packed form: the buffer itself when contiguous, else a packed copy
// in *tmp (pack_now false: room for them, to be unpacked afterwards).
char* packed_view(const Buffer& b, bool pack_now, std::vector<char>* tmp);

// Reads the target's runs (from [lo, ...) of a located place) into `buf`, packed in order, or
// (write) writes them from it.
Status copy_runs(Window& w, int target, const Location& at, const std::vector<Run>& runs, ptrdiff_t lo, char* buf,
                 bool write);

// Whether a buffer is CUDA device memory, which is copied through host memory (contiguous
// datatypes only) or, for Put and Get on a device window, copied from or to directly. A build
// without CUDA refuses device memory.
Outcome buffer_on_device(const Buffer& b, bool* device);

}  // namespace weft::rma
