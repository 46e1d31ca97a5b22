// Pipelined device staging through real UCX, without a GPU: the transport's generic datatype
// (pt2pt/device_datatype.h) and the staging pool (runtime/device_staging.h) carry
// messages between two UCX workers of this process, with staging sets from a host backend
// ("device memory" is host memory; copies are memcpy run only when the pipeline waits for
// them, as a stream would run them). Every combination the transport makes: staged -> staged,
// staged -> plain and plain -> staged, eager and rendezvous sizes, posted before and after the
// message arrived, synchronous sends, wildcard tags, probe + matched receive, truncation,
// cancel, and copy failures that must fail the request without breaking UCX.
#include <gtest/gtest.h>
#include <ucp/api/ucp.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "deferred_copies.h"
#include "pt2pt/device_datatype.h"
#include "runtime/device_staging.h"
#include "runtime/device_staging_backend.h"
#include "runtime/request.h"

namespace weft {
namespace {

constexpr size_t kChunk = 4096;

// ------------------------------------------------------------------ host backend

// Failure injection: the copy to host (sender) or to device (receiver) numbered g_fail_at
// (0-based, counted over all sets) fails; -1: none.
int g_fail_to_host_at = -1, g_fail_to_device_at = -1;
int g_to_host = 0, g_to_device = 0;
uint64_t g_direct = 0;  // out-of-sequence copies, for the log

class HostStagingSet final : public StagingSet {
 public:
  explicit HostStagingSet(size_t n) : a_(n, 0xa5), b_(n, 0x5a) {
    chunk[0] = a_.data();
    chunk[1] = b_.data();
  }
  Status start_to_host(int slot, void* host, const void* dev, size_t n) override {
    if (g_to_host++ == g_fail_to_host_at) return fail();
    return start(slot, host, dev, n);
  }
  Status start_to_device(int slot, void* dev, const void* host, size_t n) override {
    if (g_to_device++ == g_fail_to_device_at) return fail();
    return start(slot, dev, host, n);
  }
  Status wait(int slot) override {
    copies_.wait(slot);
    return Status::ok;
  }
  Status copy_now(void* dst, const void* src, size_t n) override {
    ++g_direct;
    copies_.copy_now(dst, src, n);
    return Status::ok;
  }

 private:
  Status fail() {
    error_detail = "injected copy failure";
    return Status::internal;
  }
  Status start(int slot, void* dst, const void* src, size_t n) {
    copies_.start(slot, dst, src, n);
    return Status::ok;
  }
  std::vector<unsigned char> a_, b_;
  test::DeferredCopies copies_;
};

bool host_usable(const char**) { return true; }
int host_device() { return 0; }
Status host_make(size_t chunk_bytes, int, std::unique_ptr<StagingSet>* out) {
  *out = std::make_unique<HostStagingSet>(chunk_bytes);
  return Status::ok;
}
const StagingBackend kHost{host_usable, host_device, host_make};

// ------------------------------------------------------------------ UCX, two workers

void send_cb(void* req, ucs_status_t st, void* user) {
  auto* r = static_cast<Request*>(user);
  ucp_request_free(req);
  r->status.cancelled = st == UCS_ERR_CANCELED;
  r->status.error = st == UCS_OK || st == UCS_ERR_CANCELED ? Status::ok : Status::transport;
  end_device_staging(r);
  r->complete = true;
}

void recv_cb(void* req, ucs_status_t st, const ucp_tag_recv_info_t* info, void* user) {
  auto* r = static_cast<Request*>(user);
  if (st == UCS_OK) r->status.bytes = info->length, r->status.tag = int(info->sender_tag);
  ucp_request_free(req);
  r->status.cancelled = st == UCS_ERR_CANCELED;
  r->status.error = st == UCS_OK || st == UCS_ERR_CANCELED ? Status::ok
                    : st == UCS_ERR_MESSAGE_TRUNCATED   ? Status::truncated
                                                        : Status::transport;
  end_device_staging(r);
  r->complete = true;
}

class StagingOverUcx : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    device_staging_configure(kChunk);
    device_staging_set_backend(&kHost);
    g_fail_to_host_at = g_fail_to_device_at = -1;
    ucp_config_t* config = nullptr;
    ASSERT_EQ(ucp_config_read(nullptr, nullptr, &config), UCS_OK);
    if (std::string(GetParam()) == "tcp") {  // as between (virtual) nodes
      (void)ucp_config_modify(config, "TLS", "tcp");
      (void)ucp_config_modify(config, "NET_DEVICES", "lo");
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG;
    const ucs_status_t st = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    ASSERT_EQ(st, UCS_OK);
    for (ucp_worker_h& w : workers_) {
      ucp_worker_params_t wp{};
      wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
      wp.thread_mode = UCS_THREAD_MODE_SINGLE;
      ASSERT_EQ(ucp_worker_create(context_, &wp, &w), UCS_OK);
    }
    ucp_address_t* addr = nullptr;
    size_t len = 0;
    ASSERT_EQ(ucp_worker_get_address(workers_[1], &addr, &len), UCS_OK);
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address = addr;
    ASSERT_EQ(ucp_ep_create(workers_[0], &ep, &ep_), UCS_OK);
    ucp_worker_release_address(workers_[1], addr);
    ASSERT_EQ(device_datatype_create(&dt_), UCS_OK);
  }

  void TearDown() override {
    if (ep_) {
      ucp_request_param_t p{};
      p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      p.flags = UCP_EP_CLOSE_FLAG_FORCE;
      ucs_status_ptr_t req = ucp_ep_close_nbx(ep_, &p);
      if (UCS_PTR_IS_PTR(req)) {
        while (ucp_request_check_status(req) == UCS_INPROGRESS) progress();
        ucp_request_free(req);
      }
    }
    if (dt_) ucp_dt_destroy(dt_);
    for (ucp_worker_h w : workers_)
      if (w) ucp_worker_destroy(w);
    if (context_) ucp_cleanup(context_);
    EXPECT_EQ(device_staging_stats().in_use, 0u) << "a staging set was not given back";
    device_staging_set_backend(nullptr);
    device_staging_configure(0);
  }

  void progress() {
    ucp_worker_progress(workers_[0]);
    ucp_worker_progress(workers_[1]);
  }
  void wait(Request* a, Request* b = nullptr) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!(a->complete && (!b || b->complete))) {
      progress();
      ASSERT_LT(std::chrono::steady_clock::now(), until) << "timed out";
    }
  }

  // Sends n bytes of `data`, staged (as from device memory) or plain.
  void send(Request* r, const std::vector<unsigned char>& data, size_t n, bool staged, uint64_t tag, bool sync = false) {
    r->complete = false;
    r->status = RequestStatus{};
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = send_cb;
    p.user_data = r;
    const void* buf = data.data();
    if (staged) {
      DeviceStaging* s = nullptr;
      ASSERT_EQ(device_staging_begin_send(data.data(), n, &s), Status::ok);
      r->device_staging = s;
      p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
      p.datatype = dt_;
      buf = s;
    }
    ucs_status_ptr_t sp = sync ? ucp_tag_send_sync_nbx(ep_, buf, n, tag, &p) : ucp_tag_send_nbx(ep_, buf, n, tag, &p);
    ASSERT_FALSE(UCS_PTR_IS_ERR(sp)) << ucs_status_string(UCS_PTR_STATUS(sp));
    if (sp == nullptr) {  // done at once: no callback
      end_device_staging(r);
      r->complete = true;
    }
  }

  // Receives into `into` (capacity bytes), staged (as into device memory) or plain; message:
  // a handle from a probe, or null to match tag/mask.
  void recv(Request* r, std::vector<unsigned char>& into, size_t capacity, bool staged, uint64_t tag, uint64_t mask,
            ucp_tag_message_h message = nullptr) {
    r->complete = false;
    r->status = RequestStatus{};
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    p.cb.recv = recv_cb;
    p.user_data = r;
    void* buf = into.data();
    if (staged) {
      DeviceStaging* s = nullptr;
      ASSERT_EQ(device_staging_begin_recv(into.data(), capacity, &s), Status::ok);
      r->device_staging = s;
      p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
      p.datatype = dt_;
      buf = s;
    }
    ucs_status_ptr_t sp = message ? ucp_tag_msg_recv_nbx(workers_[1], buf, capacity, message, &p)
                                  : ucp_tag_recv_nbx(workers_[1], buf, capacity, tag, mask, &p);
    ASSERT_FALSE(UCS_PTR_IS_ERR(sp)) << ucs_status_string(UCS_PTR_STATUS(sp));
    handle_ = sp;
  }

  ucp_context_h context_ = nullptr;
  ucp_worker_h workers_[2] = {nullptr, nullptr};
  ucp_ep_h ep_ = nullptr;
  ucp_datatype_t dt_ = 0;
  void* handle_ = nullptr;  // the last receive's UCX request (for cancel)
};

std::vector<unsigned char> pattern(size_t n, uint32_t seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (unsigned char)((i * 131u) ^ (i >> 7) ^ (seed * 29u) ^ (i >> 15));
  return v;
}

void expect_bytes(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want, size_t n,
                  const std::string& what) {
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      ADD_FAILURE() << what << ": byte " << i << " of " << n << " is " << int(got[i]) << ", expected " << int(want[i]);
      return;
    }
}

const size_t kSizes[] = {1, kChunk - 1, kChunk, kChunk + 1, kChunk * 7 / 2, (1u << 20) + 3, 8u << 20};

TEST_P(StagingOverUcx, EveryCombinationAndSize) {
  uint64_t tag = 1;
  for (size_t n : kSizes)
    for (int combo = 0; combo < 3; ++combo)  // staged -> staged, staged -> plain, plain -> staged
      for (int late = 0; late < 2; ++late, ++tag) {
        const bool staged_send = combo != 2, staged_recv = combo != 1;
        const auto data = pattern(n, uint32_t(tag));
        std::vector<unsigned char> into(n + 16, 0x77);
        Request s, r;
        const std::string what = "n=" + std::to_string(n) + " combo=" + std::to_string(combo) + " late=" + std::to_string(late);
        if (!late) recv(&r, into, n, staged_recv, tag, ~0ull);
        send(&s, data, n, staged_send, tag);
        if (late) {  // the message (or its announcement) is there before the receive
          for (int i = 0; i < 200; ++i) progress();
          recv(&r, into, n, staged_recv, tag, ~0ull);
        }
        wait(&s, &r);
        EXPECT_EQ(s.status.error, Status::ok) << what;
        EXPECT_EQ(r.status.error, Status::ok) << what;
        EXPECT_EQ(r.status.bytes, n) << what;
        expect_bytes(into, data, n, what);
        for (size_t i = n; i < n + 16; ++i) ASSERT_EQ(into[i], 0x77) << what << ": wrote past the buffer";
      }
  std::cout << "[ info ] " << GetParam() << ": " << g_direct << " out-of-sequence copies so far, "
            << device_staging_stats().sets_made << " staging sets made\n";
}

TEST_P(StagingOverUcx, SynchronousSendAndWildcardTag) {
  for (size_t n : {kChunk + 1, size_t(1u << 20)}) {
    const auto data = pattern(n, 3);
    std::vector<unsigned char> into(n, 0);
    Request s, r;
    recv(&r, into, n, true, 0, 0);  // any tag
    send(&s, data, n, true, 42, true);
    wait(&s, &r);
    EXPECT_EQ(r.status.error, Status::ok);
    EXPECT_EQ(r.status.tag, 42);
    expect_bytes(into, data, n, "ssend n=" + std::to_string(n));
  }
}

TEST_P(StagingOverUcx, ProbeThenMatchedReceive) {
  for (size_t n : {size_t(100), kChunk * 3, size_t(2u << 20)}) {
    const auto data = pattern(n, 5);
    std::vector<unsigned char> into(n, 0);
    Request s, r;
    send(&s, data, n, true, 7);
    ucp_tag_message_h msg = nullptr;
    ucp_tag_recv_info_t info;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!(msg = ucp_tag_probe_nb(workers_[1], 7, ~0ull, 1, &info))) {
      progress();
      ASSERT_LT(std::chrono::steady_clock::now(), until);
    }
    EXPECT_EQ(info.length, n);
    recv(&r, into, n, true, 0, 0, msg);
    wait(&s, &r);
    EXPECT_EQ(r.status.error, Status::ok);
    expect_bytes(into, data, n, "mrecv n=" + std::to_string(n));
  }
}

TEST_P(StagingOverUcx, TruncationThenTheNextMessage) {
  for (size_t n : {kChunk + 1, size_t(1u << 20)}) {
    const auto data = pattern(n, 8), next = pattern(kChunk, 9);
    std::vector<unsigned char> into(n, 0);
    Request s, r;
    recv(&r, into, kChunk, true, 11, ~0ull);
    send(&s, data, n, true, 11);
    wait(&r);
    EXPECT_EQ(r.status.error, Status::truncated) << "n=" << n;
    wait(&s);
    recv(&r, into, kChunk, true, 12, ~0ull);
    send(&s, next, kChunk, true, 12);
    wait(&s, &r);
    EXPECT_EQ(r.status.error, Status::ok);
    expect_bytes(into, next, kChunk, "after truncation");
  }
}

TEST_P(StagingOverUcx, CancelGivesTheSetBack) {
  std::vector<unsigned char> into(kChunk * 4, 0);
  Request r;
  recv(&r, into, into.size(), true, 99, ~0ull);
  EXPECT_EQ(device_staging_stats().in_use, 1u);
  ucp_request_cancel(workers_[1], handle_);
  wait(&r);
  EXPECT_TRUE(r.status.cancelled);
  EXPECT_EQ(r.device_staging, nullptr);
  EXPECT_EQ(device_staging_stats().in_use, 0u);
}

TEST_P(StagingOverUcx, CopyFailureFailsTheRequest) {
  // A copy fails on the sender, then on the receiver: the request completes with the error,
  // UCX carries on, and the next message is whole.
  const size_t n = kChunk * 5 + 17;
  const auto data = pattern(n, 10);
  for (int side = 0; side < 2; ++side) {
    std::vector<unsigned char> into(n, 0);
    Request s, r;
    g_to_host = g_to_device = 0;
    (side == 0 ? g_fail_to_host_at : g_fail_to_device_at) = 2;
    recv(&r, into, n, true, 20, ~0ull);
    send(&s, data, n, true, 20);
    wait(&s, &r);
    g_fail_to_host_at = g_fail_to_device_at = -1;
    EXPECT_EQ((side == 0 ? s : r).status.error, Status::internal) << "side " << side;
    recv(&r, into, n, true, 21, ~0ull);
    send(&s, data, n, true, 21);
    wait(&s, &r);
    EXPECT_EQ(s.status.error, Status::ok);
    EXPECT_EQ(r.status.error, Status::ok);
    expect_bytes(into, data, n, "after a failure");
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, StagingOverUcx, ::testing::Values("tcp", "default"));

}  // namespace
}  // namespace weft
