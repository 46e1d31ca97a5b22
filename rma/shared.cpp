// Shared window memory: a POSIX shared-memory segment, reserved whole at creation.
#include "shared.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>

#include "pmix/bootstrap.h"
#include "runtime/log.h"

namespace weft::rma {

namespace {
Status shared_fail(const std::string& msg, Status kind = Status::transport) {
  WEFT_ERROR(Subsys::rma, "%s", msg.c_str());
  set_error_detail(msg);
  return kind;
}
size_t map_bytes(size_t bytes) { return bytes ? bytes : 1; }
}  // namespace

Status SharedSegment::create(Bootstrap& boot, size_t bytes, std::unique_ptr<SharedSegment>* out) {
  std::random_device rd;
  char rest[48];
  snprintf(rest, sizeof rest, "%d-%08x", int(getpid()), unsigned(rd()));
  const std::string named = boot.shm_name("win", rest);
  const char* name = named.c_str();
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return shared_fail(std::string("shm_open ") + name + ": " + strerror(errno));
  // Reserve the pages now: a tmpfs that runs out later would kill a rank with SIGBUS instead.
  if (int err = posix_fallocate(fd, 0, off_t(map_bytes(bytes))); err != 0) {
    close(fd);
    shm_unlink(name);
    return shared_fail("cannot reserve " + std::to_string(bytes) + " bytes in /dev/shm for a shared window: " +
                           strerror(err),
                       Status::no_memory);
  }
  void* p = mmap(nullptr, map_bytes(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name);
    return shared_fail(std::string("mmap of a shared window: ") + strerror(errno));
  }
  std::unique_ptr<SharedSegment> s(new SharedSegment(boot));
  s->name_ = name;
  s->data_ = static_cast<char*>(p);
  s->bytes_ = bytes;
  s->owner_ = true;
  s->tracked_ = true;
  boot.track_shm(s->name_, true);
  *out = std::move(s);
  return Status::ok;
}

Status SharedSegment::open(Bootstrap& boot, const std::string& name, size_t bytes, std::unique_ptr<SharedSegment>* out) {
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return shared_fail("shm_open " + name + " (a shared window): " + strerror(errno));
  void* p = mmap(nullptr, map_bytes(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return shared_fail("mmap of shared window " + name + ": " + strerror(errno));
  std::unique_ptr<SharedSegment> s(new SharedSegment(boot));
  s->name_ = name;
  s->data_ = static_cast<char*>(p);
  s->bytes_ = bytes;
  s->tracked_ = true;
  boot.track_shm(s->name_, false);
  *out = std::move(s);
  return Status::ok;
}

void SharedSegment::unlink() {
  if (owner_) shm_unlink(name_.c_str());
  if (tracked_) boot_.untrack_shm(name_);
  owner_ = tracked_ = false;
}

SharedSegment::~SharedSegment() {
  if (data_) munmap(data_, map_bytes(bytes_));
  unlink();
}

}  // namespace weft::rma
