// MPI-IO on POSIX files: every rank opens the file itself and reads and writes its own parts with
// pread/pwrite, through the view (displacement, etype, filetype; "native" data only). Collective
// calls (_all, ordered, split) are correct but do no aggregation: each rank does its own I/O,
// and open, close, set_size, set_view and the ordered calls meet the peers on the file's own
// duplicate of the communicator. The shared file pointer lives in a one-element window on rank 0
// (fetch-and-add under an exclusive lock). Nonblocking calls complete before they return (a
// completed generalized request). Errors go to the file's error handler, MPI_ERRORS_RETURN by
// default (MPI_FILE_NULL's). Not supported: other data representations (external32) and
// MPI_Register_datarep; MPI_MODE_SEQUENTIAL files are opened, and their shared-pointer calls work.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "runtime/typemap.h"
#include "state.h"

struct weft_file {
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the opening communicator, errors returned
  int fd = -1;
  int amode = 0;
  std::string path;
  MPI_Offset disp = 0;
  MPI_Datatype etype = MPI_BYTE, filetype = MPI_BYTE;  // derived ones: this file's duplicates
  const weft::Datatype* et = nullptr;
  const weft::Datatype* ft = nullptr;
  MPI_Offset position = 0;  // the individual file pointer, in etypes of the view
  std::string datarep = "native";
  bool atomic = false;
  MPI_Errhandler errhandler = MPI_ERRORS_RETURN;
  MPI_Info info = MPI_INFO_NULL;
  MPI_Win shared_win = MPI_WIN_NULL;
  MPI_Offset shared = 0;  // rank 0: the shared file pointer (the window's memory)
  bool split_active = false;
  MPI_Status split_status{};
};

namespace weft::mpi {

namespace {

std::set<MPI_File>& open_files() {
  static auto* s = new std::set<MPI_File>();
  return *s;
}
std::vector<MPI_File>& fortran_files() {
  static auto* v = new std::vector<MPI_File>();
  return *v;
}
MPI_Errhandler default_file_errhandler = MPI_ERRORS_RETURN;  // MPI_FILE_NULL's

std::string vformat(const char* fmt, va_list ap) {
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  return buf;
}

bool predefined_handler(MPI_Errhandler eh) {
  return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT;
}

// Calls a user's file error handler eh (made by MPI_File_create_errhandler) with fh and code.
void call_user_handler(MPI_Errhandler eh, MPI_File fh, int code) {
  const uint32_t idx = handle::index_of(eh);
  if (!g_state || idx >= g_state->errhandlers.size() || !g_state->errhandlers[idx] || !g_state->errhandlers[idx]->fn)
    return;
  auto* user = reinterpret_cast<MPI_File_errhandler_function*>(g_state->errhandlers[idx]->fn);
  MPI_File target = fh;
  int err = code;
  user(&target, &err);
}

// ROMIO's file-system prefixes ("ufs:", ...) name the same POSIX files.
std::string posix_path(const char* filename) {
  std::string path = filename ? filename : "";
  for (const char* prefix : {"ufs:", "nfs:", "lustre:", "gpfs:", "panfs:"})
    if (path.rfind(prefix, 0) == 0) return path.substr(strlen(prefix));
  return path;
}

// Raises error_class on fh (MPI_FILE_NULL: the default file handler); returns the code.
int file_raise(MPI_File fh, int error_class, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
int file_raise(MPI_File fh, int error_class, const char* fn, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const std::string detail = vformat(fmt, ap);
  va_end(ap);
  const MPI_Errhandler eh = fh ? fh->errhandler : default_file_errhandler;
  const std::string label = fh ? "file " + fh->path : std::string("MPI_FILE_NULL");
  if (predefined_handler(eh)) return raise_on(eh, 0, label.c_str(), error_class, fn, detail);
  const int code = raise_on(MPI_ERRORS_RETURN, 0, label.c_str(), error_class, fn, detail);
  call_user_handler(eh, fh, code);
  return code;
}

// The MPI error class of a failed system call.
int errno_class(int e) {
  switch (e) {
    case ENOENT: case ENOTDIR: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EACCES: case EPERM: return MPI_ERR_ACCESS;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENOSPC: case EDQUOT: return MPI_ERR_NO_SPACE;
    case EISDIR: case ENAMETOOLONG: case EINVAL: return MPI_ERR_BAD_FILE;
    case EBUSY: case ETXTBSY: return MPI_ERR_FILE_IN_USE;
    default: return MPI_ERR_IO;
  }
}

int check_file(MPI_File fh, const char* fn) {
  WEFT_REQUIRE_INIT(fn);
  if (!fh || !open_files().count(fh)) return file_raise(MPI_FILE_NULL, MPI_ERR_FILE, fn, "not an open file");
  return MPI_SUCCESS;
}

// Calls run(disp, bytes) for each contiguous run of one element of t, in typemap order
// (displacements from the element's origin); stops where run returns false.
template <class Run>
bool loop_runs(const TypeLoop& loop, ptrdiff_t base, Run& run) {
  for (const LoopEntry& e : loop.entries)
    for (size_t i = 0; i < e.count; ++i) {
      const ptrdiff_t at = base + e.disp + ptrdiff_t(i) * e.stride;
      if (e.child ? !loop_runs(*e.child, at, run) : !run(at, e.bytes)) return false;
    }
  return true;
}
template <class Run>
bool element_runs(const Datatype* t, Run& run) {
  if (t->predefined) return run(ptrdiff_t(0), size_t(t->extent));
  if (t->dense || !t->loop) return run(t->true_lb, t->packed);
  return loop_runs(*t->loop, 0, run);
}

// Why t cannot be a view's etype or filetype (MPI: displacements non-negative and monotonically
// nondecreasing; a file that may be written needs them not to overlap either), or null.
const char* view_type_problem(const Datatype* t, bool writable) {
  const char* why = nullptr;
  ptrdiff_t last_start = 0, last_end = 0;
  auto run = [&](ptrdiff_t d, size_t bytes) {
    if (d < 0) why = "has a negative displacement";
    else if (d < last_start) why = "has decreasing displacements";
    else if (writable && d < last_end) why = "has overlapping parts (the file may be written)";
    last_start = d;
    last_end = std::max(last_end, d + ptrdiff_t(bytes));
    return why == nullptr;
  };
  element_runs(t, run);
  ptrdiff_t first_start = 0;
  bool first = true;
  auto span = [&](ptrdiff_t d, size_t) {
    if (first) first_start = d;
    first = false;
    return true;
  };
  if (!why) element_runs(t, span);
  // Consecutive instances (extent apart) must not overlap either.
  if (!why && writable && t->extent > 0 && last_end - first_start > t->extent)
    why = "has instances that overlap (its extent is smaller than its data; the file may be written)";
  return why;
}

bool view_is_contiguous(const weft_file& f) {
  return f.ft->dense && f.ft->true_lb == 0 && size_t(f.ft->extent) == f.ft->packed;
}

// Calls io(file offset, bytes) for the pieces of the view's data bytes [start, start + len),
// in order; stops where io returns false.
template <class Io>
void view_pieces(const weft_file& f, uint64_t start, uint64_t len, Io&& io) {
  if (len == 0) return;
  if (view_is_contiguous(f)) {
    io(uint64_t(f.disp) + start, len);
    return;
  }
  const uint64_t per = f.ft->packed;
  uint64_t k = start / per, skip = start % per;
  bool go = true;
  while (len > 0 && go) {
    const int64_t base = f.disp + int64_t(k) * f.ft->extent;
    auto run = [&](ptrdiff_t d, size_t bytes) {
      if (skip >= bytes) {
        skip -= bytes;
        return true;
      }
      const uint64_t n = std::min<uint64_t>(bytes - skip, len);
      go = io(uint64_t(base + d) + skip, n);
      skip = 0;
      len -= n;
      return go && len > 0;
    };
    element_runs(f.ft, run);
    ++k;
  }
}

uint64_t etype_size(const weft_file& f) { return std::max<uint64_t>(f.et->packed, 1); }

// The file offset of the view's etype `offset`.
MPI_Offset byte_offset(const weft_file& f, MPI_Offset offset) {
  MPI_Offset at = f.disp;
  view_pieces(f, uint64_t(offset) * etype_size(f), 1, [&](uint64_t pos, uint64_t) {
    at = MPI_Offset(pos);
    return false;
  });
  return at;
}

// The view's data bytes that lie before byte `size` of the file.
uint64_t view_bytes_below(const weft_file& f, uint64_t size) {
  if (size <= uint64_t(f.disp)) return 0;
  if (view_is_contiguous(f)) return size - uint64_t(f.disp);
  uint64_t total = 0, k = 0;
  const ptrdiff_t lowest = std::min<ptrdiff_t>(0, f.ft->true_lb);
  // Tiles wholly below `size` count whole; the walk starts at the first that is not.
  const int64_t upper = f.ft->true_lb + f.ft->true_extent, room = int64_t(size) - f.disp;
  if (f.ft->extent > 0 && lowest >= 0 && room >= upper) {
    k = uint64_t((room - upper) / f.ft->extent + 1);
    total = k * f.ft->packed;
  }
  for (;; ++k) {
    const int64_t base = f.disp + int64_t(k) * f.ft->extent;
    if (base + lowest >= int64_t(size) || f.ft->extent <= 0) break;
    bool below = true;
    auto run = [&](ptrdiff_t d, size_t bytes) {
      const int64_t at = base + d;
      if (at >= int64_t(size)) return below = false;
      total += std::min<uint64_t>(bytes, size - uint64_t(at));
      return true;
    };
    element_runs(f.ft, run);
    if (!below && f.ft->true_lb >= 0) break;
  }
  return total;
}

// The helpers below raise on fh with fn; with fn null (inside a collective call, whose failure
// is agreed and raised once) they only return the error class.
int file_size(MPI_File fh, const char* fn, MPI_Offset* size) {
  struct stat st;
  if (fstat(fh->fd, &st) != 0)
    return fn ? file_raise(fh, errno_class(errno), fn, "fstat: %s", strerror(errno)) : errno_class(errno);
  *size = MPI_Offset(st.st_size);
  return MPI_SUCCESS;
}

// The offset, in etypes, of the view's end of file.
int end_offset(MPI_File fh, const char* fn, MPI_Offset* out) {
  MPI_Offset size = 0;
  if (int rc = file_size(fh, fn, &size)) return rc;
  // A partly written etype counts (as ROMIO's end of file does), so appending never overwrites it.
  const uint64_t bytes = view_bytes_below(*fh, uint64_t(size)), per = etype_size(*fh);
  *out = MPI_Offset((bytes + per - 1) / per);
  return MPI_SUCCESS;
}

void set_file_status(MPI_Status* st, size_t bytes) {
  if (st == MPI_STATUS_IGNORE) return;
  fill_status(st, RequestStatus{MPI_ANY_SOURCE, MPI_ANY_TAG, bytes});
  st->MPI_ERROR = MPI_SUCCESS;
}

// Why an access of `count` elements of `datatype` from buf cannot be made (its error class in
// *cls), or empty; *d and *bytes describe it.
std::string access_problem(MPI_File fh, bool writing, const void* buf, MPI_Count count, MPI_Datatype datatype,
                           const Datatype** d, size_t* bytes, int* cls) {
  *cls = MPI_ERR_TYPE;
  *d = datatype == MPI_DATATYPE_NULL ? nullptr : lookup_datatype(datatype);
  if (!*d) return "invalid datatype";
  if (!(*d)->committed) return "the datatype is not committed";
  *cls = MPI_ERR_COUNT;
  if (count < 0) return "negative count " + std::to_string(count);
  if ((*d)->packed && uint64_t(count) > SIZE_MAX / (*d)->packed) return "the count's bytes overflow";
  *cls = writing ? MPI_ERR_READ_ONLY : MPI_ERR_ACCESS;
  if (writing && (fh->amode & MPI_MODE_RDONLY)) return "the file was opened MPI_MODE_RDONLY";
  if (!writing && (fh->amode & MPI_MODE_WRONLY)) return "the file was opened MPI_MODE_WRONLY";
  *bytes = type_packed_size(*d, size_t(count));
  *cls = MPI_ERR_TYPE;
  if (*bytes % etype_size(*fh))
    return std::to_string(*bytes) + " bytes of data are not a whole number of etypes (" +
           std::to_string(etype_size(*fh)) + " bytes each)";
  // A null buffer is MPI_BOTTOM, which types of absolute addresses start from.
  *cls = MPI_ERR_BUFFER;
  if (*bytes && !buf && (*d)->true_lb == 0) return "buffer is NULL";
  return {};
}

int check_access(MPI_File fh, const char* fn, bool writing, const void* buf, MPI_Count count, MPI_Datatype datatype,
                 const Datatype** d, size_t* bytes) {
  int cls = 0;
  const std::string why = access_problem(fh, writing, buf, count, datatype, d, bytes, &cls);
  return why.empty() ? MPI_SUCCESS : file_raise(fh, cls, fn, "%s", why.c_str());
}

// Reads or writes `count` elements of `datatype` at the view's etype `offset`; *moved: bytes.
int access(MPI_File fh, const char* fn, bool writing, MPI_Offset offset, const void* cbuf, MPI_Count count,
           MPI_Datatype datatype, MPI_Status* status, size_t* moved = nullptr) {
  void* buf = const_cast<void*>(cbuf);
  if (offset < 0) return file_raise(fh, MPI_ERR_ARG, fn, "negative offset %lld", (long long)offset);
  const Datatype* d = nullptr;
  size_t bytes = 0;
  if (int rc = check_access(fh, fn, writing, buf, count, datatype, &d, &bytes)) return rc;
  ptrdiff_t at = 0;
  const bool direct = type_is_contiguous(d, size_t(count), &at);
  std::unique_ptr<char[]> staging(direct ? nullptr : new (std::nothrow) char[bytes]);
  if (!direct && !staging)
    return file_raise(fh, MPI_ERR_NO_MEM, fn, "no memory to pack %zu bytes of noncontiguous data", bytes);
  char* stream = direct ? static_cast<char*>(buf) + at : staging.get();
  if (writing && !direct) type_pack(d, buf, size_t(count), stream, 0, bytes);
  const uint64_t start = uint64_t(offset) * etype_size(*fh);
  // Atomic mode: the access's byte range is locked (fcntl, across processes), so that no other
  // rank's access interleaves with its pieces.
  struct flock lock {};
  if (fh->atomic && bytes) {
    uint64_t lo = UINT64_MAX, hi = 0;
    view_pieces(*fh, start, bytes, [&](uint64_t pos, uint64_t n) {
      lo = std::min(lo, pos);
      hi = std::max(hi, pos + n);
      return true;
    });
    lock.l_type = writing ? F_WRLCK : F_RDLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = off_t(lo);
    lock.l_len = off_t(hi - lo);
    while (fcntl(fh->fd, F_SETLKW, &lock) != 0)
      if (errno != EINTR) return file_raise(fh, MPI_ERR_IO, fn, "atomic mode: fcntl lock: %s", strerror(errno));
  }
  size_t done = 0;
  int err = 0;
  view_pieces(*fh, start, bytes, [&](uint64_t pos, uint64_t n) {
    while (n > 0) {
      const ssize_t r = writing ? pwrite(fh->fd, stream + done, n, off_t(pos)) : pread(fh->fd, stream + done, n, off_t(pos));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        err = errno;
        return false;
      }
      if (r == 0) {  // end of file (reading)
        return false;
      }
      done += size_t(r);
      pos += uint64_t(r);
      n -= uint64_t(r);
    }
    return true;
  });
  if (fh->atomic && bytes) {
    lock.l_type = F_UNLCK;
    (void)fcntl(fh->fd, F_SETLK, &lock);
  }
  if (err) return file_raise(fh, errno_class(err), fn, "%s: %s", writing ? "pwrite" : "pread", strerror(err));
  if (!writing && !direct && done) type_unpack(d, stream, done, buf, size_t(count), 0);
  set_file_status(status, done);
  if (moved) *moved = done;
  return MPI_SUCCESS;
}

// Agreement: the highest error class of any rank (0: none).
int agree(MPI_Comm comm, int mine) {
  int all = mine;
  if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return MPI_ERR_OTHER;
  return all;
}

// Shared file pointer: fetch-and-add of n etypes (n 0: read), at rank 0's window.
int shared_fetch_add(MPI_File fh, const char* fn, MPI_Offset n, MPI_Offset* before) {
  int rc = PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, fh->shared_win);
  if (rc == MPI_SUCCESS) rc = PMPI_Fetch_and_op(&n, before, MPI_OFFSET, 0, 0, n ? MPI_SUM : MPI_NO_OP, fh->shared_win);
  if (int u = PMPI_Win_unlock(0, fh->shared_win); rc == MPI_SUCCESS) rc = u;
  if (rc != MPI_SUCCESS)
    return fn ? file_raise(fh, MPI_ERR_OTHER, fn, "the shared file pointer could not be updated") : MPI_ERR_OTHER;
  return MPI_SUCCESS;
}

int shared_set(MPI_File fh, const char* fn, MPI_Offset value) {
  int rc = PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, fh->shared_win);
  MPI_Offset ignored = 0;
  if (rc == MPI_SUCCESS) rc = PMPI_Fetch_and_op(&value, &ignored, MPI_OFFSET, 0, 0, MPI_REPLACE, fh->shared_win);
  if (int u = PMPI_Win_unlock(0, fh->shared_win); rc == MPI_SUCCESS) rc = u;
  if (rc != MPI_SUCCESS)
    return fn ? file_raise(fh, MPI_ERR_OTHER, fn, "the shared file pointer could not be set") : MPI_ERR_OTHER;
  return MPI_SUCCESS;
}

enum class Pointer { explicit_offset, individual, shared, ordered };

// One data access call of any family; `collective` ones of the individual and explicit families
// need no peer here.
int data_call(const char* fn, MPI_File fh, Pointer ptr, bool writing, MPI_Offset offset, const void* buf,
              MPI_Count count, MPI_Datatype datatype, MPI_Status* status) {
  if (int rc = check_file(fh, fn)) return rc;
  if ((fh->amode & MPI_MODE_SEQUENTIAL) && (ptr == Pointer::explicit_offset || ptr == Pointer::individual))
    return file_raise(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                      "a file opened MPI_MODE_SEQUENTIAL is accessed through the shared file pointer only");
  switch (ptr) {
    case Pointer::explicit_offset:
      return access(fh, fn, writing, offset, buf, count, datatype, status);
    case Pointer::individual: {
      size_t moved = 0;
      if (int rc = access(fh, fn, writing, fh->position, buf, count, datatype, status, &moved)) return rc;
      fh->position += MPI_Offset(moved / etype_size(*fh));
      return MPI_SUCCESS;
    }
    case Pointer::shared: {
      MPI_Offset at = 0;
      const Datatype* d = nullptr;
      size_t bytes = 0;
      // Checked before the shared pointer moves.
      if (int rc = check_access(fh, fn, writing, buf, count, datatype, &d, &bytes)) return rc;
      if (int rc = shared_fetch_add(fh, fn, MPI_Offset(bytes / etype_size(*fh)), &at)) return rc;
      return access(fh, fn, writing, at, buf, count, datatype, status);
    }
    case Pointer::ordered: {
      MPI_Offset n = 0, before = 0, total = 0, base = 0;
      const Datatype* d = nullptr;
      size_t bytes = 0;
      int cls = 0;
      // Every rank's arguments are agreed before the shared pointer moves.
      const std::string why = access_problem(fh, writing, buf, count, datatype, &d, &bytes, &cls);
      if (const int all = agree(fh->comm, why.empty() ? 0 : cls))
        return file_raise(fh, why.empty() ? all : cls, fn, "%s",
                          why.empty() ? "another rank's arguments were refused" : why.c_str());
      n = MPI_Offset(bytes / etype_size(*fh));
      int rank = 0;
      PMPI_Comm_rank(fh->comm, &rank);
      if (PMPI_Exscan(&n, &before, 1, MPI_OFFSET, MPI_SUM, fh->comm) != MPI_SUCCESS ||
          PMPI_Allreduce(&n, &total, 1, MPI_OFFSET, MPI_SUM, fh->comm) != MPI_SUCCESS)
        return file_raise(fh, MPI_ERR_OTHER, fn, "the ordered offsets could not be agreed");
      // Rank 0 moves the pointer; a failure there travels in the broadcast (-1), so no rank
      // leaves before it.
      if (rank == 0) {
        before = 0;
        if (shared_fetch_add(fh, nullptr, total, &base) != MPI_SUCCESS) base = -1;
      }
      if (PMPI_Bcast(&base, 1, MPI_OFFSET, 0, fh->comm) != MPI_SUCCESS || base < 0)
        return file_raise(fh, MPI_ERR_OTHER, fn, "the shared file pointer could not be moved");
      return access(fh, fn, writing, base + before, buf, count, datatype, status);
    }
  }
  return MPI_SUCCESS;
}

// A nonblocking call: done now, its request complete (a generalized request).
int status_query(void* extra, MPI_Status* status) {
  *status = *static_cast<MPI_Status*>(extra);
  return MPI_SUCCESS;
}
int status_free(void* extra) {
  delete static_cast<MPI_Status*>(extra);
  return MPI_SUCCESS;
}
int status_cancel(void*, int) { return MPI_SUCCESS; }

int nonblocking(const char* fn, MPI_File fh, Pointer ptr, bool writing, MPI_Offset offset, const void* buf,
                MPI_Count count, MPI_Datatype datatype, MPI_Request* request) {
  if (int rc = check_file(fh, fn)) return rc;
  if (!request) return file_raise(fh, MPI_ERR_ARG, fn, "request is NULL");
  *request = MPI_REQUEST_NULL;
  auto* st = new MPI_Status{};
  if (int rc = data_call(fn, fh, ptr, writing, offset, buf, count, datatype, st)) {
    delete st;
    return rc;
  }
  if (PMPI_Grequest_start(status_query, status_free, status_cancel, st, request) != MPI_SUCCESS) {
    delete st;
    return file_raise(fh, MPI_ERR_OTHER, fn, "no request could be made");
  }
  return PMPI_Grequest_complete(*request);
}

int split_begin(const char* fn, MPI_File fh, Pointer ptr, bool writing, MPI_Offset offset, const void* buf,
                MPI_Count count, MPI_Datatype datatype) {
  if (int rc = check_file(fh, fn)) return rc;
  if (fh->split_active) return file_raise(fh, MPI_ERR_OTHER, fn, "a split collective is already active on the file");
  if (int rc = data_call(fn, fh, ptr, writing, offset, buf, count, datatype, &fh->split_status)) return rc;
  fh->split_active = true;
  return MPI_SUCCESS;
}

int split_end(const char* fn, MPI_File fh, MPI_Status* status) {
  if (int rc = check_file(fh, fn)) return rc;
  if (!fh->split_active) return file_raise(fh, MPI_ERR_OTHER, fn, "no split collective is active on the file");
  fh->split_active = false;
  if (status != MPI_STATUS_IGNORE) *status = fh->split_status;
  return MPI_SUCCESS;
}

void release_view_types(weft_file& f) {
  if (f.etype != MPI_DATATYPE_NULL && !builtin_datatype(f.etype)) PMPI_Type_free(&f.etype);
  if (f.filetype != MPI_DATATYPE_NULL && !builtin_datatype(f.filetype)) PMPI_Type_free(&f.filetype);
}

// Keeps the view's type: predefined ones as they are, derived ones duplicated.
int keep_type(MPI_Datatype h, MPI_Datatype* out) {
  if (builtin_datatype(h)) {
    *out = h;
    return MPI_SUCCESS;
  }
  return PMPI_Type_dup(h, out);
}

int open_file(const char* fn, MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  WEFT_REQUIRE_INIT(fn);
  Comm* c = nullptr;
  if (int rc = comm_of(fn, comm, &c)) return rc;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return raise(comm, MPI_ERR_COMM, fn, "an intercommunicator (files open on intracommunicators)");
  // Argument errors are agreed like the others: a rank that left here would hang its peers.
  if (fh) *fh = MPI_FILE_NULL;
  const int rw = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
  int mine = 0;
  std::string why;
  if (!fh || !filename) {
    mine = MPI_ERR_ARG;
    why = "filename or fh is NULL";
  } else if (rw != MPI_MODE_RDONLY && rw != MPI_MODE_WRONLY && rw != MPI_MODE_RDWR) {
    mine = MPI_ERR_AMODE;
    why = "exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR must be given";
  } else if (rw == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL))) {
    mine = MPI_ERR_AMODE;
    why = "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
  } else if ((amode & MPI_MODE_SEQUENTIAL) && rw == MPI_MODE_RDWR) {
    mine = MPI_ERR_AMODE;
    why = "MPI_MODE_SEQUENTIAL with MPI_MODE_RDWR";
  }
  const std::string path = posix_path(filename);
  int flags = rw == MPI_MODE_RDONLY ? O_RDONLY : rw == MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  int fd = -1;
  // Rank 0 creates the file (exclusively where asked), then the others open it.
  if (rank == 0 && !mine) {
    fd = open(path.c_str(), flags | ((amode & MPI_MODE_CREATE) ? O_CREAT : 0) | ((amode & MPI_MODE_EXCL) ? O_EXCL : 0),
              0644);
    if (fd < 0) {
      mine = errno_class(errno);
      why = "open: " + std::string(strerror(errno));
    }
  }
  int first = mine;
  if (PMPI_Bcast(&first, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
    return file_raise(MPI_FILE_NULL, MPI_ERR_OTHER, fn, "the peers could not be reached");
  if (rank != 0 && !mine && !first) {
    fd = open(path.c_str(), flags, 0644);
    if (fd < 0) {
      mine = errno_class(errno);
      why = "open: " + std::string(strerror(errno));
    }
  }
  // MPI_MODE_APPEND: both pointers start at the end (the default view: bytes).
  MPI_Offset end = 0;
  if (!mine && fd >= 0 && (amode & MPI_MODE_APPEND)) {
    struct stat st;
    if (fstat(fd, &st) == 0) {
      end = MPI_Offset(st.st_size);
    } else {
      mine = errno_class(errno);
      why = "fstat: " + std::string(strerror(errno));
    }
  }
  int all = agree(comm, mine);
  if (all) {
    if (fd >= 0) close(fd);
    if (mine) return file_raise(MPI_FILE_NULL, mine, fn, "%s: %s", path.c_str(), why.c_str());
    return file_raise(MPI_FILE_NULL, all, fn, "%s: another rank could not open it (its log says why)", path.c_str());
  }
  auto* f = new weft_file();
  f->fd = fd;
  f->amode = amode;
  f->path = path;
  f->et = lookup_datatype(MPI_BYTE);
  f->ft = f->et;
  f->position = f->shared = end;  // the shared pointer set before its window opens to the peers
  // The file's communicator and the shared pointer's window: collective, their failures agreed.
  const bool dup_ok = PMPI_Comm_dup(comm, &f->comm) == MPI_SUCCESS;
  if (dup_ok) PMPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
  const bool win_ok = dup_ok && PMPI_Win_create(rank == 0 ? &f->shared : nullptr, rank == 0 ? sizeof(MPI_Offset) : 0,
                                                sizeof(MPI_Offset), MPI_INFO_NULL, f->comm,
                                                &f->shared_win) == MPI_SUCCESS;
  all = agree(comm, win_ok ? 0 : MPI_ERR_OTHER);
  if (all) {
    if (win_ok) PMPI_Win_free(&f->shared_win);
    if (dup_ok) PMPI_Comm_free(&f->comm);
    close(fd);
    delete f;
    return file_raise(MPI_FILE_NULL, MPI_ERR_OTHER, fn, "%s: the file's communicator or shared-pointer window could "
                      "not be made on %s", path.c_str(), win_ok ? "another rank" : "this rank");
  }
  f->errhandler = default_file_errhandler;
  retain_errhandler(f->errhandler);
  if (info != MPI_INFO_NULL) PMPI_Info_dup(info, &f->info);
  open_files().insert(f);
  *fh = f;
  return MPI_SUCCESS;
}

int close_file(const char* fn, MPI_File* fhp) {
  if (!fhp) return file_raise(MPI_FILE_NULL, MPI_ERR_ARG, fn, "fh is NULL");
  if (int rc = check_file(*fhp, fn)) return rc;
  MPI_File f = *fhp;
  int rank = 0;
  PMPI_Comm_rank(f->comm, &rank);
  const int mine = close(f->fd) == 0 ? 0 : errno_class(errno);
  f->fd = -1;
  const int all = agree(f->comm, mine);  // every rank closed before the file goes
  if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && rank == 0) unlink(f->path.c_str());
  PMPI_Win_free(&f->shared_win);
  PMPI_Comm_free(&f->comm);
  release_view_types(*f);
  if (f->info != MPI_INFO_NULL) PMPI_Info_free(&f->info);
  open_files().erase(f);
  auto& ids = fortran_files();
  std::replace(ids.begin(), ids.end(), f, MPI_File(MPI_FILE_NULL));
  const MPI_Errhandler eh = f->errhandler;
  const std::string path = f->path;
  delete f;
  *fhp = MPI_FILE_NULL;
  int rc = MPI_SUCCESS;
  if (all) rc = file_raise(MPI_FILE_NULL, all, fn, "closing %s failed on a rank", path.c_str());
  release_errhandler(eh);
  return rc;
}

int set_view(const char* fn, MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
             const char* datarep, MPI_Info info) {
  if (int rc = check_file(fh, fn)) return rc;
  const Datatype *et = nullptr, *ft = nullptr;
  int mine = 0;
  std::string why;
  if (!datarep) {
    mine = MPI_ERR_ARG;
    why = "datarep is NULL";
  } else if (strcmp(datarep, "native") != 0 && strcmp(datarep, "internal") != 0) {
    mine = MPI_ERR_UNSUPPORTED_DATAREP;
    why = std::string("data representation \"") + datarep + "\" is not supported (only \"native\" and \"internal\")";
  } else if (!(et = etype == MPI_DATATYPE_NULL ? nullptr : lookup_datatype(etype)) ||
             !(ft = filetype == MPI_DATATYPE_NULL ? nullptr : lookup_datatype(filetype)) || !et->committed ||
             !ft->committed) {
    mine = MPI_ERR_TYPE;
    why = "the etype or the filetype is invalid or not committed";
  } else if (const char* bad = view_type_problem(et, !(fh->amode & MPI_MODE_RDONLY))) {
    mine = MPI_ERR_IO;
    why = std::string("the etype ") + bad;
  } else if (const char* bad_ft = view_type_problem(ft, !(fh->amode & MPI_MODE_RDONLY))) {
    mine = MPI_ERR_IO;
    why = std::string("the filetype ") + bad_ft;
  } else if (et->packed == 0 || ft->packed % et->packed) {
    mine = MPI_ERR_TYPE;
    why = "the filetype's size is not a multiple of the etype's";
  } else if (ft->packed == 0 || ft->extent <= 0) {
    mine = MPI_ERR_TYPE;
    why = "the filetype holds no data or has no positive extent";
  } else if (disp == MPI_DISPLACEMENT_CURRENT && !(fh->amode & MPI_MODE_SEQUENTIAL)) {
    mine = MPI_ERR_ARG;
    why = "MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL";
  } else if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT) {
    mine = MPI_ERR_ARG;
    why = "negative displacement";
  }
  // MPI_DISPLACEMENT_CURRENT: the shared pointer, read by every rank before rank 0 resets it
  // (after the agreement).
  MPI_Offset current = 0;
  if (!mine && disp == MPI_DISPLACEMENT_CURRENT && shared_fetch_add(fh, nullptr, 0, &current)) {
    mine = MPI_ERR_OTHER;
    why = "the shared file pointer could not be read";
  }
  const int all = agree(fh->comm, mine);
  if (all) {
    if (mine) return file_raise(fh, mine, fn, "%s", why.c_str());
    return file_raise(fh, all, fn, "another rank's view was refused");
  }
  if (disp == MPI_DISPLACEMENT_CURRENT) disp = byte_offset(*fh, current);
  release_view_types(*fh);
  keep_type(etype, &fh->etype);
  keep_type(filetype, &fh->filetype);
  fh->et = lookup_datatype(fh->etype);
  fh->ft = lookup_datatype(fh->filetype);
  fh->disp = disp;
  fh->position = 0;
  fh->datarep = datarep;
  (void)info;
  int rank = 0;
  PMPI_Comm_rank(fh->comm, &rank);
  // No peer reads the shared pointer before it is reset; a failure is agreed.
  const int reset = rank == 0 && shared_set(fh, nullptr, 0) != MPI_SUCCESS ? MPI_ERR_OTHER : 0;
  if (agree(fh->comm, reset)) return file_raise(fh, MPI_ERR_OTHER, fn, "rank 0 could not reset the shared file pointer");
  return MPI_SUCCESS;
}

int get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype, char* datarep) {
  const char* fn = "MPI_File_get_view";
  if (int rc = check_file(fh, fn)) return rc;
  if (!disp || !etype || !filetype || !datarep) return file_raise(fh, MPI_ERR_ARG, fn, "an argument is NULL");
  *disp = fh->disp;
  keep_type(fh->etype, etype);
  keep_type(fh->filetype, filetype);
  snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", fh->datarep.c_str());
  return MPI_SUCCESS;
}

int seek(const char* fn, MPI_File fh, MPI_Offset offset, int whence, bool shared) {
  if (int rc = check_file(fh, fn)) return rc;
  if (!shared && (fh->amode & MPI_MODE_SEQUENTIAL))
    return file_raise(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn, "the file was opened MPI_MODE_SEQUENTIAL");
  if (!shared) {
    MPI_Offset base = 0;
    if (whence == MPI_SEEK_CUR) base = fh->position;
    else if (whence == MPI_SEEK_END) {
      if (int rc = end_offset(fh, fn, &base)) return rc;
    } else if (whence != MPI_SEEK_SET) {
      return file_raise(fh, MPI_ERR_ARG, fn, "whence %d is none of MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END", whence);
    }
    if (base + offset < 0)
      return file_raise(fh, MPI_ERR_ARG, fn, "the position would be negative (%lld)", (long long)(base + offset));
    fh->position = base + offset;
    return MPI_SUCCESS;
  }
  // Collective: every rank must give the same offset and whence; rank 0 sets the pointer after
  // every rank has read the old one, and a failure anywhere is agreed.
  int rank = 0;
  PMPI_Comm_rank(fh->comm, &rank);
  MPI_Offset base = 0;
  int mine = 0;
  if (whence == MPI_SEEK_CUR) mine = shared_fetch_add(fh, nullptr, 0, &base) ? MPI_ERR_OTHER : 0;
  else if (whence == MPI_SEEK_END) mine = end_offset(fh, nullptr, &base) ? MPI_ERR_IO : 0;
  else if (whence != MPI_SEEK_SET) mine = MPI_ERR_ARG;
  MPI_Offset to = base + offset, range[2] = {to, -to};
  if (!mine && to < 0) mine = MPI_ERR_ARG;
  if (PMPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_OFFSET, MPI_MAX, fh->comm) != MPI_SUCCESS)
    return file_raise(fh, MPI_ERR_OTHER, fn, "the peers could not be reached");
  if (!mine && range[0] != -range[1]) mine = MPI_ERR_ARG;  // the ranks' targets differ
  if (const int all = agree(fh->comm, mine))
    return file_raise(fh, all, fn, "%s", mine == MPI_ERR_ARG ? "the ranks gave different or invalid offsets"
                                                             : "the shared file pointer could not be moved");
  const int set = rank == 0 && shared_set(fh, nullptr, to) != MPI_SUCCESS ? MPI_ERR_OTHER : 0;
  if (agree(fh->comm, set)) return file_raise(fh, MPI_ERR_OTHER, fn, "rank 0 could not move the shared pointer");
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace weft::mpi

using namespace weft::mpi;
using weft::mpi::Pointer;

extern "C" {

int PMPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  WEFT_ENTRY;
  return open_file("MPI_File_open", comm, filename, amode, info, fh);
}

int PMPI_File_close(MPI_File* fh) {
  WEFT_ENTRY;
  return close_file("MPI_File_close", fh);
}

int PMPI_File_delete(const char* filename, MPI_Info) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_delete";
  WEFT_REQUIRE_INIT(fn);
  if (!filename) return file_raise(MPI_FILE_NULL, MPI_ERR_ARG, fn, "filename is NULL");
  const std::string path = posix_path(filename);
  if (unlink(path.c_str()) != 0) return file_raise(MPI_FILE_NULL, errno_class(errno), fn, "%s: %s", path.c_str(), strerror(errno));
  return MPI_SUCCESS;
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_set_size";
  if (int rc = check_file(fh, fn)) return rc;
  int rank = 0, mine = 0;
  PMPI_Comm_rank(fh->comm, &rank);
  if (size < 0) mine = MPI_ERR_ARG;
  else if (fh->amode & MPI_MODE_RDONLY) mine = MPI_ERR_READ_ONLY;
  // Every rank is in the call (its earlier accesses done) before the size changes.
  int all = agree(fh->comm, mine);
  if (!all && rank == 0 && ftruncate(fh->fd, off_t(size)) != 0) mine = errno_class(errno);
  if (!all) all = agree(fh->comm, mine);
  if (all) return file_raise(fh, all, fn, "setting the size to %lld failed", (long long)size);
  return MPI_SUCCESS;
}

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_preallocate";
  if (int rc = check_file(fh, fn)) return rc;
  int rank = 0, mine = 0;
  PMPI_Comm_rank(fh->comm, &rank);
  MPI_Offset now = 0;
  if (size < 0) mine = MPI_ERR_ARG;
  else if (fh->amode & MPI_MODE_RDONLY) mine = MPI_ERR_READ_ONLY;
  int all = agree(fh->comm, mine);
  if (!all && rank == 0 && file_size(fh, nullptr, &now) != MPI_SUCCESS) {
    mine = MPI_ERR_IO;
  } else if (!all && rank == 0 && size > now) {
    // File systems without fallocate get the size only (as ROMIO); other failures (no space) stay.
    const int e = posix_fallocate(fh->fd, 0, off_t(size));
    if (e == EOPNOTSUPP || e == EINVAL) {
      if (ftruncate(fh->fd, off_t(size)) != 0) mine = errno_class(errno);
    } else if (e != 0) {
      mine = errno_class(e);
    }
  }
  if (!all) all = agree(fh->comm, mine);
  if (all) return file_raise(fh, all, fn, "preallocating %lld bytes failed", (long long)size);
  return MPI_SUCCESS;
}

int PMPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_get_size";
  if (int rc = check_file(fh, fn)) return rc;
  if (!size) return file_raise(fh, MPI_ERR_ARG, fn, "size is NULL");
  return file_size(fh, fn, size);
}

int PMPI_File_get_group(MPI_File fh, MPI_Group* group) {
  WEFT_ENTRY;
  if (int rc = check_file(fh, "MPI_File_get_group")) return rc;
  return PMPI_Comm_group(fh->comm, group);
}

int PMPI_File_get_amode(MPI_File fh, int* amode) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_get_amode";
  if (int rc = check_file(fh, fn)) return rc;
  if (!amode) return file_raise(fh, MPI_ERR_ARG, fn, "amode is NULL");
  *amode = fh->amode;
  return MPI_SUCCESS;
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info) {
  WEFT_ENTRY;
  if (int rc = check_file(fh, "MPI_File_set_info")) return rc;
  if (info == MPI_INFO_NULL) return MPI_SUCCESS;
  if (fh->info != MPI_INFO_NULL) PMPI_Info_free(&fh->info);
  return PMPI_Info_dup(info, &fh->info);
}

int PMPI_File_get_info(MPI_File fh, MPI_Info* info) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_get_info";
  if (int rc = check_file(fh, fn)) return rc;
  if (!info) return file_raise(fh, MPI_ERR_ARG, fn, "info is NULL");
  return fh->info != MPI_INFO_NULL ? PMPI_Info_dup(fh->info, info) : PMPI_Info_create(info);
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
                       MPI_Info info) {
  WEFT_ENTRY;
  return set_view("MPI_File_set_view", fh, disp, etype, filetype, datarep, info);
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype, char* datarep) {
  WEFT_ENTRY;
  return get_view(fh, disp, etype, filetype, datarep);
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  WEFT_ENTRY;
  return seek("MPI_File_seek", fh, offset, whence, false);
}

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  WEFT_ENTRY;
  return seek("MPI_File_seek_shared", fh, offset, whence, true);
}

int PMPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_get_position";
  if (int rc = check_file(fh, fn)) return rc;
  if (!offset) return file_raise(fh, MPI_ERR_ARG, fn, "offset is NULL");
  *offset = fh->position;
  return MPI_SUCCESS;
}

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_get_position_shared";
  if (int rc = check_file(fh, fn)) return rc;
  if (!offset) return file_raise(fh, MPI_ERR_ARG, fn, "offset is NULL");
  return shared_fetch_add(fh, fn, 0, offset);
}

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_get_byte_offset";
  if (int rc = check_file(fh, fn)) return rc;
  if (!disp) return file_raise(fh, MPI_ERR_ARG, fn, "disp is NULL");
  if (offset < 0) return file_raise(fh, MPI_ERR_ARG, fn, "negative offset %lld", (long long)offset);
  *disp = byte_offset(*fh, offset);
  return MPI_SUCCESS;
}

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_get_type_extent";
  if (int rc = check_file(fh, fn)) return rc;
  const weft::Datatype* d = datatype == MPI_DATATYPE_NULL ? nullptr : lookup_datatype(datatype);
  if (!d) return file_raise(fh, MPI_ERR_TYPE, fn, "invalid datatype 0x%x", unsigned(datatype));
  if (!extent) return file_raise(fh, MPI_ERR_ARG, fn, "extent is NULL");
  *extent = MPI_Aint(d->extent);
  return MPI_SUCCESS;
}

int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count* extent) {
  WEFT_ENTRY;
  MPI_Aint e = 0;
  const int rc = PMPI_File_get_type_extent(fh, datatype, &e);
  if (rc == MPI_SUCCESS && extent) *extent = MPI_Count(e);
  return rc;
}

int PMPI_File_set_atomicity(MPI_File fh, int flag) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_set_atomicity";
  if (int rc = check_file(fh, fn)) return rc;
  int low = flag ? 1 : 0, high = low;
  PMPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_INT, MPI_MIN, fh->comm);
  PMPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_INT, MPI_MAX, fh->comm);
  if (low != high) return file_raise(fh, MPI_ERR_ARG, fn, "the ranks gave different flags");
  // Atomic mode: each access then holds an fcntl lock over its byte range (access()).
  fh->atomic = flag != 0;
  return MPI_SUCCESS;
}

int PMPI_File_get_atomicity(MPI_File fh, int* flag) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_get_atomicity";
  if (int rc = check_file(fh, fn)) return rc;
  if (!flag) return file_raise(fh, MPI_ERR_ARG, fn, "flag is NULL");
  *flag = fh->atomic ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_File_sync(MPI_File fh) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_sync";
  if (int rc = check_file(fh, fn)) return rc;
  const int mine = fsync(fh->fd) == 0 ? 0 : errno_class(errno);
  const int all = agree(fh->comm, mine);  // collective: the data is on disk on return
  if (all) return file_raise(fh, all, fn, "fsync failed on a rank");
  return MPI_SUCCESS;
}

int PMPI_File_create_errhandler(MPI_File_errhandler_function* function, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  const int rc = create_errhandler("MPI_File_create_errhandler",
                                   reinterpret_cast<MPI_Comm_errhandler_function*>(function), false, errhandler);
  if (rc == MPI_SUCCESS) handle_state().errhandlers[weft::mpi::handle::index_of(*errhandler)]->for_files = true;
  return rc;
}

int PMPI_File_set_errhandler(MPI_File fh, MPI_Errhandler errhandler) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_set_errhandler";
  WEFT_REQUIRE_INIT(fn);
  if (fh && !open_files().count(fh)) return file_raise(MPI_FILE_NULL, MPI_ERR_FILE, fn, "not an open file");
  if (!valid_errhandler(errhandler) ||
      (!predefined_handler(errhandler) && !handle_state().errhandlers[weft::mpi::handle::index_of(errhandler)]->for_files))
    return file_raise(fh, MPI_ERR_ARG, fn, "invalid errhandler 0x%x (a file's is made by MPI_File_create_errhandler)",
                      unsigned(errhandler));
  retain_errhandler(errhandler);
  MPI_Errhandler& slot = fh ? fh->errhandler : default_file_errhandler;
  release_errhandler(slot);
  slot = errhandler;
  return MPI_SUCCESS;
}

int PMPI_File_get_errhandler(MPI_File fh, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_get_errhandler";
  WEFT_REQUIRE_INIT(fn);
  if (fh && !open_files().count(fh)) return file_raise(MPI_FILE_NULL, MPI_ERR_FILE, fn, "not an open file");
  if (!errhandler) return file_raise(fh, MPI_ERR_ARG, fn, "errhandler is NULL");
  *errhandler = fh ? fh->errhandler : default_file_errhandler;
  retain_errhandler(*errhandler);
  return MPI_SUCCESS;
}

int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
  WEFT_ENTRY;
  const char* fn = "MPI_File_call_errhandler";
  WEFT_REQUIRE_INIT(fn);
  if (fh && !open_files().count(fh)) return file_raise(MPI_FILE_NULL, MPI_ERR_FILE, fn, "not an open file");
  const MPI_Errhandler eh = fh ? fh->errhandler : default_file_errhandler;
  if (predefined_handler(eh)) call_errhandler(eh, 0, fh ? fh->path.c_str() : "MPI_FILE_NULL", errorcode);
  else call_user_handler(eh, fh, errorcode);
  return MPI_SUCCESS;
}

// The data access routines, each with an int and a large-count (_c) form.
#define WEFT_FILE_ACCESS_PAIR(name, ptr, writing, has_offset)                                                        \
  int PMPI_File_##name(MPI_File fh, WEFT_FILE_OFFSET_PARAM_##has_offset WEFT_FILE_BUF_##writing buf, int count,     \
                       MPI_Datatype datatype, MPI_Status* status) {                                                  \
    WEFT_ENTRY;                                                                                                      \
    return data_call("MPI_File_" #name, fh, ptr, writing, WEFT_FILE_OFFSET_ARG_##has_offset, buf, count, datatype,   \
                     status);                                                                                        \
  }                                                                                                                  \
  int PMPI_File_##name##_c(MPI_File fh, WEFT_FILE_OFFSET_PARAM_##has_offset WEFT_FILE_BUF_##writing buf,            \
                           MPI_Count count, MPI_Datatype datatype, MPI_Status* status) {                             \
    WEFT_ENTRY;                                                                                                      \
    return data_call("MPI_File_" #name "_c", fh, ptr, writing, WEFT_FILE_OFFSET_ARG_##has_offset, buf, count,        \
                     datatype, status);                                                                              \
  }
#define WEFT_FILE_INONBLOCKING_PAIR(name, ptr, writing, has_offset)                                                  \
  int PMPI_File_##name(MPI_File fh, WEFT_FILE_OFFSET_PARAM_##has_offset WEFT_FILE_BUF_##writing buf, int count,     \
                       MPI_Datatype datatype, MPI_Request* request) {                                                \
    WEFT_ENTRY;                                                                                                      \
    return nonblocking("MPI_File_" #name, fh, ptr, writing, WEFT_FILE_OFFSET_ARG_##has_offset, buf, count, datatype, \
                       request);                                                                                     \
  }                                                                                                                  \
  int PMPI_File_##name##_c(MPI_File fh, WEFT_FILE_OFFSET_PARAM_##has_offset WEFT_FILE_BUF_##writing buf,            \
                           MPI_Count count, MPI_Datatype datatype, MPI_Request* request) {                           \
    WEFT_ENTRY;                                                                                                      \
    return nonblocking("MPI_File_" #name "_c", fh, ptr, writing, WEFT_FILE_OFFSET_ARG_##has_offset, buf, count,      \
                       datatype, request);                                                                           \
  }
#define WEFT_FILE_BEGIN_PAIR(name, ptr, writing, has_offset)                                                         \
  int PMPI_File_##name(MPI_File fh, WEFT_FILE_OFFSET_PARAM_##has_offset WEFT_FILE_BUF_##writing buf, int count,     \
                       MPI_Datatype datatype) {                                                                      \
    WEFT_ENTRY;                                                                                                      \
    return split_begin("MPI_File_" #name, fh, ptr, writing, WEFT_FILE_OFFSET_ARG_##has_offset, buf, count, datatype); \
  }                                                                                                                  \
  int PMPI_File_##name##_c(MPI_File fh, WEFT_FILE_OFFSET_PARAM_##has_offset WEFT_FILE_BUF_##writing buf,            \
                           MPI_Count count, MPI_Datatype datatype) {                                                 \
    WEFT_ENTRY;                                                                                                      \
    return split_begin("MPI_File_" #name "_c", fh, ptr, writing, WEFT_FILE_OFFSET_ARG_##has_offset, buf, count,      \
                       datatype);                                                                                    \
  }
#define WEFT_FILE_END(name, writing)                                                                                 \
  int PMPI_File_##name(MPI_File fh, WEFT_FILE_BUF_##writing, MPI_Status* status) {                                  \
    WEFT_ENTRY;                                                                                                      \
    return split_end("MPI_File_" #name, fh, status);                                                                 \
  }
#define WEFT_FILE_OFFSET_PARAM_1 MPI_Offset offset,
#define WEFT_FILE_OFFSET_PARAM_0
#define WEFT_FILE_OFFSET_ARG_1 offset
#define WEFT_FILE_OFFSET_ARG_0 0
#define WEFT_FILE_BUF_true const void*
#define WEFT_FILE_BUF_false void*

WEFT_FILE_ACCESS_PAIR(read_at, Pointer::explicit_offset, false, 1)
WEFT_FILE_ACCESS_PAIR(read_at_all, Pointer::explicit_offset, false, 1)
WEFT_FILE_ACCESS_PAIR(write_at, Pointer::explicit_offset, true, 1)
WEFT_FILE_ACCESS_PAIR(write_at_all, Pointer::explicit_offset, true, 1)
WEFT_FILE_ACCESS_PAIR(read, Pointer::individual, false, 0)
WEFT_FILE_ACCESS_PAIR(read_all, Pointer::individual, false, 0)
WEFT_FILE_ACCESS_PAIR(write, Pointer::individual, true, 0)
WEFT_FILE_ACCESS_PAIR(write_all, Pointer::individual, true, 0)
WEFT_FILE_ACCESS_PAIR(read_shared, Pointer::shared, false, 0)
WEFT_FILE_ACCESS_PAIR(write_shared, Pointer::shared, true, 0)
WEFT_FILE_ACCESS_PAIR(read_ordered, Pointer::ordered, false, 0)
WEFT_FILE_ACCESS_PAIR(write_ordered, Pointer::ordered, true, 0)
WEFT_FILE_INONBLOCKING_PAIR(iread_at, Pointer::explicit_offset, false, 1)
WEFT_FILE_INONBLOCKING_PAIR(iread_at_all, Pointer::explicit_offset, false, 1)
WEFT_FILE_INONBLOCKING_PAIR(iwrite_at, Pointer::explicit_offset, true, 1)
WEFT_FILE_INONBLOCKING_PAIR(iwrite_at_all, Pointer::explicit_offset, true, 1)
WEFT_FILE_INONBLOCKING_PAIR(iread, Pointer::individual, false, 0)
WEFT_FILE_INONBLOCKING_PAIR(iread_all, Pointer::individual, false, 0)
WEFT_FILE_INONBLOCKING_PAIR(iwrite, Pointer::individual, true, 0)
WEFT_FILE_INONBLOCKING_PAIR(iwrite_all, Pointer::individual, true, 0)
WEFT_FILE_INONBLOCKING_PAIR(iread_shared, Pointer::shared, false, 0)
WEFT_FILE_INONBLOCKING_PAIR(iwrite_shared, Pointer::shared, true, 0)
WEFT_FILE_BEGIN_PAIR(read_at_all_begin, Pointer::explicit_offset, false, 1)
WEFT_FILE_BEGIN_PAIR(write_at_all_begin, Pointer::explicit_offset, true, 1)
WEFT_FILE_BEGIN_PAIR(read_all_begin, Pointer::individual, false, 0)
WEFT_FILE_BEGIN_PAIR(write_all_begin, Pointer::individual, true, 0)
WEFT_FILE_BEGIN_PAIR(read_ordered_begin, Pointer::ordered, false, 0)
WEFT_FILE_BEGIN_PAIR(write_ordered_begin, Pointer::ordered, true, 0)
WEFT_FILE_END(read_at_all_end, false)
WEFT_FILE_END(write_at_all_end, true)
WEFT_FILE_END(read_all_end, false)
WEFT_FILE_END(write_all_end, true)
WEFT_FILE_END(read_ordered_end, false)
WEFT_FILE_END(write_ordered_end, true)

MPI_Fint PMPI_File_c2f(MPI_File fh) {
  WEFT_ENTRY;
  if (fh == MPI_FILE_NULL) return 0;
  auto& ids = fortran_files();
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == fh) return MPI_Fint(i + 1);
  ids.push_back(fh);
  return MPI_Fint(ids.size());
}

MPI_File PMPI_File_f2c(MPI_Fint id) {
  WEFT_ENTRY;
  const auto& ids = fortran_files();
  return id > 0 && size_t(id) <= ids.size() ? ids[size_t(id) - 1] : MPI_FILE_NULL;
}

}  // extern "C"

WEFT_PMPI_ALIASES(File_open, File_close, File_delete, File_set_size, File_preallocate, File_get_size, File_get_group,
                  File_get_amode, File_set_info, File_get_info, File_set_view, File_get_view, File_seek,
                  File_seek_shared, File_get_position, File_get_position_shared, File_get_byte_offset,
                  File_get_type_extent, File_get_type_extent_c, File_set_atomicity, File_get_atomicity, File_sync,
                  File_create_errhandler, File_set_errhandler, File_get_errhandler, File_call_errhandler,
                  File_c2f, File_f2c)
WEFT_PMPI_ALIASES(File_read_at, File_read_at_c, File_read_at_all, File_read_at_all_c, File_write_at, File_write_at_c,
                  File_write_at_all, File_write_at_all_c, File_read, File_read_c, File_read_all, File_read_all_c,
                  File_write, File_write_c, File_write_all, File_write_all_c, File_read_shared, File_read_shared_c,
                  File_write_shared, File_write_shared_c, File_read_ordered, File_read_ordered_c, File_write_ordered,
                  File_write_ordered_c)
WEFT_PMPI_ALIASES(File_iread_at, File_iread_at_c, File_iread_at_all, File_iread_at_all_c, File_iwrite_at,
                  File_iwrite_at_c, File_iwrite_at_all, File_iwrite_at_all_c, File_iread, File_iread_c, File_iread_all,
                  File_iread_all_c, File_iwrite, File_iwrite_c, File_iwrite_all, File_iwrite_all_c, File_iread_shared,
                  File_iread_shared_c, File_iwrite_shared, File_iwrite_shared_c)
WEFT_PMPI_ALIASES(File_read_at_all_begin, File_read_at_all_begin_c, File_write_at_all_begin,
                  File_write_at_all_begin_c, File_read_all_begin, File_read_all_begin_c, File_write_all_begin,
                  File_write_all_begin_c, File_read_ordered_begin, File_read_ordered_begin_c,
                  File_write_ordered_begin, File_write_ordered_begin_c, File_read_at_all_end, File_write_at_all_end,
                  File_read_all_end, File_write_all_end, File_read_ordered_end, File_write_ordered_end)
