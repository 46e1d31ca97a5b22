#include "shm_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>

namespace weft {

namespace {
// mmap takes no empty mapping: an empty segment (a shared window of no bytes) maps one byte.
size_t map_length(size_t bytes) { return std::max<size_t>(bytes, 1); }
}  // namespace

std::string ShmJob::unique_name(std::string_view kind, long maker) const {
  std::random_device rd;
  char rest[48];
  snprintf(rest, sizeof rest, "%ld-%08x", maker, unsigned(rd()));
  return name(kind, rest);
}

ShmSegment::ShmSegment(ShmJob& job, std::string name, bool creator, const ShmUse& use)
    : job_(job), name_(std::move(name)), use_(use) {
  job_.track(name_, creator);
}

ShmSegment::~ShmSegment() {
  if (data_) munmap(data_, map_length(bytes_));
}

Status ShmSegment::fail(const std::string& msg, Status kind) const {
  WEFT_ERROR(use_.subsys, "%s", msg.c_str());
  set_error_detail(msg);
  return kind;
}

Status ShmSegment::map(int fd, size_t bytes) {
  void* p = mmap(nullptr, map_length(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) return fail("mmap of " + name_ + " (" + use_.what + "): " + strerror(err));
  data_ = static_cast<char*>(p);
  bytes_ = bytes;
  return Status::ok;
}

Status ShmSegment::create(size_t bytes, bool replace_stale) {
  const char* name = name_.c_str();
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0 && errno == EEXIST && replace_stale) {
    shm_unlink(name);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  }
  if (fd < 0) {
    const int err = errno;
    forget();
    return fail("shm_open " + name_ + " (" + use_.what + "): " + strerror(err));
  }
  if (int err = posix_fallocate(fd, 0, off_t(map_length(bytes))); err != 0) {
    close(fd);
    unlink();
    std::string msg = "cannot reserve " + std::to_string(bytes) + " bytes in /dev/shm for " + use_.what + ": " +
                      strerror(err);
    if (use_.hint) msg += std::string(" (") + use_.hint + ")";
    return fail(msg, use_.when_full);
  }
  Status mapped = map(fd, bytes);
  if (mapped != Status::ok) unlink();
  return mapped;
}

Status ShmSegment::attach(size_t bytes, bool may_wait) {
  int fd = shm_open(name_.c_str(), O_RDWR, 0);
  if (fd < 0) {
    if (may_wait && errno == ENOENT) return Status::pending;
    return fail("shm_open " + name_ + " (" + use_.what + "): " + strerror(errno));
  }
  struct stat st {};
  if (may_wait && (fstat(fd, &st) != 0 || size_t(st.st_size) < bytes)) {  // its maker is still at work
    close(fd);
    return Status::pending;
  }
  return map(fd, bytes);
}

void ShmSegment::unlink() {
  if (!tracked_) return;
  shm_unlink(name_.c_str());
  forget();
}

void ShmSegment::forget() {
  if (tracked_) job_.untrack(name_);
  tracked_ = false;
}

}  // namespace weft
