// One-sided access over UCX (Transport::rma_*): memory registration and remote keys (through
// the process's UCX service, runtime/ucx_service.h), put, get, fetching atomics and flush, each
// waited for through the progress engine (a dead peer ends the wait with Status::peer_failed,
// never a hang).
#include <ucp/api/ucp.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "runtime/log.h"
#include "runtime/ucx_service.h"
#include "shm.h"
#include "transport.h"

namespace weft {

namespace {

Status rma_fail(const char* what, ucs_status_t st) {
  std::string msg = std::string(what) + ": " + ucs_status_string(st);
  WEFT_ERROR(Subsys::pt2pt, "%s", msg.c_str());
  set_error_detail(msg);
  return st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT || st == UCS_ERR_UNREACHABLE
             ? Status::peer_failed
             : Status::transport;
}

}  // namespace

Status Transport::rma_register(void* base, size_t bytes, RmaRegistration* out) {
  ucp_mem_h memh = nullptr;
  std::vector<unsigned char> rkey;
  const char* failed = nullptr;
  const ucs_status_t st = ucx_->map(base, bytes, &memh, &rkey, &failed);
  if (st != UCS_OK) return rma_fail(failed, st);
  ++rma_regions_;
  // In shared-memory mode nothing polls the UCX worker for point-to-point; one-sided accesses
  // (from peers too) need it polled while regions exist.
  if (shm_ && !hybrid_ && !rma_poller_) {
    rma_poller_ = true;
    progress_.add_poller(
        [](void* tp) {
          auto* t = static_cast<Transport*>(tp);
          return t->rma_regions_ ? int(ucp_worker_progress(static_cast<ucp_worker_h>(t->worker_))) : 0;
        },
        this);
  }
  out->memh = memh;
  out->rkey = std::move(rkey);
  return Status::ok;
}

void Transport::rma_deregister(RmaRegistration* r) {
  if (r->memh) {
    ucx_->unmap(static_cast<ucp_mem_h>(r->memh));
    --rma_regions_;
  }
  r->memh = nullptr;
  r->rkey.clear();
}

Status Transport::rma_unpack(int peer, const void* packed, size_t len, void** rkey) {
  (void)len;
  void* ep = nullptr;
  WEFT_TRY(endpoint(peer, &ep));
  ucp_rkey_h k = nullptr;
  const ucs_status_t st = UcxService::unpack_rkey(static_cast<ucp_ep_h>(ep), packed, &k);
  if (st != UCS_OK) return rma_fail("ucp_ep_rkey_unpack", st);
  *rkey = k;
  return Status::ok;
}

void Transport::rma_release(void* rkey) {
  UcxService::destroy_rkey(static_cast<ucp_rkey_h>(rkey));
}

// Waits for a UCX operation started on the way to `peer` (-1: any).
Status Transport::rma_wait(void* request, int peer, const char* what) {
  auto sp = static_cast<ucs_status_ptr_t>(request);
  if (sp == nullptr) return Status::ok;
  if (UCS_PTR_IS_ERR(sp)) return rma_fail(what, UCS_PTR_STATUS(sp));
  ucs_status_t st = UCS_INPROGRESS;
  progress_.wait([&] {
    st = ucp_request_check_status(sp);
    if (st != UCS_INPROGRESS) return true;
    boot_.poll_local_liveness();
    return peer >= 0 && boot_.peer_failed(peer);
  });
  ucp_request_free(sp);
  if (st == UCS_INPROGRESS) {
    std::string msg = std::string(what) + " to rank " + std::to_string(peer) + " failed: the rank has terminated";
    WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::peer_failed;
  }
  return st == UCS_OK ? Status::ok : rma_fail(what, st);
}

// Put and get: issue(ep, rkey, param) starts the transfer on the endpoint to `peer`.
template <class Issue>
Status Transport::rma_transfer(int peer, size_t bytes, void* rkey, const char* what, Issue issue) {
  void* ep = nullptr;
  if (bytes == 0) return Status::ok;
  WEFT_TRY(endpoint(peer, &ep));
  ucp_request_param_t p{};
  return rma_wait(issue(static_cast<ucp_ep_h>(ep), static_cast<ucp_rkey_h>(rkey), &p), peer, what);
}

Status Transport::rma_put(int peer, const void* buf, size_t bytes, uint64_t remote, void* rkey) {
  return rma_transfer(peer, bytes, rkey, "put", [&](ucp_ep_h ep, ucp_rkey_h k, const ucp_request_param_t* p) {
    return ucp_put_nbx(ep, buf, bytes, remote, k, p);
  });
}

Status Transport::rma_get(int peer, void* buf, size_t bytes, uint64_t remote, void* rkey) {
  return rma_transfer(peer, bytes, rkey, "get", [&](ucp_ep_h ep, ucp_rkey_h k, const ucp_request_param_t* p) {
    return ucp_get_nbx(ep, buf, bytes, remote, k, p);
  });
}

Status Transport::rma_atomic(int peer, RmaAtomic op, const void* value, void* result, size_t size, uint64_t remote,
                             void* rkey) {
  if (size != 4 && size != 8) {
    set_error_detail("one-sided atomics work on 4- and 8-byte words");
    return Status::not_supported;
  }
  void* ep = nullptr;
  WEFT_TRY(endpoint(peer, &ep));
  ucp_atomic_op_t uop = UCP_ATOMIC_OP_ADD;
  switch (op) {
    case RmaAtomic::add: uop = UCP_ATOMIC_OP_ADD; break;
    case RmaAtomic::band: uop = UCP_ATOMIC_OP_AND; break;
    case RmaAtomic::bor: uop = UCP_ATOMIC_OP_OR; break;
    case RmaAtomic::bxor: uop = UCP_ATOMIC_OP_XOR; break;
    case RmaAtomic::swap: uop = UCP_ATOMIC_OP_SWAP; break;
    case RmaAtomic::cswap: uop = UCP_ATOMIC_OP_CSWAP; break;
  }
  ucp_request_param_t p;
  p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
  p.datatype = ucp_dt_make_contig(size);
  p.reply_buffer = result;
  // UCX's compare-and-swap takes the compare value as the operand and the value to swap in
  // through the reply buffer (which then receives the old value).
  uint64_t compare = 0;
  if (op == RmaAtomic::cswap) {
    memcpy(&compare, result, size);
    memcpy(result, value, size);
    value = &compare;
  }
  ucs_status_ptr_t sp =
      ucp_atomic_op_nbx(static_cast<ucp_ep_h>(ep), uop, value, 1, remote, static_cast<ucp_rkey_h>(rkey), &p);
  return rma_wait(sp, peer, "atomic");
}

Status Transport::rma_flush(int peer) {
  ucp_request_param_t p{};
  if (peer < 0) return rma_wait(ucp_worker_flush_nbx(static_cast<ucp_worker_h>(worker_), &p), -1, "flush");
  void* ep = nullptr;
  WEFT_TRY(endpoint(peer, &ep));
  return rma_wait(ucp_ep_flush_nbx(static_cast<ucp_ep_h>(ep), &p), peer, "flush");
}

}  // namespace weft
