// Dynamic windows: MPI_Win_attach registers a region with the transport and rewrites this
// rank's directory of regions (in its control block, which every origin can read); an origin
// looks an address up in the regions it fetched last, and fetches the directory again (with
// RMA gets, or cross-memory attach on this node; no help from the target) only when none
// holds the range. A directory is read
// consistently through its sequence word, odd while the owner rewrites it: the origin reads
// the header, the entries, then the sequence again, and starts over if it changed.
#include <cstring>

#include "control.h"
#include "runtime/log.h"
#include "window.h"

namespace weft::rma {

namespace {
size_t entry_bytes(size_t key_bytes) { return sizeof(ctrl::DirEntry) + ((key_bytes + 7) & ~size_t(7)); }
}  // namespace

Status Window::attach(void* base, size_t size) {
  const uint64_t b = uint64_t(reinterpret_cast<uintptr_t>(base));
  for (const Local& l : attached_) {
    const uint64_t lb = uint64_t(reinterpret_cast<uintptr_t>(l.base));
    if (b < lb + l.size && lb < b + size) {
      set_error_detail("the region overlaps one attached before (MPI_Win_detach it first)");
      return Status::invalid_arg;
    }
  }
  Local l{base, size, {}};
  WEFT_TRY(t_.rma_register(base, size, &l.reg));
  attached_.push_back(std::move(l));
  if (Status s = publish_directory(); s != Status::ok) {
    t_.rma_deregister(&attached_.back().reg);
    attached_.pop_back();
    return s;
  }
  return Status::ok;
}

Status Window::detach(const void* base, bool* found) {
  *found = false;
  for (size_t i = 0; i < attached_.size(); ++i) {
    if (attached_[i].base != base) continue;
    *found = true;
    Local gone = std::move(attached_[i]);
    attached_.erase(attached_.begin() + ptrdiff_t(i));
    // Out of the directory first: no origin fetches the key of deregistered memory.
    Status s = publish_directory();
    t_.rma_deregister(&gone.reg);
    return s;
  }
  return Status::ok;
}

Status Window::publish_directory() {
  size_t used = 0;
  for (const Local& l : attached_) used += entry_bytes(l.reg.rkey.size());
  if (used > ctrl::kDirBytes) {
    const std::string msg = "the window's directory of attached regions is full (" + std::to_string(attached_.size()) +
                            " regions; detach some first)";
    WEFT_ERROR(Subsys::rma, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::no_memory;
  }
  uint64_t* head = ctrl_word(dir_offset());
  char* body = reinterpret_cast<char*>(head) + ctrl::kDirHeader;
  const uint64_t seq = __atomic_load_n(&head[0], __ATOMIC_RELAXED);
  __atomic_store_n(&head[0], seq + 1, __ATOMIC_RELEASE);  // odd: being rewritten
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  size_t at = 0;
  for (const Local& l : attached_) {
    ctrl::DirEntry e{uint64_t(reinterpret_cast<uintptr_t>(l.base)), l.size, uint32_t(l.reg.rkey.size()), 0};
    memcpy(body + at, &e, sizeof e);
    memcpy(body + at + sizeof e, l.reg.rkey.data(), l.reg.rkey.size());
    at += entry_bytes(l.reg.rkey.size());
  }
  head[1] = attached_.size();
  head[2] = used;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&head[0], seq + 2, __ATOMIC_RELEASE);
  return Status::ok;
}

Status Window::fetch_directory(int target) {
  Peer& p = peers_[size_t(target)];
  const uint64_t dir = p.ctrl_addr + dir_offset();
  // A rank of this node is read by cross-memory attach: UCX would emulate the gets on its
  // (unmapped) control block with active messages that wait for the owner's progress.
  // Mapped control blocks (every rank on one node) are read with loads.
  Location at{dir, p.ctrl_rkey, nullptr, dir, dir + ctrl::kDirHeader + ctrl::kDirBytes};
  at.pid = p.cma_pid;
  if (p.ctrl_direct) at.direct = reinterpret_cast<char*>(p.ctrl_direct) + dir_offset();
  std::vector<unsigned char> body;
  for (uint32_t tries = 0, idle = 0;; ++tries) {
    if (tries > 0) t_.progress_engine().pass(&idle);  // the owner is rewriting it
    uint64_t head[4] = {0, 0, 0, 0}, again = 0;
    WEFT_TRY(get(target, at, 0, head, sizeof head));
    if (head[0] & 1) continue;
    if (head[2] > ctrl::kDirBytes) continue;  // a torn read: the sequence check below would fail too
    body.resize(head[2]);
    WEFT_TRY(get(target, at, ctrl::kDirHeader, body.data(), body.size()));
    WEFT_TRY(get(target, at, 0, &again, sizeof again));
    if (again != head[0]) continue;
    std::vector<Region> regions;
    Status s = Status::ok;
    for (size_t off = 0, n = 0; n < head[1] && s == Status::ok; ++n) {
      ctrl::DirEntry e;
      if (off + sizeof e > body.size()) break;
      memcpy(&e, body.data() + off, sizeof e);
      if (off + entry_bytes(e.key_bytes) > body.size()) break;
      Region r{e.base, e.size, nullptr};
      s = t_.rma_unpack(job_ranks_[size_t(target)], body.data() + off + sizeof e, e.key_bytes, &r.rkey);
      if (s == Status::ok) regions.push_back(r);
      off += entry_bytes(e.key_bytes);
    }
    if (s != Status::ok) {
      for (Region& r : regions) Transport::rma_release(r.rkey);
      return s;
    }
    for (Region& r : p.regions) Transport::rma_release(r.rkey);
    p.regions = std::move(regions);
    return Status::ok;
  }
}

}  // namespace weft::rma
