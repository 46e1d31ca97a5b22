// Shared window memory: a shared-memory segment (runtime/shm_segment.h), reserved whole at
// creation.
#include "shared.h"

#include <unistd.h>

#include "pmix/bootstrap.h"
#include "pt2pt/shm.h"
#include "runtime/shm_segment.h"

namespace weft::rma {

namespace {
constexpr ShmUse kWindowUse{Subsys::rma, "a shared window", nullptr, Status::no_memory};
}  // namespace

SharedSegment::SharedSegment(Bootstrap& boot) : job_(std::make_unique<BootstrapShmJob>(boot)) {}

Status SharedSegment::create(Bootstrap& boot, size_t bytes, std::unique_ptr<SharedSegment>* out) {
  std::unique_ptr<SharedSegment> s(new SharedSegment(boot));
  s->file_ = std::make_unique<ShmSegment>(*s->job_, s->job_->unique_name("win", long(getpid())), true, kWindowUse);
  WEFT_TRY(s->file_->create(bytes));
  s->owner_ = true;
  *out = std::move(s);
  return Status::ok;
}

Status SharedSegment::open(Bootstrap& boot, const std::string& name, size_t bytes, std::unique_ptr<SharedSegment>* out) {
  std::unique_ptr<SharedSegment> s(new SharedSegment(boot));
  s->file_ = std::make_unique<ShmSegment>(*s->job_, name, false, kWindowUse);
  WEFT_TRY(s->file_->attach(bytes));
  *out = std::move(s);
  return Status::ok;
}

void SharedSegment::unlink() {
  if (owner_) file_->unlink();
  else file_->forget();
}

SharedSegment::~SharedSegment() { unlink(); }

char* SharedSegment::data() const { return file_->data(); }
const std::string& SharedSegment::name() const { return file_->name(); }

}  // namespace weft::rma
